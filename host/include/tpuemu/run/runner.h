// SPDX-License-Identifier: Apache-2.0
// Runs a workload end to end on a device backend: generates its inputs from the seed, lays them
// out in TPU tiles in HBM, compiles every layer into one program, runs it through the firmware,
// reads the result back, checks it bit-exactly against the C++ reference and measures where the
// cycles and the memory went.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "tpuemu/alloc/alloc_trace.h"
#include "tpuemu/base/stop.h"
#include "tpuemu/compile/compile.h"
#include "tpuemu/compile/model.h"
#include "tpuemu/compile/model_reference.h"
#include "tpuemu/compile/workload.h"
#include "tpuemu/config/config.h"
#include "tpuemu/device/device.h"
#include "tpuemu/device/timeline.h"

namespace tpuemu {

// Where a run is, for a progress display (tpuemu run's bar on stderr).
struct RunProgress {
  std::size_t steps_done = 0, steps_total = 0;
  std::string layer;            // the step about to run ("" when all are done)
  std::uint64_t cycles = 0;     // simulated so far
  double wall_seconds = 0;      // since the run started
  double fraction_done = 0;     // of the run's roofline-bound cycles: what the ETA extrapolates
};

struct RunSettings {
  std::string backend = "rtl";
  CompileOptions compile;
  bool tiled = true;                       // TPU tiled layouts (false: row-major, lanes padded)
  std::uint64_t max_cycles = 4'000'000'000;  // firmware watchdog
  DeviceOptions device;
  std::string allocator = std::string(alloc::kDefaultAllocator);  // HBM policy (tpuemu run --allocator)
  // VMEM buffers placed by this policy at run time instead of the compiler's offline plan.
  std::optional<std::string> vmem_allocator;
  // The HBM schedule (docs/workloads.md, "Schedule"): samples per request (default: the
  // model's batch), requests in flight (request r enters one layer after request r - 1), HBM
  // capacity (default: the preset's), and HBM placement by the offline planner over the whole
  // run's buffers instead of `allocator`.
  std::optional<std::size_t> batch;
  std::size_t requests = 1;
  std::optional<std::uint64_t> hbm_capacity;
  bool plan_hbm = false;
  double plan_timeout_seconds = 10;
  // Called before every step and once at the end; `interrupted` is asked before every step (and
  // the run throws Interrupted when it says true).
  std::function<void(const RunProgress&)> progress;
  std::function<bool()> interrupted;
  // Record every launch's instruction timeline and HBM channel intervals
  // (WorkloadReport::timelines; RunResult::timeline and hbm_timeline of the last launch in `run`,
  // its program in `program`).
  bool record_timeline = false;
};

struct LayerReport {
  std::string name;
  LayerKind kind = LayerKind::Dense;
  TensorShape in, out;
  MatmulSpec spec;  // dense and conv2d: the matmul it compiles to (conv2d: over its im2col view)
  MatmulPlan plan;
  std::uint64_t ideal_cycles = 0;        // MXU at 100%
  std::uint64_t min_hbm_bytes = 0;       // inputs read once, output written once
  std::uint64_t memory_bound_cycles = 0; // min_hbm_bytes / HBM bytes per cycle
  std::uint64_t roofline_cycles = 0;     // max of the two
  std::uint64_t padding_bytes = 0;       // layout padding of its weight and output tensors
};

// One launch's instruction timeline, on the run's time base (cycles since the first launch).
struct StepTimeline {
  std::size_t step = 0;
  std::vector<InstructionSpan> spans;
  std::vector<HbmInterval> hbm;
};

// What a step of a run is: a program the core runs, or (sharded runs, docs/sharding.md) data the
// interconnect moves into this device's HBM - a gather layer's tensor, or a layer's weights.
enum class StepKind { Launch, Gather, GatherWeights };
std::string_view step_kind_name(StepKind kind);

// One layer of one request, launched on the device as its own program (or a collective).
struct StepReport {
  std::size_t layer = 0, request = 0;
  std::uint64_t start_cycle = 0, end_cycle = 0;  // core cycles since the first launch
  std::uint64_t instructions = 0;
  StepKind kind = StepKind::Launch;
};

struct WorkloadReport {
  std::string workload, preset, backend;
  std::string cycles_approximate;  // DeviceInfo::cycles_approximate: why the cycles are not the core's
  std::size_t batch = 0, requests = 1;
  std::string hbm_placement;  // the allocator's name, or "planner"
  std::vector<StepReport> steps;
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
  double hbm_peak_fraction = 0;          // of memory_port_bytes_per_cycle
  // The port's peak as the preset's memory runs it (memory_port_peak(): the simple model's
  // bytes_per_cycle, or the HBM timing set's peak capped at one beat per cycle) and how it was
  // found; the memory bound of the roofline divides by it too.
  double memory_port_bytes_per_cycle = 0;
  std::string memory_port_basis;
  double hbm_traffic_over_minimum = 0;   // dma_bytes / min_hbm_bytes
  std::uint64_t vmem_peak_bytes = 0, vmem_capacity_bytes = 0;
  std::uint64_t acc_peak_bytes = 0, acc_capacity_bytes = 0;
  std::uint64_t hbm_allocated_bytes = 0, padding_bytes = 0;
  alloc::SpaceMetrics hbm_allocation;  // the HBM allocator's figures (policy, peaks, fragmentation)
  std::vector<alloc::SpaceSnapshot> hbm_allocation_samples;  // after every allocation and free
  std::optional<alloc::SpaceMetrics> vmem_allocation;  // with RunSettings::vmem_allocator
  alloc::AllocTrace allocation_trace;  // what the runtime allocated and freed (tpuemu run --alloc-trace)
  std::uint64_t program_instructions = 0;
  std::vector<std::uint8_t> program;  // the last launch's program as loaded, with RunSettings::record_timeline
  std::vector<StepTimeline> timelines;  // with RunSettings::record_timeline

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

// Throws Error (bad workload, does not fit, out of HBM: alloc::OutOfMemory) or RunError
// (deadlock, watchdog).
WorkloadReport run_model(const Preset& preset, const Model& model, const RunSettings& settings);

// Why RunSettings::hbm_capacity cannot be `bytes` on this preset (a multiple of its beat, at most
// its HBM), or nothing when it can: the caller names the place (tpuemu run --hbm-capacity, Python's
// hbm_capacity=).
std::optional<std::string> hbm_capacity_problem(const Preset& preset, std::uint64_t bytes);

// What a caller that splits a run across devices gives one device instead of the data run_model
// generates from the seed (the sharded runner, tpuemu/shard/sharded_run.h): the device's inputs,
// the parameters of its model's layers, every tensor's expected values, and its part of the
// weights when they are sharded.
struct DevicePart {
  std::vector<std::vector<std::int8_t>> inputs;          // per request
  std::vector<LayerParams> params;                       // per layer of the device's model
  std::vector<std::vector<ReferenceTensor>> expected;    // per request, per tensor
  std::size_t weight_parts = 1, weight_part = 0;         // fsdp: this device stores part weight_part of weight_parts
  bool prefetch_weights = true;                          // gather the next layer's weights during this one
};

// run_model in pieces, for a caller that drives several devices and works between their steps
// (the sharded runner): construct (compile, schedule, place, generate the data), start (open the
// device, write the constants), run_step for every step in order, finish (the report).
// run_model is exactly this sequence.
class ModelRun {
 public:
  ModelRun(const Preset& preset, const Model& model, const RunSettings& settings);
  ModelRun(const Preset& preset, const Model& model, const RunSettings& settings, DevicePart part);
  ~ModelRun();
  ModelRun(ModelRun&&) noexcept;
  ModelRun& operator=(ModelRun&&) noexcept;

