#include "tpuemu/run/runner.h"

#include <chrono>
#include <random>

#include <fmt/format.h>

#include "tpuemu/base/error.h"
#include "tpuemu/compile/reference.h"
#include "tpuemu/config/hbm_config.h"
#include "tpuemu/layout/layout.h"

namespace tpuemu {
namespace {

// Places the workload's tensors and program in HBM with the chosen allocation policy, and records
// what it did as an allocation trace (docs/alloc-trace.md): everything is allocated before the run
// and freed when it ends.
class HbmPlacer {
 public:
  HbmPlacer(const Preset& preset, const RunSettings& settings)
      : space_("HBM", alloc::make_allocator(settings.allocator, {preset.hbm.capacity_bytes, kGranularity}), true),
        alignment_(preset.dim) {}
  std::uint64_t take(std::uint64_t bytes, std::uint64_t padding, const std::string& owner) {
    const alloc::PlacedBuffer placed = space_.allocate({bytes, alignment_, owner, padding}, 0);
    ids_.push_back(placed.id);
    trace_.events.push_back({0, true, fmt::format("t{}", placed.id), bytes, alignment_, "hbm", padding, owner, placed.offset});
    return placed.offset;
  }
  std::uint64_t take(const TiledLayout& layout, const std::string& owner) {
    return take(layout.bytes(), layout.padding_bytes(), owner);
  }
  void free_all(std::uint64_t time) {
    for (const alloc::BufferId id : ids_) {
      space_.free(id, time);
      trace_.events.push_back({time, false, fmt::format("t{}", id), 0, 1, "hbm", 0, ""});
    }
    ids_.clear();
  }
  std::uint64_t in_use() const { return space_.snapshot().in_use_bytes; }
  alloc::SpaceMetrics metrics() const { return space_.metrics(); }
  const std::vector<alloc::SpaceSnapshot>& samples() const { return space_.samples(); }
  alloc::AllocTrace& trace() { return trace_; }

