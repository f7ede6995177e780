// SPDX-License-Identifier: Apache-2.0
// Whole-run figures of a compiled matmul against its roofline: for `default`, C = A . B with
// 512x512x512 int8 (int32 out), buffers 1, 2 and 3 per operand.
//
//   roofline bound = max(ideal MXU cycles, minimum HBM bytes / HBM bytes per cycle)
//   roofline_frac  = roofline bound / cycles (1.0 = as fast as the hardware allows)
//   mxu_util       = MXU busy cycles / cycles
//   vs_buffers1    = cycles(buffers 1) / cycles(this): the speed-up bought by deeper buffering
//
// Simulated cycle counts are deterministic, so each case runs exactly once (Iterations(1)); the
// wall time of that run is the benchmark's time. The result is checked bit-exactly after the
// timed run. A table follows the Google Benchmark output. See docs/benchmarks.md.
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include "bench_common.h"

namespace tpuemu::bench {
namespace {

using Clock = std::chrono::steady_clock;

struct Measurement {
  std::string preset;
  std::size_t size = 0;
  unsigned buffers = 0;
  std::uint64_t cycles = 0;  // CSR cycle counter: cycles the core was busy
  std::uint64_t ideal = 0;
  double hbm_bound = 0;
  double roofline = 0;
  std::uint64_t min_hbm_bytes = 0;
  std::vector<std::uint64_t> counters;
  std::uint64_t sim_cycles = 0;
  double wall_s = 0;
  std::uint32_t vmem_rows_used = 0, vmem_rows = 0;
  std::string memory;  // describe_memory of the preset
  bool a_resident = false;  // the compiler kept A's row panel in VMEM across N blocks
  std::size_t block_m = 0, m_blocks = 0, n_blocks = 0;
  std::optional<std::string> error;

