// SPDX-License-Identifier: Apache-2.0
// Shared by the benchmarks: a compiled matmul workload on a Verilated core (below the firmware),
// run through CSRs, checked bit-exactly against the C++ reference, and the failure bookkeeping
// that makes a benchmark binary exit non-zero when a result is wrong.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <time.h>

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include "tpuemu/compile/compile.h"
#include "tpuemu/compile/reference.h"
#include "tpuemu/config/config.h"
#include "tpuemu/config/hbm_config.h"
#include "tpuemu/layout/layout.h"
#include "tpuemu/program/program.h"
#include "tpuemu/sim/core_sim.h"
#include "tpuemu/sim_setup/hbm_setup.h"
#include "tpuemu/spec/contract.h"

namespace tpuemu::bench {

// CSR byte addresses and counter indices of the contract (spec/tpuemu.json).
namespace csr = spec::csr;

// ---------------------------------------------------------------------------------------------
// Failures: a wrong result is never a number in a table. Every benchmark that detects one calls
// fail(); main() returns non-zero if any did, so scripts/bench.sh fails.
// ---------------------------------------------------------------------------------------------
inline std::atomic<int>& failure_count() {
  static std::atomic<int> count{0};
  return count;
}

inline void fail(benchmark::State& state, const std::string& message) {
  ++failure_count();
  std::fprintf(stderr, "\n*** BENCHMARK FAILURE: %s\n", message.c_str());
  std::fflush(stderr);
  state.SkipWithError(message.c_str());
}

// main() of every benchmark binary: the usual Google Benchmark flags, plus a non-zero exit when a
// benchmark failed its check. `after` runs once the benchmarks are done (summary tables).
template <typename After>
int bench_main(int argc, char** argv, After&& after) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
  benchmark::RunSpecifiedBenchmarks();
  after();
  benchmark::Shutdown();
  if (const int n = failure_count().load(); n != 0) {
    std::fprintf(stderr, "\n*** %d benchmark(s) FAILED their bit-exact / completion check\n", n);
    return 1;
  }
  return 0;
}

// CPU time of the calling thread. The benchmarks report simulated cycles per wall-clock second
// (what a user waits for) and per CPU second of the simulating thread (what the simulator costs,
// independent of other load on a shared machine).
// "1.23 M", "45.6 k", "789": rates in the summary tables.
inline std::string si(double v) {
  if (v >= 1e6) return fmt::format("{:.2f} M", v / 1e6);
  if (v >= 1e3) return fmt::format("{:.1f} k", v / 1e3);
  return fmt::format("{:.0f}", v);
}

inline double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

// ---------------------------------------------------------------------------------------------
// Driving a core through its CSRs
// ---------------------------------------------------------------------------------------------
// The memory behind the core's port exactly as the preset describes it (the same mapping as the rtl
// device backend, host/src/device/rtl/rtl_backend.cpp): the simple latency/bandwidth model, or the
// HBM subsystem (RTL controller + DRAM device model) with the preset's timing set and page policy.
// An unknown model throws rather than silently falling back.
inline sim::MemoryModelConfig memory_config(const Preset& preset) {
  sim::MemoryModelConfig mem;
  mem.capacity_bytes = preset.hbm.capacity_bytes;
  mem.latency_cycles = preset.hbm.latency_cycles;
  mem.bytes_per_cycle = preset.hbm.bytes_per_cycle;
  if (preset.hbm.model == "hbm") {
    const HbmTimingSet set = load_hbm_timing_set(preset.hbm.timing_set);
    mem.hbm = hbm_setup_from(set, preset.hbm.page_policy == "closed");
    mem.dram_cycles_per_core_cycle = 1000.0 / (preset.clock_ghz * set.tck_ps);  // core period / tCK
  } else if (preset.hbm.model != "simple") {
    throw std::runtime_error("preset '" + preset.name + "': unknown memory model '" +
                             preset.hbm.model + "'");
  }
  return mem;
}

