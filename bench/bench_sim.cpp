// SPDX-License-Identifier: Apache-2.0
// Simulation speed of the Verilated cores through CoreSim (below the firmware): simulated clock
// cycles per wall-clock second.
//
//   BM_SimMatmul/<preset>/...  a compiled int8 matmul (256x256x256, buffers 2; 128^3 on
//                              tpu-v4-like), checked bit-exactly once before timing
//   BM_SimIdle/<preset>        stepping a core with nothing to do: the harness floor
//   BM_SimFetch/<preset>       a long program of NOPs: instruction fetch and dispatch only
//   .../mem:simple             for presets on HBM: the same on the simple memory model, pricing
//                              the HBM subsystem
//   .../timeline               the matmul while recording its instruction timeline and HBM
//                              channel activity (CoreSim::start_timeline): the recording's cost
//   BM_CliMatmul/<preset>      the whole `tpuemu run --preset <preset> --matmul 256x256x256`
//                              process (rtl backend: compile, load, simulate, check, report):
//                              simulated cycles per wall-clock second of the process, what a user
//                              waits for; the summary sets `default` against the target
//                              (500 k), main before the HBM controller's redesign (160 k) and
//                              `small` in the same run
//
// Counters: sim_cycles_per_s (rate over wall time), cycles per run, mxu_util (MXU busy cycles /
// run cycles), port_util (memory beats / run cycles), ideal_frac (ideal MXU cycles / run cycles);
// with the HBM model also cycles_min and cycles_max over the repeats. See docs/benchmarks.md.
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "bench_common.h"

