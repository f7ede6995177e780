// SPDX-License-Identifier: Apache-2.0
// What `remote://` costs over the in-process backend (docs/remote.md): the demo model
// (examples/mlp.json on `default`, what scripts/demo.sh runs) in-process and through a
// `tpuemu serve` on loopback, the two alternating in every iteration; frames per second of PING;
// MB/s of HBM writes and reads with the pipelining window the server grants (8) and without (1).
#include <utility>  // before Boost.Asio (via server.h users): Boost 1.74 + g++ 12 -std=c++20

#include <chrono>
#include <thread>

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include "tpuemu/compile/model.h"
#include "tpuemu/config/config.h"
#include "tpuemu/device/device.h"
#include "tpuemu/run/runner.h"
#include "tpuemu/serve/server.h"

namespace {

using namespace tpuemu;

// A server on a free loopback port, on its own thread for the benchmark's lifetime.
class Loopback {
 public:
  Loopback(const std::string& preset, std::uint32_t window)
      : server_(load_preset(preset), options(window)), thread_([this] { server_.run(); }) {}
  ~Loopback() {
    server_.stop();
    thread_.join();
  }
  std::string backend() const { return "remote://" + server_.endpoint(); }

 private:
  static ServerOptions options(std::uint32_t window) {
    ServerOptions o;
    o.listen = "127.0.0.1:0";
    o.max_in_flight = window;
    return o;
  }
  Server server_;
  std::thread thread_;
};

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void BM_DemoModelRemoteOverInProcess(benchmark::State& state) {
  const Preset preset = load_preset("default");
  const Model model = load_model(TPUEMU_SOURCE_DIR "/examples/mlp.json");
  Loopback server("default", 8);
  double local_s = 0, remote_s = 0;
  std::uint64_t local_cycles = 0, remote_cycles = 0;
  for (auto _ : state) {
    RunSettings s;
    s.backend = "rtl";
    auto t0 = std::chrono::steady_clock::now();
    const WorkloadReport local = run_model(preset, model, s);
    local_s += seconds_since(t0);
    s.backend = server.backend();
    t0 = std::chrono::steady_clock::now();
    const WorkloadReport remote = run_model(preset, model, s);
    remote_s += seconds_since(t0);
    if (!local.bit_exact || !remote.bit_exact || local.cycles != remote.cycles)
      state.SkipWithError("remote and in-process runs disagree");
    local_cycles = local.cycles;
    remote_cycles = remote.cycles;
  }
  const double n = static_cast<double>(state.iterations());
  state.counters["in_process_s"] = local_s / n;
  state.counters["remote_s"] = remote_s / n;
  state.counters["overhead_pct"] = 100.0 * (remote_s - local_s) / local_s;
  state.counters["cycles"] = static_cast<double>(remote_cycles == local_cycles ? remote_cycles : 0);
}
BENCHMARK(BM_DemoModelRemoteOverInProcess)->Unit(benchmark::kSecond)->Iterations(3);

void BM_PingFrames(benchmark::State& state, bool remote) {
  std::unique_ptr<Loopback> server;
  if (remote) server = std::make_unique<Loopback>("small", 8);
  auto device = open_device(remote ? server->backend() : "rtl", load_preset("small"));
  const std::vector<std::uint8_t> payload(16, 7);
  for (auto _ : state) benchmark::DoNotOptimize(device->ping(payload));
  state.counters["frames_per_s"] = benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK_CAPTURE(BM_PingFrames, in_process, false);
BENCHMARK_CAPTURE(BM_PingFrames, remote, true);

// 16 MiB written then read back per iteration; backend "rtl" or a server granting `window`.
void BM_HbmTransfer(benchmark::State& state, bool remote, std::uint32_t window) {
  std::unique_ptr<Loopback> server;
  if (remote) server = std::make_unique<Loopback>("small", window);
  auto device = open_device(remote ? server->backend() : "rtl", load_preset("small"));
  std::vector<std::uint8_t> data(16u << 20);
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<std::uint8_t>(i * 131 + 3);
  std::vector<std::uint8_t> back(data.size());
  double write_s = 0, read_s = 0;
  for (auto _ : state) {
    auto t0 = std::chrono::steady_clock::now();
    device->write_hbm(0x100000, data);
    write_s += seconds_since(t0);
    t0 = std::chrono::steady_clock::now();
    device->read_hbm(0x100000, back);
    read_s += seconds_since(t0);
    if (back != data) state.SkipWithError("read back differs");
  }
  const double mb = static_cast<double>(data.size()) * static_cast<double>(state.iterations()) / 1e6;
  state.counters["write_MB_per_s"] = mb / write_s;
  state.counters["read_MB_per_s"] = mb / read_s;
}
BENCHMARK_CAPTURE(BM_HbmTransfer, in_process, false, 1u)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_HbmTransfer, remote_window_1, true, 1u)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_HbmTransfer, remote_window_8, true, 8u)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