// "simple (latency 100, 16 B/cycle)" or "hbm (hbm2-2000, open page; port 16 B/cycle)".
inline std::string describe_memory(const Preset& preset) {
  if (preset.hbm.model == "hbm") {
    return fmt::format("hbm ({}, {} page; port {:g} B/cycle)", preset.hbm.timing_set,
                       preset.hbm.page_policy, memory_port_peak(preset).bytes_per_cycle);
  }
  return fmt::format("{} (latency {}, {} B/cycle)", preset.hbm.model, preset.hbm.latency_cycles,
                     preset.hbm.bytes_per_cycle);
}

// The same preset with the simple memory model in place of HBM (same capacity and port bandwidth,
// latency 100 cycles unless the preset gives one): the comparison that prices the HBM subsystem.
inline constexpr std::uint32_t kSimpleStandInLatency = 100;
inline Preset with_simple_memory(Preset preset) {
  if (preset.hbm.model != "simple") {
    // The port bandwidth the HBM model gives (memory_port_peak), whole bytes.
    preset.hbm.bytes_per_cycle = std::max<std::uint32_t>(
        1, static_cast<std::uint32_t>(memory_port_peak(preset).bytes_per_cycle));
    preset.hbm.model = "simple";
    if (preset.hbm.latency_cycles == 0) preset.hbm.latency_cycles = kSimpleStandInLatency;
    preset.hbm.timing_set.clear();
  }
  return preset;
}

// Whether a run's cycle count must repeat exactly. The simple model is stateless between runs;
// the HBM model carries open rows and the refresh phase over, so repeats may differ slightly.
inline bool repeats_exactly(const Preset& preset) { return preset.hbm.model == "simple"; }

inline std::uint64_t read_counter(sim::CoreSim& core, unsigned index) {
  const std::uint32_t lo = core.csr_read(csr::counter_lo(index));
  const std::uint32_t hi = core.csr_read(csr::counter_hi(index));
  return (std::uint64_t{hi} << 32) | lo;
}

struct RunResult {
  bool done = false;
  bool error = false;
  std::uint32_t error_code = 0;
  std::uint32_t error_pc = 0;
  std::uint64_t sim_cycles = 0;  // clock edges simulated for this run (CSR writes included)
  std::optional<std::string> fault;

  bool ok() const { return done && !error && !fault; }
  std::string describe() const {
    if (fault) return "memory fault: " + *fault;
    if (error) return fmt::format("core error code {} at pc {}", error_code, error_pc);
    if (!done) return fmt::format("core did not finish within {} cycles", sim_cycles);
    return "ok";
  }
};

// Starts the program already stored at prog_base and steps until the core is idle. Starting
// clears the performance counters, so they describe this run only.
inline RunResult run_program(sim::CoreSim& core, std::uint64_t prog_base, std::uint64_t max_cycles) {
  const std::uint64_t start = core.cycle();
  core.csr_write(csr::kProgBase, static_cast<std::uint32_t>(prog_base));
  core.csr_write(csr::kCtrl, csr::ctrl::start.put(1));
  core.step(max_cycles, /*stop_when_idle=*/true);
  RunResult r;
  r.sim_cycles = core.cycle() - start;
  const std::uint32_t status = core.csr_read(csr::kStatus);
  r.done = csr::status::done.get(status) != 0;
  r.error = csr::status::error.get(status) != 0;
  r.error_code = csr::status::error_code.get(status);
  r.error_pc = core.csr_read(csr::kErrorInfo);
  r.fault = core.fault();
  return r;
}

inline std::vector<std::uint64_t> read_counters(sim::CoreSim& core) {
  std::vector<std::uint64_t> c(spec::kNumCounters);
  for (unsigned i = 0; i < spec::kNumCounters; ++i) c[i] = read_counter(core, i);
  return c;
}