namespace tpuemu::bench {
namespace {

// The target for `default` on one host core.
constexpr double kTargetCyclesPerSecond = 100'000;

// The whole `tpuemu run --preset default --matmul 256x256x256` process: the target of the HBM
// controller's redesign, and main's rate before it (same machine).
constexpr double kCliTargetCyclesPerSecond = 500'000;
constexpr double kCliMainCyclesPerSecond = 160'000;

using Clock = std::chrono::steady_clock;

// Figures of the last measurement of each benchmark, for the summary printed after the run.
struct Figure {
  std::string preset;
  std::string kind;  // matmul, idle, fetch
  std::string workload;
  double cycles_per_s = 0;      // per wall-clock second
  double cycles_per_cpu_s = 0;  // per CPU second of the simulating thread
  double mxu_util = -1;
};
std::map<std::string, Figure>& figures() {
  static std::map<std::string, Figure> f;
  return f;
}

// The memory model behind each preset's core, for the summary.
std::map<std::string, std::string>& memories() {
  static std::map<std::string, std::string> m;
  return m;
}

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// sim_cycles_per_s: Google Benchmark's rate over the wall time of the timed loop (the benchmarks
// use real time). sim_cycles_per_cpu_s: over the CPU time of this thread in the same loop.
void report_speed(benchmark::State& state, Figure fig, std::uint64_t sim_cycles, double wall,
                  double cpu, double mxu_util = -1) {
  const auto cycles = static_cast<double>(sim_cycles);
  state.counters["sim_cycles_per_s"] = benchmark::Counter(cycles, benchmark::Counter::kIsRate);
  state.counters["sim_cycles_per_cpu_s"] = cycles / cpu;
  fig.cycles_per_s = cycles / wall;
  fig.cycles_per_cpu_s = cycles / cpu;
  fig.mxu_util = mxu_util;
  figures()[fig.kind + "/" + fig.preset] = fig;
}

// ---------------------------------------------------------------------------------------------
// Compiled matmul
// ---------------------------------------------------------------------------------------------
// Google Benchmark calls a benchmark function several times while it sizes the iteration count;
// the core, the program and the bit-exact check are made once per benchmark and kept.
//
// At most ONE core is alive at any time. Verilator 5.006 erases a model's scopes through the
// thread's current VerilatedContext (the most recently constructed one), so destroying an older
// model after a newer one is gone locks a freed mutex and hangs (or aborts at exit). With one
// core alive, every destruction is of the newest model. (Fixable in sim/src/core_sim_impl.h by
// setting Verilated::threadContextp(context_) in ~VerilatedCoreSim.)
struct MatmulSlot {
  std::string key;
  std::unique_ptr<PreparedMatmul> prepared;
};
MatmulSlot& matmul_slot() {
  static MatmulSlot slot;
  return slot;
}
void release_cores() {
  matmul_slot().prepared.reset();
  matmul_slot().key.clear();
}

PreparedMatmul& prepared(const std::string& preset, std::size_t m, std::size_t k, std::size_t n,
                         unsigned buffers, bool simple_memory) {
  MatmulSlot& slot = matmul_slot();
  const std::string key = fmt::format("{}/{}/{}/{}/{}/{}", preset, m, k, n, buffers, simple_memory);
  if (slot.key != key || !slot.prepared) {
    release_cores();
    slot.prepared = PreparedMatmul::make(preset, m, k, n, buffers, simple_memory);
    slot.key = key;
  }
  return *slot.prepared;
}

// Figures of a run on with_simple_memory(preset) are filed under "<preset>/simple-mem".
std::string label(const std::string& preset, bool simple_memory) {
  return simple_memory ? preset + "/simple-mem" : preset;
}

void BM_SimMatmul(benchmark::State& state, std::string preset, std::size_t m, std::size_t k,
                  std::size_t n, unsigned buffers, bool simple_memory, bool timeline) {
  PreparedMatmul* p = nullptr;
  try {
    p = &prepared(preset, m, k, n, buffers, simple_memory);
  } catch (const std::exception& e) {
    fail(state, fmt::format("{} {}x{}x{}: setup failed: {}", preset, m, k, n, e.what()));
    return;
  }
  if (p->error) {
    fail(state, *p->error);
    return;
  }
  const MatmulWorkload& w = p->workload;
  const std::uint64_t run_cycles = p->counters[spec::counter::cycles];
  const bool exact_repeats = repeats_exactly(w.preset);
  memories()[label(preset, simple_memory)] = describe_memory(w.preset);

  std::uint64_t sim_cycles = 0, min_cycles = UINT64_MAX, max_cycles = 0, events = 0;
  std::optional<std::string> problem;
  const auto start = Clock::now();
  const double cpu_start = thread_cpu_seconds();
  for (auto _ : state) {
    if (timeline) p->core->start_timeline();
    const RunResult r = w.run(*p->core);
    if (timeline) {
      const sim::Timeline t = p->core->stop_timeline();
      events += t.events.size() + t.hbm.size();
    }
    sim_cycles += r.sim_cycles;
    if (!r.ok()) {
      problem = w.name() + ": " + r.describe();
      break;
    }
    // The model is cycle-accurate: with the stateless simple memory every repeat takes exactly
    // the verified run's cycles. The HBM model carries open rows and the refresh phase from one
    // run to the next, so there a repeat may differ (a refresh is ~10% of a short run).
    const auto c = read_counter(*p->core, spec::counter::cycles);
    min_cycles = std::min(min_cycles, c);
    max_cycles = std::max(max_cycles, c);
    if (exact_repeats && c != run_cycles) {
      problem = fmt::format("{}: run took {} cycles, the verified run {}", w.name(), c, run_cycles);
      break;
    }
  }
  const double wall = seconds_since(start);
  const double cpu = thread_cpu_seconds() - cpu_start;
  // The last timed run's output must be right too (outside the timed loop).
  if (!problem) problem = w.verify(*p->core);
  if (problem) {
    fail(state, *problem);
    return;
  }

  const double mxu_util =
      static_cast<double>(p->counters[spec::counter::mxu_busy]) / static_cast<double>(run_cycles);
  report_speed(state,
               Figure{label(preset, simple_memory) + (timeline ? "/timeline" : ""), "matmul",
                      fmt::format("{}x{}x{} b{}", m, k, n, buffers)},
               sim_cycles, wall, cpu, mxu_util);
  state.counters["cycles"] = static_cast<double>(run_cycles);
  if (!exact_repeats) {
    state.counters["cycles_min"] = static_cast<double>(min_cycles);
    state.counters["cycles_max"] = static_cast<double>(max_cycles);
  }
  state.counters["mxu_util"] = mxu_util;
  if (timeline)
    state.counters["timeline_events_per_run"] =
        static_cast<double>(events) / static_cast<double>(state.iterations());
  // Memory port utilisation: beats moved (reads incl. instruction fetch, writes) per cycle.
  state.counters["port_util"] = static_cast<double>(p->counters[spec::counter::mem_read_beats] +
                                                    p->counters[spec::counter::mem_write_beats]) /
                                static_cast<double>(run_cycles);
  state.counters["ideal_frac"] =
      static_cast<double>(w.ideal_cycles()) / static_cast<double>(run_cycles);
}

// ---------------------------------------------------------------------------------------------
// Idle core: reset, nothing started, the clock keeps ticking. Every cycle still evaluates the
// whole Verilated model and the memory model, so this is the floor of the harness.
// ---------------------------------------------------------------------------------------------
void BM_SimIdle(benchmark::State& state, std::string preset, bool simple_memory) {
  release_cores();
  const Preset pr = simple_memory ? with_simple_memory(load_preset(preset)) : load_preset(preset);
  auto core = sim::make_core_sim(preset, memory_config(pr));
  memories()[label(preset, simple_memory)] = describe_memory(pr);
  const std::uint64_t chunk = pr.dim >= 128 ? 2'000 : 50'000;
  std::uint64_t cycles = 0;
  const auto start = Clock::now();
  const double cpu_start = thread_cpu_seconds();
  for (auto _ : state) cycles += core->step(chunk);
  const double wall = seconds_since(start);
  const double cpu = thread_cpu_seconds() - cpu_start;
  if (core->csr_read(csr::kStatus) != 0 || core->fault()) {
    fail(state, preset + ": idle core changed state");
    return;
  }
  report_speed(state,
               Figure{label(preset, simple_memory), "idle", fmt::format("{} cycles/iter", chunk)},
               cycles, wall, cpu);
}

// ---------------------------------------------------------------------------------------------
// Fetch-heavy: a long straight-line program of NOPs spread over the three queues. Nothing but
// instruction fetch (32 bytes per instruction over the memory port), decode and dispatch.
// ---------------------------------------------------------------------------------------------
void BM_SimFetch(benchmark::State& state, std::string preset, std::size_t instructions) {
  release_cores();
  const Preset pr = load_preset(preset);
  auto core = sim::make_core_sim(preset, memory_config(pr));
  Program program;
  for (std::size_t i = 0; i < instructions; ++i) {
    switch (i % 3) {
      case 0:
        program.push_back(Instruction{isa::DmaNop{}, std::nullopt, std::nullopt});
        break;
      case 1:
        program.push_back(Instruction{isa::MxuNop{}, std::nullopt, std::nullopt});
        break;
      default:
        program.push_back(Instruction{isa::VecNop{}, std::nullopt, std::nullopt});
        break;
    }
  }
  program.push_back(Instruction{isa::End{}, std::nullopt, std::nullopt});
  constexpr std::uint64_t kBase = 0x10'0000;
  core->mem_write(kBase, program.to_bytes());
  const std::uint64_t max_cycles = 200 * instructions + 100'000;

  std::uint64_t sim_cycles = 0, run_cycles = 0, fetched = 0;
  std::optional<std::string> problem;
  const auto start = Clock::now();
  const double cpu_start = thread_cpu_seconds();
  for (auto _ : state) {
    const RunResult r = run_program(*core, kBase, max_cycles);
    sim_cycles += r.sim_cycles;
    if (!r.ok()) {
      problem = preset + " fetch: " + r.describe();
      break;
    }
  }
  const double wall = seconds_since(start);
  const double cpu = thread_cpu_seconds() - cpu_start;
  if (!problem) {
    run_cycles = read_counter(*core, spec::counter::cycles);
    fetched = read_counter(*core, spec::counter::instructions_fetched);
    // The counter counts instructions dispatched to a queue; END is not dispatched.
    if (fetched != instructions) {
      problem = fmt::format("{} fetch: {} instructions dispatched, expected {}", preset, fetched,
                            instructions);
    }
  }
  if (problem) {
    fail(state, *problem);
    return;
  }
  report_speed(state, Figure{preset, "fetch", fmt::format("{} NOPs", instructions)}, sim_cycles,
               wall, cpu);
  state.counters["cycles"] = static_cast<double>(run_cycles);
  state.counters["instr_per_cycle"] =
      static_cast<double>(fetched) / static_cast<double>(run_cycles);
}

// ---------------------------------------------------------------------------------------------
// The whole CLI process: `tpuemu run --preset P --matmul 256x256x256 --json`, timed from start to
// exit; the simulated cycles come from its report. The result must be bit-exact.
// ---------------------------------------------------------------------------------------------
struct CliFigure {
  double cycles_per_s = 0;
  double cycles_per_cpu_s = 0;  // per CPU second of the process (user + system)
  std::uint64_t cycles = 0;
};

// CPU seconds of the waited-for child processes so far.
double children_cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_CHILDREN, &u);
  const auto s = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) + 1e-6 * static_cast<double>(t.tv_usec);
  };
  return s(u.ru_utime) + s(u.ru_stime);
}
std::map<std::string, CliFigure>& cli_figures() {
  static std::map<std::string, CliFigure> f;
  return f;
}

