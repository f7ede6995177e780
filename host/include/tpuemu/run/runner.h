// Runs a workload end to end on a device backend: generates its inputs from the seed, lays them
// out in TPU tiles in HBM, compiles every layer into one program, runs it through the firmware,
// reads the result back, checks it bit-exactly against the C++ reference and measures where the
// cycles and the memory went.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tpuemu/alloc/alloc_trace.h"
#include "tpuemu/compile/compile.h"
#include "tpuemu/compile/workload.h"
#include "tpuemu/config/config.h"
#include "tpuemu/device/device.h"

namespace tpuemu {

struct RunSettings {
  std::string backend = "rtl";
  CompileOptions compile;
  bool tiled = true;                       // TPU tiled layouts (false: row-major, lanes padded)
  std::uint64_t max_cycles = 4'000'000'000;  // firmware watchdog
  DeviceOptions device;
  std::string allocator = std::string(alloc::kDefaultAllocator);  // HBM policy (tpuemu run --allocator)
  // VMEM buffers placed by this policy at run time instead of the compiler's offline plan.
  std::optional<std::string> vmem_allocator;
  // Record the run's instruction timeline (RunResult::timeline, hbm_timeline) and keep the
  // program's bytes (WorkloadReport::program) to map it back (tpuemu/device/timeline.h).
  bool record_timeline = false;
};

struct LayerReport {
  MatmulSpec spec;
  MatmulPlan plan;
  std::uint64_t ideal_cycles = 0;        // MXU at 100%
  std::uint64_t min_hbm_bytes = 0;       // inputs read once, output written once
  std::uint64_t memory_bound_cycles = 0; // min_hbm_bytes / HBM bytes per cycle
  std::uint64_t roofline_cycles = 0;     // max of the two
  std::uint64_t padding_bytes = 0;       // layout padding of its weight and output tensors
};

struct WorkloadReport {
  std::string workload, preset, backend;
  BufferCounts buffers;
  bool tiled = true;
  std::vector<LayerReport> layers;
  Counters counters;
  RunResult run;

  std::uint64_t cycles = 0;
  std::uint64_t ideal_cycles = 0;
  std::uint64_t min_hbm_bytes = 0;
  std::uint64_t roofline_cycles = 0;     // sum over layers (they run one after another)
  double roofline_fraction = 0;          // roofline_cycles / cycles
  double mxu_utilization = 0;            // MXU busy / cycles
  std::uint64_t dma_bytes = 0;           // all DMA paths
  std::uint64_t hbm_bytes = 0;           // memory port beats (DMA and instruction fetch)
  double hbm_bytes_per_cycle = 0;
  double hbm_peak_fraction = 0;          // of the preset's bytes per cycle
  double hbm_traffic_over_minimum = 0;   // dma_bytes / min_hbm_bytes
  std::uint64_t vmem_peak_bytes = 0, vmem_capacity_bytes = 0;
  std::uint64_t acc_peak_bytes = 0, acc_capacity_bytes = 0;
  std::uint64_t hbm_allocated_bytes = 0, padding_bytes = 0;
  alloc::SpaceMetrics hbm_allocation;  // the HBM allocator's figures (policy, peaks, fragmentation)
  std::vector<alloc::SpaceSnapshot> hbm_allocation_samples;  // after every allocation and free
  std::optional<alloc::SpaceMetrics> vmem_allocation;  // with RunSettings::vmem_allocator
  alloc::AllocTrace allocation_trace;  // what the runtime allocated and freed (tpuemu run --alloc-trace)
  std::uint64_t program_instructions = 0;
  std::vector<std::uint8_t> program;  // the program as loaded, with RunSettings::record_timeline

  bool bit_exact = false;
  std::uint64_t checked_values = 0, mismatches = 0;
  std::string first_mismatch;

  double wall_seconds = 0;
  double sim_cycles_per_second = 0;
  double clock_ghz = 1;

  // The HBM subsystem's view (presets with hbm.model "hbm"): controller and device statistics in
  // DRAM cycles (tCK).
  std::optional<MemoryStatistics> hbm;
  std::string hbm_timing_set;
  double hbm_tck_ns = 0;
};

// Throws Error (bad workload, does not fit, out of HBM) or RunError (deadlock, watchdog).
WorkloadReport run_workload(const Preset& preset, const Workload& workload, const RunSettings& settings);

std::string format_report(const WorkloadReport& report);
nlohmann::json report_to_json(const WorkloadReport& report);

}  // namespace tpuemu