// ---------------------------------------------------------------------------------------------
// A compiled int8 matmul (int32 out) with fixed-seed data and its reference result
// ---------------------------------------------------------------------------------------------
inline std::uint64_t align_up(std::uint64_t x, std::uint64_t a) { return (x + a - 1) / a * a; }

struct MatmulWorkload {
  Preset preset;
  MatmulSpec spec;
  unsigned buffers = 2;
  HbmTensor a, b, c;
  std::uint64_t prog_base = 0;
  Program program;
  MatmulPlan plan;
  std::vector<std::uint8_t> a_image, b_image, program_bytes;
  std::vector<std::int32_t> expected;  // m x n row-major

  // simple_memory: with_simple_memory(preset) instead of the preset's own memory model.
  static MatmulWorkload make(const std::string& preset_name, std::size_t m, std::size_t k,
                             std::size_t n, unsigned buffers, bool simple_memory = false) {
    MatmulWorkload w;
    w.preset = load_preset(preset_name);
    if (simple_memory) w.preset = with_simple_memory(w.preset);
    w.spec = MatmulSpec{m, k, n, /*requantize=*/false, 1, 0, false};
    w.buffers = buffers;
    const std::uint32_t dim = w.preset.dim;

    std::mt19937 rng(static_cast<unsigned>(m * 7919 + k * 131 + n));
    std::uniform_int_distribution<int> dist(-128, 127);
    auto random_int8 = [&](std::size_t count) {
      std::vector<std::int8_t> v(count);
      for (auto& x : v) x = static_cast<std::int8_t>(dist(rng));
      v.front() = -128;  // the extremes, so overflow mistakes show
      v.back() = 127;
      return v;
    };
    const auto a_host = random_int8(m * k);
    const auto b_host = random_int8(k * n);

    const auto la = matmul_a_layout(w.spec, dim), lb = matmul_b_layout(w.spec, dim),
               lc = matmul_c_layout(w.spec, dim);
    constexpr std::uint64_t kAlign = 1ull << 20;
    w.a = HbmTensor{la, 0};
    w.b = HbmTensor{lb, align_up(la.bytes(), kAlign)};
    w.c = HbmTensor{lc, align_up(w.b.addr + lb.bytes(), kAlign)};
    w.prog_base = align_up(w.c.addr + lc.bytes(), kAlign);

    std::vector<std::int8_t> b_padded(b_host);
    b_padded.resize(lb.rows * lb.cols, 0);
    w.a_image = pack(la, a_host);
    w.b_image = pack(lb, b_padded);

    CompileOptions options;
    options.buffers = {buffers, buffers, buffers};
    w.plan = compile_matmul(w.preset, w.spec, w.a, w.b, w.c, options, w.program);
    w.program.push_back(Instruction{isa::End{}, std::nullopt, std::nullopt});
    if (const auto problems = check_program(w.program, w.preset); !problems.empty()) {
      throw std::runtime_error("compiled program fails check_program: " + problems.front());
    }
    w.program_bytes = w.program.to_bytes();
    if (w.prog_base + w.program_bytes.size() > w.preset.hbm.capacity_bytes) {
      throw std::runtime_error("workload does not fit the preset's HBM");
    }
    w.expected = matmul_int8(a_host, b_host, m, k, n);
    // Self-test of the checking path (docs/benchmarks.md): a wrong reference must fail the run.
    if (const char* corrupt = std::getenv("TPUEMU_BENCH_CORRUPT_REFERENCE"); corrupt && *corrupt == '1') {
      w.expected[w.expected.size() / 2] ^= 1;
    }
    return w;
  }