void BM_CliMatmul(benchmark::State& state, std::string preset) {
  release_cores();
  const std::string command =
      fmt::format("'{}' run --preset {} --matmul 256x256x256 --json", TPUEMU_CLI, preset);
  std::uint64_t cycles = 0, run_cycles = 0;
  double wall = 0;
  const double cpu_start = children_cpu_seconds();
  for (auto _ : state) {
    const auto start = Clock::now();
    std::string out;
    {
      std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
      if (!pipe) {
        fail(state, "cannot start " + command);
        return;
      }
      char buf[4096];
      for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, pipe.get())) > 0;) out.append(buf, n);
      const int status = pclose(pipe.release());
      wall += seconds_since(start);
      if (status != 0) {
        fail(state, fmt::format("{} exited with {}: {}", command, status, out.substr(0, 2000)));
        return;
      }
    }
    try {
      const auto j = nlohmann::json::parse(out);
      if (!j.at("result").at("bit_exact").get<bool>()) {
        fail(state, fmt::format("{}: NOT bit-exact: {}", command, j.at("result").dump()));
        return;
      }
      run_cycles = j.at("run").at("cycles").get<std::uint64_t>();
    } catch (const std::exception& e) {
      fail(state,
           fmt::format("{}: unreadable report ({}): {}", command, e.what(), out.substr(0, 2000)));
      return;
    }
    cycles += run_cycles;
  }
  CliFigure f;
  f.cycles_per_s = static_cast<double>(cycles) / wall;
  f.cycles_per_cpu_s = static_cast<double>(cycles) / (children_cpu_seconds() - cpu_start);
  state.counters["sim_cycles_per_cpu_s"] = f.cycles_per_cpu_s;
  f.cycles = run_cycles;
  state.counters["sim_cycles_per_s"] = f.cycles_per_s;
  state.counters["cycles"] = static_cast<double>(run_cycles);
  cli_figures()[preset] = f;
}

