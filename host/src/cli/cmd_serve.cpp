// SPDX-License-Identifier: Apache-2.0
// tpuemu serve: devices of one preset behind a TCP port (docs/remote.md), until SIGINT/SIGTERM.
// A log line per session goes to stderr (JSON with --json).
#include <chrono>
#include <cstdio>
#include <string>

#include <fmt/format.h>

#include "commands.h"
#include "progress.h"
#include "tpuemu/config/config.h"
#include "tpuemu/serve/server.h"

namespace tpuemu::cli {

namespace {

struct ServeArgs {
  CommonOptions common;
  std::string listen = "127.0.0.1:7000";
  std::string preset = "default";
  std::string backend = "rtl";
  bool no_build = false;  // rtl backend: refuse a preset whose core is not built yet
  std::size_t devices = 1;
  double hello_timeout = 5, idle_timeout = 300, request_timeout = 10, queue_timeout = 30;
  std::uint32_t max_in_flight = 8;
};

std::chrono::milliseconds ms(double seconds) { return std::chrono::milliseconds(static_cast<long long>(seconds * 1000)); }

int run_serve(const ServeArgs& a) {
  ServerOptions o;
  o.listen = a.listen;
  o.backend = a.backend;
  o.device.build_missing_core = !a.no_build;
  o.device.preset_argument = a.preset;
  // A core built on first use, before the server listens, stops on Ctrl-C too.
  const InterruptGuard interrupt;
  o.device.stop = StopToken([&interrupt] { return interrupt.interrupted(); });
  o.devices = a.devices;
  o.hello_timeout = ms(a.hello_timeout);
  o.idle_timeout = ms(a.idle_timeout);
  o.request_timeout = ms(a.request_timeout);
  o.queue_timeout = ms(a.queue_timeout);
  o.max_in_flight = a.max_in_flight;
  o.stop_on_signals = true;
  if (!a.common.quiet) {
    o.log = [json = a.common.json](const std::string& text, const nlohmann::json& fields) {
      std::fputs(((json ? fields.dump() : text) + "\n").c_str(), stderr);
      std::fflush(stderr);
    };
  }
  Server server(load_preset(a.preset), std::move(o));
  server.run();
  return 0;
}

}  // namespace

Subcommand add_serve_command(CLI::App& app) {
  auto a = std::make_shared<ServeArgs>();
  auto* cmd = app.add_subcommand("serve", "Serve devices over TCP for remote://host:port clients (docs/remote.md)");
  cmd->add_option("--listen", a->listen, "ADDRESS:PORT to listen on (port 0: any free port, printed at start)");
  cmd->add_option("--preset", a->preset, "Hardware preset of every device");
  cmd->add_option("--backend", a->backend, "In-process backend that simulates each device: rtl, tlm, tlm-at, tlm-cycle, fake");
  cmd->add_flag("--no-build", a->no_build,
                "rtl backend: a preset whose core is neither compiled in nor in the core cache is refused, naming the "
                "`tpuemu core build` command, instead of built first (docs/core-cache.md)");
  cmd->add_option("--devices", a->devices, "Devices in the pool: sessions served at once")->check(unsigned_in(1, 256));
  cmd->add_option("--hello-timeout", a->hello_timeout,
                  "Seconds a new connection has to send a valid HELLO (it holds no device before) before it is closed")
      ->check(finite_in(0.001, 1e6));
  cmd->add_option("--idle-timeout", a->idle_timeout, "Seconds a session may send nothing before it is closed")
      ->check(finite_in(0.001, 1e6));
  cmd->add_option("--request-timeout", a->request_timeout,
                  "Seconds a started frame may take to arrive (and an answer to be taken) before the connection is dropped")
      ->check(finite_in(0.001, 1e6));
  cmd->add_option("--queue-timeout", a->queue_timeout,
                  "Seconds a client waits for a free device before it is refused with BUSY")
      ->check(finite_in(0.0, 1e6));
  cmd->add_option("--max-in-flight", a->max_in_flight, "Requests a client may pipeline (advertised in HELLO)")
      ->check(unsigned_in(1, 64));
  cmd->add_flag("--json", a->common.json, "Log lines as JSON objects, one per line (event, session, client, device, ...)");
  cmd->add_flag("-q,--quiet", a->common.quiet, "No log lines (errors still go to stderr)");
  return {cmd, [a] { return run_serve(*a); }, &a->common};
}

}  // namespace tpuemu::cli