  double roofline_frac() const { return roofline / static_cast<double>(cycles); }
  double mxu_util() const {
    return static_cast<double>(counters[spec::counter::mxu_busy]) / static_cast<double>(cycles);
  }
  std::uint64_t hbm_bytes() const {
    return counters[spec::counter::bytes_hbm_to_vmem] + counters[spec::counter::bytes_vmem_to_hbm] +
           counters[spec::counter::bytes_hbm_to_smem] + counters[spec::counter::bytes_smem_to_hbm] +
           counters[spec::counter::bytes_acc_to_hbm];
  }
};

std::map<std::string, Measurement>& results() {
  static std::map<std::string, Measurement> r;
  return r;
}
std::string key(const std::string& preset, std::size_t size, unsigned buffers) {
  return fmt::format("{}/{}/{}", preset, size, buffers);
}

// One run: setup and the bit-exact check outside `timed`, which wraps exactly the run.
template <typename Timed>
Measurement measure(const std::string& preset, std::size_t size, unsigned buffers, Timed&& timed) {
  Measurement m;
  m.preset = preset;
  m.size = size;
  m.buffers = buffers;
  try {
    const MatmulWorkload w = MatmulWorkload::make(preset, size, size, size, buffers);
    auto core = sim::make_core_sim(preset, memory_config(w.preset));
    w.load(*core);
    m.ideal = w.ideal_cycles();
    m.hbm_bound = w.hbm_bound_cycles();
    m.roofline = w.roofline_cycles();
    m.min_hbm_bytes = w.min_hbm_bytes();
    m.vmem_rows_used = w.plan.vmem_rows_used;
    m.vmem_rows = w.preset.vmem_rows;
    m.a_resident = w.plan.a_resident;
    m.memory = describe_memory(w.preset);
    m.block_m = w.plan.block_m;
    m.m_blocks = w.plan.m_blocks;
    m.n_blocks = w.plan.n_blocks;
    RunResult r;
    const auto start = Clock::now();
    timed([&] { r = w.run(*core); });
    m.wall_s = std::chrono::duration<double>(Clock::now() - start).count();
    m.sim_cycles = r.sim_cycles;
    if (!r.ok()) {
      m.error = w.name() + ": " + r.describe();
      return m;
    }
    m.counters = read_counters(*core);
    m.cycles = m.counters[spec::counter::cycles];
    m.error = w.verify(*core);
  } catch (const std::exception& e) {
    m.error = fmt::format("{} {}^3 buffers {}: {}", preset, size, buffers, e.what());
  }
  return m;
}

void BM_Roofline(benchmark::State& state, std::string preset, std::size_t size, unsigned buffers) {
  Measurement m = measure(preset, size, buffers, [&](auto&& run) {
    for (auto _ : state) run();
  });
  if (m.error) {
    fail(state, *m.error);
    return;
  }
  results()[key(preset, size, buffers)] = m;

  state.counters["cycles"] = static_cast<double>(m.cycles);
  state.counters["ideal_mxu_cycles"] = static_cast<double>(m.ideal);
  state.counters["hbm_bound_cycles"] = m.hbm_bound;
  state.counters["roofline_cycles"] = m.roofline;
  state.counters["roofline_frac"] = m.roofline_frac();
  state.counters["mxu_util"] = m.mxu_util();
  state.counters["hbm_bytes_vs_min"] =
      static_cast<double>(m.hbm_bytes()) / static_cast<double>(m.min_hbm_bytes);
  state.counters["sim_cycles_per_s"] = static_cast<double>(m.sim_cycles) / m.wall_s;

  // The ratio against buffers 1 needs that run too; measure it (untimed) if it was filtered out.
  if (buffers != 1) {
    auto it = results().find(key(preset, size, 1));
    if (it == results().end()) {
      Measurement base = measure(preset, size, 1, [](auto&& run) { run(); });
      if (base.error) {
        fail(state, *base.error);
        return;
      }
      it = results().emplace(key(preset, size, 1), base).first;
    }
    state.counters["vs_buffers1"] =
        static_cast<double>(it->second.cycles) / static_cast<double>(m.cycles);
  }
}

void print_table() {
  if (results().empty()) return;
  fmt::print("\nRoofline: int8 matmul, int32 out; bound = max(ideal MXU cycles, min HBM bytes / "
             "HBM bytes per cycle)\n");
  fmt::print("{:<9} {:<13} {:>3} {:>10} {:>10} {:>9} {:>10} {:>9} {:>8} {:>8} {:>9} {:>9} {:>10} "
             "{:>5} {:>12} {:>7} {:>11}\n",
             "preset", "shape", "buf", "cycles", "ideal MXU", "HBM bound", "roofline", "of roof",
             "MXU util", "MXU sem", "HBM/min", "VMEM use", "vs buf 1", "A res", "blocks MxN", "wall s",
             "sim cyc/s");
  for (const auto& [k, m] : results()) {
    const auto base = results().find(key(m.preset, m.size, 1));
    const std::string vs1 =
        base != results().end()
            ? fmt::format("{:.3f}x", static_cast<double>(base->second.cycles) /
                                         static_cast<double>(m.cycles))
            : "";
    fmt::print("{:<9} {:<13} {:>3} {:>10} {:>10} {:>9.0f} {:>10.0f} {:>8.1f}% {:>7.1f}% {:>7.1f}% "
               "{:>8.2f}x {:>8.1f}% {:>10} {:>5} {:>12} {:>7.2f} {:>11.0f}\n",
               m.preset, fmt::format("{}x{}x{}", m.size, m.size, m.size), m.buffers, m.cycles,
               m.ideal, m.hbm_bound, m.roofline, 100 * m.roofline_frac(), 100 * m.mxu_util(),
               100.0 * static_cast<double>(m.counters[spec::counter::mxu_stall_semaphore]) /
                   static_cast<double>(m.cycles),
               static_cast<double>(m.hbm_bytes()) / static_cast<double>(m.min_hbm_bytes),
               100.0 * m.vmem_rows_used / m.vmem_rows, vs1, m.a_resident ? "yes" : "no",
               fmt::format("{}x{} ({})", m.m_blocks, m.n_blocks, m.block_m), m.wall_s,
               static_cast<double>(m.sim_cycles) / m.wall_s);
  }
  std::map<std::string, std::string> memories;
  for (const auto& [k, m] : results()) memories[m.preset] = m.memory;
  for (const auto& [preset, memory] : memories) fmt::print("memory behind {}: {}\n", preset, memory);
  fmt::print("columns: 'of roof' = roofline / cycles; 'MXU sem' = cycles the MXU head waited on a "
             "semaphore (data not loaded yet);\n         'HBM/min' = HBM bytes moved / minimum; "
             "'vs buf 1' = cycles(buffers 1) / cycles;\n         'A res' = A's row panel "
             "stays resident in VMEM across N blocks (else A is reloaded per N block);\n"
             "         'blocks MxN' = M blocks x N blocks of the compiled schedule (rows of A per "
             "block); B is read once per M block\n");
}

void register_benchmarks() {
  constexpr std::size_t kSize = 512;
  for (unsigned buffers : {1u, 2u, 3u}) {
    benchmark::RegisterBenchmark(
        fmt::format("BM_Roofline/default/{}x{}x{}/buffers:{}", kSize, kSize, kSize, buffers).c_str(),
        BM_Roofline, std::string("default"), kSize, buffers)
        ->Iterations(1)
        ->UseRealTime()
        ->Unit(benchmark::kSecond);
  }
}

}  // namespace
}  // namespace tpuemu::bench

int main(int argc, char** argv) {
  tpuemu::bench::register_benchmarks();
  return tpuemu::bench::bench_main(argc, argv, tpuemu::bench::print_table);
}