void register_benchmarks() {
  struct MatmulCase {
    const char* preset;
    std::size_t size;
  };
  std::vector<MatmulCase> matmuls = {{"small", 256}, {"default", 256}};
  std::vector<std::string> presets = {"small", "default"};
  if (sim::core_sim_available("tpu-v4-like")) {
    matmuls.push_back({"tpu-v4-like", 128});  // DIM 128 simulates ~70x slower than DIM 16
    presets.push_back("tpu-v4-like");
  }
  // A preset on HBM is also run on the simple memory model: the difference is what the HBM
  // subsystem (RTL controller + DRAM device model) costs per simulated cycle.
  auto on_hbm = [](const std::string& preset) { return load_preset(preset).hbm.model != "simple"; };
  for (const auto& mc : matmuls) {
    for (bool simple : {false, true}) {
      if (simple && (!on_hbm(mc.preset) || mc.size < 256)) continue;  // not for DIM 128: slow
      const std::string name = fmt::format("BM_SimMatmul/{}/{}x{}x{}/buffers:2{}", mc.preset,
                                           mc.size, mc.size, mc.size, simple ? "/mem:simple" : "");
      benchmark::RegisterBenchmark(name.c_str(), BM_SimMatmul, std::string(mc.preset), mc.size,
                                   mc.size, mc.size, 2u, simple, false)
          ->UseRealTime()
          ->Unit(benchmark::kMillisecond);
    }
  }
  for (const auto& mc : matmuls) {
    if (mc.size < 256) continue;  // not for DIM 128: slow
    const std::string name = fmt::format("BM_SimMatmul/{}/{}x{}x{}/buffers:2/timeline", mc.preset,
                                         mc.size, mc.size, mc.size);
    benchmark::RegisterBenchmark(name.c_str(), BM_SimMatmul, std::string(mc.preset), mc.size,
                                 mc.size, mc.size, 2u, false, true)
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
  }
  for (const auto& preset : presets) {
    for (bool simple : {false, true}) {
      if (simple && !on_hbm(preset)) continue;
      benchmark::RegisterBenchmark(
          fmt::format("BM_SimIdle/{}{}", preset, simple ? "/mem:simple" : "").c_str(), BM_SimIdle,
          preset, simple)
          ->UseRealTime()
          ->Unit(benchmark::kMillisecond);
    }
  }
  for (const auto& preset : presets) {
    const std::size_t n = preset == "tpu-v4-like" ? 256 : 3072;
    benchmark::RegisterBenchmark(fmt::format("BM_SimFetch/{}/nops:{}", preset, n).c_str(),
                                 BM_SimFetch, preset, n)
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
  }
  for (const char* preset : {"small", "default"}) {
    benchmark::RegisterBenchmark(fmt::format("BM_CliMatmul/{}", preset).c_str(), BM_CliMatmul,
                                 std::string(preset))
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
  }
}

