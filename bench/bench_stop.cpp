// SPDX-License-Identifier: Apache-2.0
// What being stoppable costs (docs/cli.md, "Ctrl-C and SIGTERM"): a command gives its work a stop
// token, and a device run given one is made of RUN ... RESUME slices of about 0.1 s. Each case
// runs the same work without a token ("whole", what the library does by default) and with one
// that never asks ("stoppable", what the command line does), the two alternating in every
// iteration, and reports stoppable / whole wall time; the simulated cycles must agree.
//   model/<backend>   examples/cnn.json (8 launches) on `default`, and a 512^3 matmul
//   hbm               200 000 random requests through the HBM controller (tpuemu hbm)
#include <chrono>
#include <functional>
#include <string>

#include <benchmark/benchmark.h>

#include "tpuemu/compile/model.h"
#include "tpuemu/compile/workload.h"
#include "tpuemu/config/config.h"
#include "tpuemu/hbm_replay/hbm_trace.h"
#include "tpuemu/run/runner.h"

namespace {

using namespace tpuemu;

double seconds_of(const std::function<void()>& work) {
  const auto t0 = std::chrono::steady_clock::now();
  work();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void report(benchmark::State& state, double whole_s, double stoppable_s, double cycles) {
  const double n = static_cast<double>(state.iterations());
  state.counters["whole_s"] = whole_s / n;
  state.counters["stoppable_s"] = stoppable_s / n;
  state.counters["stoppable_over_whole"] = stoppable_s / whole_s;
  state.counters["cycles"] = cycles;
}

void BM_Model(benchmark::State& state, const std::string& backend, const std::string& what) {
  const Preset preset = load_preset("default");
  const Model model = what == "cnn" ? load_model(TPUEMU_SOURCE_DIR "/examples/cnn.json")
                                    : model_from_workload(make_matmul_workload(512, 512, 512, true, 1));
  RunSettings whole;
  whole.backend = backend;
  RunSettings stoppable = whole;
  stoppable.interrupted = [] { return false; };
  double whole_s = 0, stoppable_s = 0;
  std::uint64_t cycles = 0;
  for (auto _ : state) {
    WorkloadReport a, b;
    whole_s += seconds_of([&] { a = run_model(preset, model, whole); });
    stoppable_s += seconds_of([&] { b = run_model(preset, model, stoppable); });
    if (!a.bit_exact || !b.bit_exact || a.cycles != b.cycles) state.SkipWithError("the two runs disagree");
    cycles = a.cycles;
  }
  report(state, whole_s, stoppable_s, static_cast<double>(cycles));
}
BENCHMARK_CAPTURE(BM_Model, tlm_cnn, "tlm", "cnn")->Unit(benchmark::kSecond)->Iterations(3);
BENCHMARK_CAPTURE(BM_Model, rtl_cnn, "rtl", "cnn")->Unit(benchmark::kSecond)->Iterations(3);
BENCHMARK_CAPTURE(BM_Model, tlm_matmul512, "tlm", "matmul")->Unit(benchmark::kSecond)->Iterations(3);
BENCHMARK_CAPTURE(BM_Model, rtl_matmul512, "rtl", "matmul")->Unit(benchmark::kSecond)->Iterations(1);

void BM_HbmReplay(benchmark::State& state) {
  HbmCommandOptions whole;
  whole.pattern = "random";
  whole.requests = 200'000;
  HbmCommandOptions stoppable = whole;
  stoppable.stop = StopToken([] { return false; });
  double whole_s = 0, stoppable_s = 0;
  std::uint64_t cycles = 0;
  for (auto _ : state) {
    HbmReplayReport a, b;
    whole_s += seconds_of([&] { a = run_hbm_command(whole); });
    stoppable_s += seconds_of([&] { b = run_hbm_command(stoppable); });
    if (a.cycles != b.cycles) state.SkipWithError("the two replays disagree");
    cycles = a.cycles;
  }
  report(state, whole_s, stoppable_s, static_cast<double>(cycles));
}
BENCHMARK(BM_HbmReplay)->Unit(benchmark::kSecond)->Iterations(3);

}  // namespace

BENCHMARK_MAIN();