  std::string name() const {
    return fmt::format("{}/{}x{}x{}/buffers:{}", preset.name, spec.m, spec.k, spec.n, buffers);
  }
  std::uint64_t ideal_cycles() const { return ideal_mxu_cycles(spec, preset.dim); }
  std::uint64_t min_hbm_bytes() const { return minimum_hbm_bytes(spec); }
  // Cycles HBM needs at its peak bandwidth to move the minimum traffic.
  double hbm_bound_cycles() const {
    return static_cast<double>(min_hbm_bytes()) / memory_port_peak(preset).bytes_per_cycle;
  }
  double roofline_cycles() const {
    return std::max(static_cast<double>(ideal_cycles()), hbm_bound_cycles());
  }
  // Generous: 20x the roofline plus the fill latency, so a hang is reported, not waited out.
  std::uint64_t max_cycles() const {
    return 20 * static_cast<std::uint64_t>(roofline_cycles()) + 1'000'000;
  }

  // Inputs and program into HBM; the output region is poisoned so stale data cannot pass.
  void load(sim::CoreSim& core) const {
    core.mem_write(a.addr, a_image);
    core.mem_write(b.addr, b_image);
    core.mem_write(prog_base, program_bytes);
    poison_output(core);
  }
  void poison_output(sim::CoreSim& core) const {
    std::vector<std::uint8_t> poison(c.layout.bytes(), 0xA5);
    core.mem_write(c.addr, poison);
  }

  RunResult run(sim::CoreSim& core) const { return run_program(core, prog_base, max_cycles()); }

  // Empty when C in HBM equals the reference bit for bit and every semaphore is back to 0.
  std::optional<std::string> verify(sim::CoreSim& core) const {
    std::vector<std::uint8_t> raw(c.layout.bytes());
    core.mem_read(c.addr, raw);
    const auto got = unpack<std::int32_t>(c.layout, raw);
    if (got.size() != expected.size()) {
      return fmt::format("{}: result has {} elements, expected {}", name(), got.size(), expected.size());
    }
    std::size_t mismatches = 0, first = 0;
    for (std::size_t i = 0; i < got.size(); ++i) {
      if (got[i] != expected[i]) {
        if (mismatches++ == 0) first = i;
      }
    }
    if (mismatches != 0) {
      return fmt::format("{}: NOT bit-exact: {} of {} elements differ; first C[{}][{}] = {}, expected {}",
                         name(), mismatches, got.size(), first / spec.n, first % spec.n, got[first],
                         expected[first]);
    }
    for (unsigned s = 0; s < 32; ++s) {
      if (const auto v = core.csr_read(csr::sem(s)); v != 0) {
        return fmt::format("{}: semaphore {} is {} after the run (unbalanced program)", name(), s, v);
      }
    }
    return std::nullopt;
  }
};

// A core with a workload loaded and verified once (outside any timed region).
struct PreparedMatmul {
  MatmulWorkload workload;
  std::unique_ptr<sim::CoreSim> core;
  RunResult first_run;
  std::vector<std::uint64_t> counters;  // of the verified run
  std::optional<std::string> error;     // set if the verified run was wrong

  // make_core: the simulator to run on (default: the preset's Verilated core).
  using MakeCore = std::function<std::unique_ptr<sim::CoreSim>(const Preset&, const sim::MemoryModelConfig&)>;
  static std::unique_ptr<PreparedMatmul> make(const std::string& preset, std::size_t m, std::size_t k,
                                              std::size_t n, unsigned buffers,
                                              bool simple_memory = false, const MakeCore& make_core = {}) {
    auto p = std::make_unique<PreparedMatmul>();
    p->workload = MatmulWorkload::make(preset, m, k, n, buffers, simple_memory);
    const sim::MemoryModelConfig mem = memory_config(p->workload.preset);
    p->core = make_core ? make_core(p->workload.preset, mem) : sim::make_core_sim(preset, mem);
    p->workload.load(*p->core);
    p->first_run = p->workload.run(*p->core);
    if (!p->first_run.ok()) {
      p->error = p->workload.name() + ": " + p->first_run.describe();
      return p;
    }
    p->counters = read_counters(*p->core);
    p->error = p->workload.verify(*p->core);
    return p;
  }
};

}  // namespace tpuemu::bench