  void start();
  std::size_t step_count() const;
  // Step s of the HBM schedule (in order): its request's input before its first step, the
  // program, the check of the tensor it wrote. Throws Interrupted when settings.interrupted says so.
  void run_step(std::size_t s);
  StepKind step_kind(std::size_t s) const;
  std::size_t step_layer(std::size_t s) const;
  bool step_overlapped(std::size_t s) const;  // a GatherWeights step that runs beside the next launch
  // A Gather or GatherWeights step, which the caller carries out: read this device's part from its
  // HBM (Gather: the input tensor's values row-major, 1 or 4 bytes each; GatherWeights: its shard
  // of the weight image), then write the gathered whole (row-major values / the whole image) -
  // a Gather's tensor is checked against its expected values as it lands - and say when the
  // collective ran on this device's clock: from `issue` (when the device asked for it) to `end`.
  // A blocking collective moves the clock to `end`; an overlapped one holds its consumer back
  // until `end`.
  std::vector<std::uint8_t> read_part(std::size_t s);
  void write_whole(std::size_t s, std::span<const std::uint8_t> whole);
  void complete_collective(std::size_t s, std::uint64_t issue, std::uint64_t end);
  // The HBM allocator's figures for this run's schedule before it runs (at logical times: the
  // peaks do not depend on when the steps run).
  alloc::SpaceMetrics planned_hbm_metrics() const;
  // Core cycles of the launches so far (the clock less the time spent waiting for collectives).
  std::uint64_t compute_cycles() const;
  WorkloadReport finish();
  Device& device();
  std::uint64_t cycles() const;  // core cycles of the steps run so far

 private:
  struct State;
  std::unique_ptr<State> state_;
};
WorkloadReport run_workload(const Preset& preset, const Workload& workload, const RunSettings& settings);

std::string format_report(const WorkloadReport& report);
nlohmann::json report_to_json(const WorkloadReport& report);

}  // namespace tpuemu