 private:
  static constexpr std::uint64_t kGranularity = 256;
  alloc::MemorySpace space_;
  std::uint64_t alignment_;  // DMA addresses are multiples of dim bytes
  std::vector<alloc::BufferId> ids_;
  alloc::AllocTrace trace_;
};

std::vector<std::int8_t> random_int8(std::size_t n, std::mt19937_64& rng) {
  std::uniform_int_distribution<int> dist(-128, 127);
  std::vector<std::int8_t> v(n);
  for (auto& x : v) x = static_cast<std::int8_t>(dist(rng));
  return v;
}

template <typename T>
void compare(const std::vector<T>& got, const std::vector<T>& want, std::size_t cols, WorkloadReport& r) {
  r.checked_values = want.size();
  for (std::size_t i = 0; i < want.size(); ++i) {
    if (got[i] != want[i]) {
      if (r.mismatches == 0) {
        r.first_mismatch = fmt::format("C[{}][{}] = {}, expected {}", i / cols, i % cols,
                                       static_cast<std::int64_t>(got[i]), static_cast<std::int64_t>(want[i]));
      }
      ++r.mismatches;
    }
  }
  r.bit_exact = r.mismatches == 0 && got.size() == want.size();
}

}  // namespace

WorkloadReport run_workload(const Preset& preset, const Workload& workload, const RunSettings& settings) {
  validate_workload(workload);
  const auto wall_start = std::chrono::steady_clock::now();
  WorkloadReport r;
  r.workload = workload.name;
  r.preset = preset.name;
  r.backend = settings.backend;
  r.buffers = settings.compile.buffers;
  r.tiled = settings.tiled;
  r.clock_ghz = preset.clock_ghz;
  const std::uint32_t dim = preset.dim;

  // ---- data and placement
  std::mt19937_64 rng(workload.seed);
  HbmPlacer arena(preset, settings);
  const std::size_t batch = workload.batch;
  const std::size_t k0 = workload.layers.front().in_features;

  std::vector<MlpLayer> ref_layers;
  std::vector<HbmTensor> weights, outputs;
  std::vector<MatmulSpec> specs;
  HbmTensor input;
  for (std::size_t i = 0; i < workload.layers.size(); ++i) {
    const LayerSpec& l = workload.layers[i];
    MatmulSpec s{batch, l.in_features, l.out_features, !l.int32_output, l.scale, l.shift, l.relu};
    specs.push_back(s);
    if (i == 0) {
      input.layout = matmul_a_layout(s, dim, settings.tiled);
      input.addr = arena.take(input.layout, "input x");
      r.padding_bytes += input.layout.padding_bytes();
    }
    HbmTensor w{matmul_b_layout(s, dim, settings.tiled), 0};
    w.addr = arena.take(w.layout, fmt::format("layer {} weights", i));
    HbmTensor out{matmul_c_layout(s, dim, settings.tiled), 0};
    out.addr = arena.take(out.layout, fmt::format("layer {} output", i));
    weights.push_back(w);
    outputs.push_back(out);
  }
  // Generated only once everything is known to fit in HBM.
  const auto x = random_int8(batch * k0, rng);
  for (const LayerSpec& l : workload.layers) {
    MlpLayer ref;
    ref.in_features = l.in_features;
    ref.out_features = l.out_features;
    ref.weights = random_int8(l.in_features * l.out_features, rng);
    ref.scale = l.scale;
    ref.shift = l.shift;
    ref.relu = l.relu;
    ref_layers.push_back(std::move(ref));
  }

  // ---- compile every layer into one program; a DMA fence orders each layer's output writes
  // before the next layer's reads
  Program program;
  std::optional<alloc::MemorySpace> vmem_space;
  CompileOptions compile_options = settings.compile;
  if (settings.vmem_allocator) {
    vmem_space.emplace("VMEM", alloc::make_allocator(*settings.vmem_allocator, {preset.vmem_bytes(), 256}));
    compile_options.vmem_space = &*vmem_space;
  }
  for (std::size_t i = 0; i < specs.size(); ++i) {
    const HbmTensor& a = i == 0 ? input : outputs[i - 1];
    LayerReport lr;
    lr.spec = specs[i];
    lr.plan = compile_matmul(preset, specs[i], a, weights[i], outputs[i], compile_options, program);
    if (i + 1 < specs.size()) program.push_back(Instruction{isa::DmaNop{}, std::nullopt, std::nullopt});
    lr.ideal_cycles = ideal_mxu_cycles(specs[i], dim);
    lr.min_hbm_bytes = minimum_hbm_bytes(specs[i]);
    lr.memory_bound_cycles = (lr.min_hbm_bytes + preset.hbm.bytes_per_cycle - 1) / preset.hbm.bytes_per_cycle;
    lr.roofline_cycles = std::max(lr.ideal_cycles, lr.memory_bound_cycles);
    lr.padding_bytes = weights[i].layout.padding_bytes() + outputs[i].layout.padding_bytes();
    r.padding_bytes += lr.padding_bytes;
    r.ideal_cycles += lr.ideal_cycles;
    r.min_hbm_bytes += lr.min_hbm_bytes;
    r.roofline_cycles += lr.roofline_cycles;
    r.vmem_peak_bytes = std::max<std::uint64_t>(r.vmem_peak_bytes, std::uint64_t{lr.plan.vmem_rows_used} * dim);
    r.acc_peak_bytes = std::max<std::uint64_t>(r.acc_peak_bytes, std::uint64_t{lr.plan.acc_rows_used} * dim * 4);
    r.layers.push_back(lr);
  }
  program.push_back(Instruction{isa::End{}, std::nullopt, std::nullopt});
  if (vmem_space) r.vmem_allocation = vmem_space->metrics();
  if (const auto problems = check_program(program, preset); !problems.empty()) {
    throw Error(fmt::format("compile: generated program is invalid: {}", problems.front()));
  }
  const auto program_bytes = program.to_bytes();
  const std::uint64_t program_addr = arena.take(program_bytes.size(), 0, "program");
  r.program_instructions = program.size();
  r.hbm_allocated_bytes = arena.in_use();
  r.vmem_capacity_bytes = preset.vmem_bytes();
  r.acc_capacity_bytes = preset.acc_bytes();

  // ---- run
  auto device = open_device(settings.backend, preset, settings.device);
  r.backend = device->info().backend;
  device->write_hbm(input.addr, pack(input.layout, std::span<const std::int8_t>(x)));
  for (std::size_t i = 0; i < specs.size(); ++i) {
    std::vector<std::int8_t> padded(ref_layers[i].weights);
    padded.resize(weights[i].layout.rows * weights[i].layout.cols, 0);  // whole weight tiles
    device->write_hbm(weights[i].addr, pack(weights[i].layout, std::span<const std::int8_t>(padded)));
  }
  device->load_program(program_addr, program_bytes);
  RunOptions options;
  options.max_cycles = settings.max_cycles;
  options.record_timeline = settings.record_timeline;
  if (settings.record_timeline) r.program = program_bytes;
  r.run = device->run(options);
  r.counters = device->counters();
  r.hbm = device->memory_statistics();
  arena.free_all(r.run.cycles);
  r.hbm_allocation = arena.metrics();
  r.hbm_allocation_samples = arena.samples();
  r.allocation_trace = std::move(arena.trace());
  r.allocation_trace.source = workload.name;
  if (r.hbm) {
    r.hbm_timing_set = preset.hbm.timing_set;
    r.hbm_tck_ns = load_hbm_timing_set(preset.hbm.timing_set).tck_ns();
  }

  // ---- check
  const HbmTensor& out = outputs.back();
  const auto raw = device->read_hbm(out.addr, out.layout.bytes());
  const std::size_t cols = workload.layers.back().out_features;
  if (workload.layers.back().int32_output) {
    compare(unpack<std::int32_t>(out.layout, raw), mlp_reference_int32(x, batch, ref_layers), cols, r);
  } else {
    compare(unpack<std::int8_t>(out.layout, raw), mlp_reference(x, batch, ref_layers), cols, r);
  }

  // ---- metrics
  const Counters& c = r.counters;
  r.cycles = c.cycles;
  const double cycles = static_cast<double>(std::max<std::uint64_t>(r.cycles, 1));
  r.roofline_fraction = static_cast<double>(r.roofline_cycles) / cycles;
  r.mxu_utilization = static_cast<double>(c.mxu_busy) / cycles;
  r.dma_bytes = c.bytes_hbm_to_vmem + c.bytes_vmem_to_hbm + c.bytes_hbm_to_smem + c.bytes_smem_to_hbm +
                c.bytes_acc_to_hbm;
  r.hbm_bytes = (c.mem_read_beats + c.mem_write_beats) * dim;
  r.hbm_bytes_per_cycle = static_cast<double>(r.hbm_bytes) / cycles;
  r.hbm_peak_fraction = r.hbm_bytes_per_cycle / preset.hbm.bytes_per_cycle;
  r.hbm_traffic_over_minimum = static_cast<double>(r.dma_bytes) / static_cast<double>(std::max<std::uint64_t>(r.min_hbm_bytes, 1));
  r.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  r.sim_cycles_per_second = static_cast<double>(r.cycles) / std::max(r.wall_seconds, 1e-9);
  return r;
}

}  // namespace tpuemu
