// SPDX-License-Identifier: Apache-2.0
// "remote://host:port[?key=value&...]": where a remote device is and how long to wait for it.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

namespace tpuemu {

struct RemoteAddress {
  std::string name;  // the whole backend string, as the user gave it
  std::string host;  // "127.0.0.1", "lab-board-3", "::1" (written [::1] in the name)
  std::string port;
  // Connecting, retried while the server refuses (it may be starting): at most this long.
  std::chrono::milliseconds connect_timeout{10'000};
  // Every request but RUN: its answer must arrive within this (HELLO includes the server's wait
  // for a free device).
  std::chrono::milliseconds timeout{60'000};
  // RUN: as long as the simulated program may take; 0 waits without limit.
  std::chrono::milliseconds run_timeout{3'600'000};
};

// Throws Error "device: remote://...: <cause>" for a malformed address or an unknown option.
RemoteAddress parse_remote_address(std::string_view backend);

}  // namespace tpuemu
