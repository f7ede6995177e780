// SPDX-License-Identifier: Apache-2.0
// What threads buy a sharded run (docs/sharding.md, "The runner"): the transformer FFN (batch 8)
// on `default`, data parallel over N = 1, 2, 4, 8 devices, simulated serially (--jobs 1) and on
// two threads (--jobs 2), the two alternating in every iteration; the cycles must agree. Also the
// serial wall time per device, from which the scaling law of docs/sharding.md is read.
#include <chrono>

#include <benchmark/benchmark.h>

#include "tpuemu/compile/model.h"
#include "tpuemu/config/config.h"
#include "tpuemu/shard/sharded_run.h"

namespace {

using namespace tpuemu;

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void BM_ShardedFfnThreadsOverSerial(benchmark::State& state) {
  const auto devices = static_cast<std::uint32_t>(state.range(0));
  const Preset preset = load_preset("default");
  const Model model = load_model(TPUEMU_SOURCE_DIR "/examples/ffn.json");
  RunSettings s;
  s.batch = 8;
  double serial_s = 0, threads_s = 0;
  std::uint64_t cycles = 0;
  for (auto _ : state) {
    shard::ShardSettings ss;
    ss.mode = shard::ShardMode::Batch;
    ss.devices = devices;
    ss.jobs = 1;
    auto t0 = std::chrono::steady_clock::now();
    const shard::ShardReport serial = shard::run_sharded(preset, model, s, ss);
    serial_s += seconds_since(t0);
    ss.jobs = 2;
    t0 = std::chrono::steady_clock::now();
    const shard::ShardReport threads = shard::run_sharded(preset, model, s, ss);
    threads_s += seconds_since(t0);
    if (!serial.bit_exact || !threads.bit_exact || serial.step_cycles != threads.step_cycles) {
      state.SkipWithError("serial and threaded runs disagree");
    }
    cycles = serial.step_cycles;
  }
  const double n = static_cast<double>(state.iterations());
  state.counters["devices"] = devices;
  state.counters["serial_s"] = serial_s / n;
  state.counters["threads_s"] = threads_s / n;
  state.counters["speedup"] = serial_s / threads_s;
  state.counters["serial_s_per_device"] = serial_s / n / devices;
  state.counters["step_cycles"] = static_cast<double>(cycles);
}
BENCHMARK(BM_ShardedFfnThreadsOverSerial)->Arg(1)->Arg(2)->Arg(4)->Arg(8)->Unit(benchmark::kSecond)->Iterations(1);

}  // namespace

BENCHMARK_MAIN();
