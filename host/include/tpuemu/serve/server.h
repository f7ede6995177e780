// SPDX-License-Identifier: Apache-2.0
// Layer serve: `tpuemu serve`, a pool of devices behind one TCP port (docs/remote.md).
//
// An asynchronous Boost.Asio server. Each device is an in-process backend's firmware (rtl, fake)
// with its own thread; a client holds one device for its session, freshly opened when the session
// starts and closed when it ends, so every session sees a device in its power-on state. A
// connection gets a device only after a valid HELLO (protocol version, preset digest): one that
// never speaks holds none and is closed after hello_timeout. The server frames the byte stream as
// docs/protocol.md 1 says, answers the session commands (HELLO, PRESET, MEM_STATS, TIMELINE_*)
// itself and forwards every other frame to the firmware unchanged.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "tpuemu/config/config.h"
#include "tpuemu/device/device.h"

namespace tpuemu {

struct ServerOptions {
  std::string listen = "127.0.0.1:7000";  // address:port to bind; port 0 picks a free one
  std::string backend = "rtl";            // any in-process backend of the registry
  std::size_t devices = 1;                // the pool: sessions served at once
  DeviceOptions device;                   // for every device the server opens
  // A connection must have sent a valid HELLO within this of connecting (it holds no device
  // before), else it is closed.
  std::chrono::milliseconds hello_timeout{5'000};
  // A session that sends nothing for this long is closed.
  std::chrono::milliseconds idle_timeout{300'000};
  // A frame, once its first byte arrived, must be complete within this; an answer must be taken
  // by the client within this. Otherwise the connection is dropped (slow or stuck client).
  std::chrono::milliseconds request_timeout{10'000};
  // A client whose HELLO arrives while every device is held waits this long for one (first come,
  // first served); then its HELLO is answered BUSY (detail0 = devices) and the connection closed.
  std::chrono::milliseconds queue_timeout{30'000};
  // Requests a client may send ahead of their answers (advertised in HELLO).
  std::uint32_t max_in_flight = 8;
  // SIGINT / SIGTERM stop the server gracefully (run() returns).
  bool stop_on_signals = false;
  // Receives one line per session and per server event, as text and as fields ("event":
  // "listening", "hello", "session", "error", "stopping", "stopped"); called from one thread at a
  // time. Empty: silent.
  std::function<void(const std::string& text, const nlohmann::json& fields)> log;
};

struct ServerCounters {
  std::uint64_t sessions = 0;  // sessions that held a device
  std::uint64_t refused = 0;   // HELLOs refused: no device within queue_timeout, or another preset
  std::uint64_t frames = 0;    // requests answered
  std::uint64_t bytes_in = 0, bytes_out = 0;
};

class Server {
 public:
  // Binds the listening socket and checks that the backend can serve this preset (an in-process
  // backend, a core this build has compiled); throws Error otherwise. Devices are opened per
  // session, not here.
  Server(Preset preset, ServerOptions options);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // The bound address, "127.0.0.1:43517" (port 0 resolved).
  std::string endpoint() const;
  std::uint16_t port() const;
  // Serves until stop() or a signal: stops accepting, answers the requests in flight, closes every
  // connection between frames (never in the middle of an answer), then returns.
  void run();
  // Thread-safe; run() returns once the sessions have ended.
  void stop();
  ServerCounters counters() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tpuemu