void print_cli_summary() {
  const auto& f = cli_figures();
  const auto def = f.find("default");
  if (def == f.end()) return;
  const CliFigure& d = def->second;
  fmt::print(
      "\nWhole process: tpuemu run --preset default --matmul 256x256x256 (rtl backend), "
      "{} simulated cycles\n",
      d.cycles);
  fmt::print("  default: {} simulated cycles per wall-clock s of the process ({} per CPU s)\n",
             si(d.cycles_per_s), si(d.cycles_per_cpu_s));
  if (const auto small = f.find("small"); small != f.end()) {
    fmt::print(
        "  small, same matmul, same run: {} ({} per CPU s; {} cycles); default/small "
        "{:.2f}x ({:.2f}x per CPU s)\n",
        si(small->second.cycles_per_s), si(small->second.cycles_per_cpu_s), small->second.cycles,
        d.cycles_per_s / small->second.cycles_per_s,
        d.cycles_per_cpu_s / small->second.cycles_per_cpu_s);
  }
  const double r = d.cycles_per_s / kCliTargetCyclesPerSecond;
  fmt::print(
      "  target >= {} per wall-clock s: {} ({:.2f}x the target, {:.2f}x per CPU s; "
      "{:.2f}x main's {} before the HBM controller's redesign)\n",
      si(kCliTargetCyclesPerSecond), r >= 1 ? "MET" : "NOT MET", r,
      d.cycles_per_cpu_s / kCliTargetCyclesPerSecond, d.cycles_per_s / kCliMainCyclesPerSecond,
      si(kCliMainCyclesPerSecond));
}

