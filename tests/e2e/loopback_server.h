// SPDX-License-Identifier: Apache-2.0
// A `tpuemu serve` in the test process: the server on 127.0.0.1 at a free port, run on its own
// thread, stopped and joined on destruction. backend() is the remote:// name to open it by.
#pragma once

#include <string>
#include <thread>
#include <utility>

#include "tpuemu/config/config.h"
#include "tpuemu/serve/server.h"

namespace tpuemu::testing_support {

inline ServerOptions loopback_options(ServerOptions o = {}) {
  o.listen = "127.0.0.1:0";
  return o;
}

class LoopbackServer {
 public:
  explicit LoopbackServer(const std::string& preset, ServerOptions options = {})
      : server_(load_preset(preset), loopback_options(std::move(options))), thread_([this] { server_.run(); }) {}
  ~LoopbackServer() {
    server_.stop();
    thread_.join();
  }
  LoopbackServer(const LoopbackServer&) = delete;
  LoopbackServer& operator=(const LoopbackServer&) = delete;

  std::string backend() const { return "remote://" + server_.endpoint(); }
  Server& server() { return server_; }

 private:
  Server server_;
  std::thread thread_;
};

}  // namespace tpuemu::testing_support