void print_summary() {
  const auto& f = figures();
  if (f.empty()) return;
  fmt::print(
      "\nSimulation speed: simulated cycles per second, one host thread "
      "(wall clock, and CPU time of the simulating thread)\n");
  fmt::print("{:<18} {:<7} {:<18} {:>13} {:>13} {:>9} {:>14}\n", "preset", "kind", "workload",
             "cycles/wall s", "cycles/CPU s", "mxu util", "of idle floor");
  for (const auto& [key, fig] : f) {
    const auto idle = f.find("idle/" + fig.preset);
    // Against the idle core, per CPU second: how much the activity costs beyond the harness floor.
    const std::string vs_idle =
        idle != f.end() && fig.kind != "idle"
            ? fmt::format("{:.2f}x", fig.cycles_per_cpu_s / idle->second.cycles_per_cpu_s)
            : "";
    fmt::print("{:<18} {:<7} {:<18} {:>13} {:>13} {:>9} {:>14}\n", fig.preset, fig.kind,
               fig.workload, si(fig.cycles_per_s), si(fig.cycles_per_cpu_s),
               fig.mxu_util >= 0 ? fmt::format("{:.1f}%", 100 * fig.mxu_util) : "", vs_idle);
  }
  for (const auto& [preset, memory] : memories()) {
    fmt::print("memory behind {}: {}\n", preset, memory);
  }
  // What recording a timeline costs per simulated cycle.
  for (const auto& [key, fig] : f) {
    const auto rec = f.find(key + "/timeline");
    if (rec == f.end()) continue;
    fmt::print(
        "timeline recording cost, {}: {:.3f} us per cycle recording vs {:.3f} us not (+{:.1f}%)\n",
        key, 1e6 / rec->second.cycles_per_cpu_s, 1e6 / fig.cycles_per_cpu_s,
        100.0 * (fig.cycles_per_cpu_s / rec->second.cycles_per_cpu_s - 1.0));
  }
  // What the HBM subsystem costs per simulated cycle: the same core on HBM vs. on the simple model.
  for (const auto& [key, fig] : f) {
    const auto simple = f.find(key + "/simple-mem");
    if (simple == f.end()) continue;
    const double us = 1e6 / fig.cycles_per_cpu_s, us_simple = 1e6 / simple->second.cycles_per_cpu_s;
    fmt::print(
        "HBM subsystem cost, {} {}: {:.2f} us per cycle vs {:.2f} us on the simple model "
        "(+{:.2f} us, {:.1f}x slower)\n",
        fig.preset, fig.kind, us, us_simple, us - us_simple, us / us_simple);
  }
  const auto small = f.find("matmul/small"), def = f.find("matmul/default");
  if (small != f.end() && def != f.end()) {
    fmt::print("ratio default/small (matmul, per CPU s): {:.2f}x\n",
               def->second.cycles_per_cpu_s / small->second.cycles_per_cpu_s);
  }
  if (def != f.end()) {
    const double ratio = def->second.cycles_per_s / kTargetCyclesPerSecond;
    fmt::print(
        "target: default matmul >= {} simulated cycles per wall-clock s: {} ({:.2f}x the "
        "target; {:.2f}x per CPU s)\n",
        si(kTargetCyclesPerSecond), ratio >= 1 ? "MET" : "NOT MET", ratio,
        def->second.cycles_per_cpu_s / kTargetCyclesPerSecond);
  }
}

}  // namespace
}  // namespace tpuemu::bench

int main(int argc, char** argv) {
  tpuemu::bench::register_benchmarks();
  return tpuemu::bench::bench_main(argc, argv, [] {
    tpuemu::bench::print_summary();
    tpuemu::bench::print_cli_summary();
    tpuemu::bench::release_cores();
  });
}
