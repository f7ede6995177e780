// SPDX-License-Identifier: Apache-2.0
#include "tpuemu/run/runner.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include <fmt/format.h>

#include "tpuemu/base/error.h"
#include "tpuemu/compile/model_reference.h"
#include "tpuemu/config/hbm_config.h"
#include "tpuemu/layout/layout.h"
#include "tpuemu/plan/planner.h"
#include "hbm_schedule.h"
#include "tpuemu/compile/model_compiler.h"

namespace tpuemu {
namespace {

template <typename T>
void compare(std::span<const T> got, std::span<const T> want, std::size_t cols, const std::string& what,
             WorkloadReport& r) {
  r.checked_values += want.size();
  for (std::size_t i = 0; i < want.size(); ++i) {
    if (i >= got.size() || got[i] != want[i]) {
      if (r.mismatches == 0) {
        r.first_mismatch = fmt::format("{}[{}][{}] = {}, expected {}", what, i / cols, i % cols,
                                       i < got.size() ? static_cast<std::int64_t>(got[i]) : 0,
                                       static_cast<std::int64_t>(want[i]));
      }
      ++r.mismatches;
    }
  }
}

Preset with_capacity(const Preset& preset, const RunSettings& settings) {
  Preset p = preset;
  if (settings.hbm_capacity) {
    const std::uint64_t cap = *settings.hbm_capacity;
    if (cap == 0 || cap % preset.dim != 0 || cap > preset.hbm.capacity_bytes) {
      throw Error(fmt::format("--hbm-capacity {}: must be a positive multiple of {} bytes and at most the preset's {} bytes",
                              cap, preset.dim, preset.hbm.capacity_bytes));
    }
    p.hbm.capacity_bytes = cap;
  }
  return p;
}

}  // namespace

WorkloadReport run_workload(const Preset& preset, const Workload& workload, const RunSettings& settings) {
  return run_model(preset, model_from_workload(workload), settings);
}

// ---------------------------------------------------------------------------------------------
// ModelRun: run_model in pieces
// ---------------------------------------------------------------------------------------------

std::string_view step_kind_name(StepKind kind) {
  switch (kind) {
    case StepKind::Launch: return "launch";
    case StepKind::Gather: return "gather";
    case StepKind::GatherWeights: return "gather weights";
  }
  return "?";
}

struct ModelRun::State {
  State(const Preset& base_preset, const Model& model_, const RunSettings& settings_, std::optional<DevicePart> part_)
      : preset(with_capacity(base_preset, settings_)), model(model_), settings(settings_), part(std::move(part_)) {
    prepare();
  }

  // Compiles, schedules and places every step; generates the data and its reference.
  void prepare() {
  r.workload = model.name;
  r.preset = preset.name;
  r.backend = settings.backend;
  r.buffers = settings.compile.buffers;
  r.tiled = settings.tiled;
  r.clock_ghz = preset.clock_ghz;
  r.batch = settings.batch.value_or(model.batch);
  r.requests = settings.requests;
  if (r.batch == 0 || r.batch > kMaxDimension) throw Error(fmt::format("--batch {} is not in 1..{}", r.batch, kMaxDimension));
  if (r.requests == 0 || r.requests > 64) throw Error(fmt::format("--requests {} is not in 1..64", r.requests));
  const std::uint32_t dim = preset.dim;
  // The memory that runs, not a figure the preset might carry (the roofline's memory bound).
  const MemoryPortPeak port = memory_port_peak(preset);
  r.memory_port_bytes_per_cycle = port.bytes_per_cycle;
  r.memory_port_basis = port.basis;

  // ---- what lives in HBM when, and where. The program's size is measured by compiling every
  // step once against placeholder addresses (instruction counts do not depend on them).
  ModelCompiler sizing(preset, model, r.batch, settings.compile, settings.tiled, settings.vmem_allocator);
  WeightSharding sharding;
  if (part) sharding = {part->weight_parts, part->prefetch_weights};
  schedule = make_hbm_schedule(sizing, r.requests, sharding);
  for (std::size_t s = 0; s < schedule.steps.size(); ++s) {
    if (schedule.steps[s].kind != StepKind::Launch) continue;
    Program p;
    StepAddresses at;
    at.inputs.assign(model.layers[schedule.steps[s].layer].inputs.size(), 0);
    sizing.compile_step(schedule.steps[s].layer, at, p);
    schedule.buffers[schedule.program_buffer[s]].size = p.size() * 32;
  }
  placement = place_hbm_schedule(schedule, preset, settings);
  r.hbm_placement = placement.method;

  // ---- compile every step with the placed addresses
  compiler = std::make_unique<ModelCompiler>(preset, model, r.batch, settings.compile, settings.tiled, settings.vmem_allocator);
  for (const ScheduleStep& step : schedule.steps) {
    const ModelLayer& layer = model.layers[step.layer];
    programs.emplace_back();
    if (step.kind == StepKind::GatherWeights) continue;
    LayerReport lr;
    lr.name = layer.name;
    lr.kind = layer.kind;
    lr.in = layer.in;
    lr.out = layer.out;
    if (step.kind == StepKind::Gather) {
      if (step.request != 0) continue;
      lr.padding_bytes = compiler->layout(step.layer + 1).padding_bytes();
      r.padding_bytes += lr.padding_bytes;
      r.layers.push_back(lr);
      continue;
    }
    StepAddresses at;
    for (std::size_t t : layer.inputs) at.inputs.push_back(placement.tensor_addr(schedule, step.request, t));
    at.output = placement.tensor_addr(schedule, step.request, step.layer + 1);
    if (schedule.weight_buffer[step.layer] != kNoBuffer) at.weights = placement.offsets[schedule.weight_buffer[step.layer]];
    if (schedule.bias_buffer[step.layer] != kNoBuffer) at.bias = placement.offsets[schedule.bias_buffer[step.layer]];
    if (schedule.zeros_buffer != kNoBuffer) at.zeros = placement.offsets[schedule.zeros_buffer];
    const StepPlan sp = compiler->compile_step(step.layer, at, programs.back());
    if (step.request != 0) continue;
    lr.spec = sp.spec;
    lr.plan = sp.plan;
    lr.ideal_cycles = sp.ideal_cycles;
    lr.min_hbm_bytes = sp.min_hbm_bytes;
    lr.memory_bound_cycles = static_cast<std::uint64_t>(
        std::ceil(static_cast<double>(lr.min_hbm_bytes) / r.memory_port_bytes_per_cycle));
    lr.roofline_cycles = std::max(lr.ideal_cycles, lr.memory_bound_cycles);
    lr.padding_bytes = sp.padding_bytes;
    r.padding_bytes += lr.padding_bytes;
    r.ideal_cycles += lr.ideal_cycles * r.requests;
    r.min_hbm_bytes += lr.min_hbm_bytes * r.requests;
    r.roofline_cycles += lr.roofline_cycles * r.requests;
    r.vmem_peak_bytes = std::max<std::uint64_t>(r.vmem_peak_bytes, std::uint64_t{sp.vmem_rows_used} * dim);
    r.acc_peak_bytes = std::max<std::uint64_t>(r.acc_peak_bytes, std::uint64_t{sp.acc_rows_used} * dim * 4);
    r.layers.push_back(lr);
  }
  r.padding_bytes += compiler->layout(0).padding_bytes();
  r.vmem_allocation = compiler->vmem_metrics();
  for (std::size_t s = 0; s < programs.size(); ++s) {
    const Program& p = programs[s];
    if (schedule.steps[s].kind != StepKind::Launch) {
      program_bytes.emplace_back();
      continue;
    }
    if (const auto problems = check_program(p, preset); !problems.empty()) {
      throw Error(fmt::format("compile: generated program is invalid: {}", problems.front()));
    }
    program_bytes.push_back(p.to_bytes());
    r.program_instructions += p.size();
    if (program_bytes.back().size() != schedule.buffers[schedule.program_buffer[s]].size) {
      throw Error(fmt::format("compile: step {} has {} bytes of program, {} were measured before placement", s,
                              program_bytes.back().size(), schedule.buffers[schedule.program_buffer[s]].size));
    }
  }

  // ---- data: generated from the seed (per request), parameters per layer
  if (part) {
    if (part->params.size() != model.layers.size() || part->inputs.size() != r.requests || part->expected.size() != r.requests) {
      throw Error("run: the device's part has the wrong number of layers or requests");
    }
    params = std::move(part->params);
    inputs = std::move(part->inputs);
    expected = std::move(part->expected);
  } else {
    for (std::size_t i = 0; i < model.layers.size(); ++i) params.push_back(random_layer_params(model.layers[i], model.seed, i));
    for (std::size_t q = 0; q < r.requests; ++q) {
      inputs.push_back(random_input(model.rows(0, r.batch) * model.input.channels, model.seed, q));
      expected.push_back(model_reference(model, r.batch, inputs.back(), params, StopToken(settings.interrupted)));
    }
  }
  not_before.assign(schedule.steps.size(), 0);

  }

  // Opens the device and writes what lives for the whole run.
  void start() {
  // ---- run: constants first, then one launch per step, each request's input written just
  // before its first step and every output checked right after the step that wrote it
  device = open_device(settings.backend, preset, settings.device);
  r.backend = device->info().backend;
  r.cycles_approximate = device->info().cycles_approximate;
  for (std::size_t i = 0; i < model.layers.size(); ++i) {
    if (schedule.weight_shard_buffer[i] != kNoBuffer) {
      device->write_hbm(placement.offsets[schedule.weight_shard_buffer[i]], weight_shard(i));
    } else if (schedule.weight_buffer[i] != kNoBuffer) {
      device->write_hbm(placement.offsets[schedule.weight_buffer[i]], compiler->weight_image(i, params[i]));
    }
    if (schedule.bias_buffer[i] != kNoBuffer) {
      device->write_hbm(placement.offsets[schedule.bias_buffer[i]], compiler->bias_image(i, params[i]));
    }
  }
  if (schedule.zeros_buffer != kNoBuffer) {
    device->write_hbm(placement.offsets[schedule.zeros_buffer], std::vector<std::uint8_t>(compiler->zeros_bytes(), 0));
  }
    options.max_cycles = settings.max_cycles;
    options.record_timeline = settings.record_timeline;
    // A long launch stops within its slice, not at the next step (docs/cli.md, "Exit codes").
    if (settings.interrupted) options.stop = StopToken(settings.interrupted);
  }

  void report_progress(std::size_t done) const {
    if (!settings.progress) return;
    RunProgress p;
    p.steps_done = done;
    p.steps_total = schedule.steps.size();
    p.layer = done < schedule.steps.size() ? model.layers[schedule.steps[done].layer].name : "";
    p.cycles = now;
    p.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
    p.fraction_done = r.roofline_cycles == 0 ? 0 : static_cast<double>(bound_done) / static_cast<double>(r.roofline_cycles);
    settings.progress(p);
  }

  // One launch: the request's input before its first step, the program, the check of its output.
  // This device's part of layer i's weight image (the last part padded with zeros).
  std::vector<std::uint8_t> weight_shard(std::size_t i) const {
    const std::vector<std::uint8_t> image = compiler->weight_image(i, params[i]);
    const std::uint64_t bytes = schedule.weight_shard_bytes(i);
    std::vector<std::uint8_t> shard(bytes, 0);
    const std::uint64_t begin = std::min<std::uint64_t>(part->weight_part * bytes, image.size());
    const std::uint64_t end = std::min<std::uint64_t>(begin + bytes, image.size());
    std::copy(image.begin() + static_cast<std::ptrdiff_t>(begin), image.begin() + static_cast<std::ptrdiff_t>(end), shard.begin());
    return shard;
  }

  const ScheduleStep& host_step(std::size_t s) const {
    if (s >= schedule.steps.size() || schedule.steps[s].kind == StepKind::Launch) {
      throw Error(fmt::format("run: step {} is not a collective", s));
    }
    return schedule.steps[s];
  }

  template <typename T>
  static std::vector<std::uint8_t> values_to_bytes(const std::vector<T>& v) {
    std::vector<std::uint8_t> out(v.size() * sizeof(T));
    for (std::size_t i = 0; i < v.size(); ++i) {
      const auto u = static_cast<std::make_unsigned_t<T>>(v[i]);
      for (std::size_t b = 0; b < sizeof(T); ++b) out[i * sizeof(T) + b] = static_cast<std::uint8_t>(u >> (8 * b));
    }
    return out;
  }
  template <typename T>
  static std::vector<T> bytes_to_values(std::span<const std::uint8_t> bytes) {
    std::vector<T> v(bytes.size() / sizeof(T));
    for (std::size_t i = 0; i < v.size(); ++i) {
      std::make_unsigned_t<T> u = 0;
      for (std::size_t b = 0; b < sizeof(T); ++b) u |= static_cast<std::make_unsigned_t<T>>(bytes[i * sizeof(T) + b]) << (8 * b);
      v[i] = static_cast<T>(u);
    }
    return v;
  }

  std::vector<std::uint8_t> read_part(std::size_t s) {
    const ScheduleStep& step = host_step(s);
    if (step.kind == StepKind::GatherWeights) {
      return device->read_hbm(placement.offsets[schedule.weight_shard_buffer[step.layer]], schedule.weight_shard_bytes(step.layer));
    }
    const std::size_t t = model.layers[step.layer].inputs[0];
    const TiledLayout& layout = compiler->layout(t);
    const auto raw = device->read_hbm(placement.tensor_addr(schedule, step.request, t), layout.bytes());
    return layout.elem_bytes == 4 ? values_to_bytes(unpack<std::int32_t>(layout, raw)) : values_to_bytes(unpack<std::int8_t>(layout, raw));
  }

  void write_whole(std::size_t s, std::span<const std::uint8_t> whole) {
    const ScheduleStep& step = host_step(s);
    if (step.kind == StepKind::GatherWeights) {
      const std::uint64_t bytes = compiler->weight_layout(step.layer).bytes();
      if (whole.size() < bytes) throw Error(fmt::format("run: gathered weights of '{}' have {} bytes, not {}", model.layers[step.layer].name, whole.size(), bytes));
      device->write_hbm(placement.offsets[schedule.weight_buffer[step.layer]], whole.first(bytes));
      return;
    }
    const std::size_t t = step.layer + 1;
    const TiledLayout& layout = compiler->layout(t);
    const std::uint64_t addr = placement.tensor_addr(schedule, step.request, t);
    if (layout.elem_bytes == 4) {
      device->write_hbm(addr, pack(layout, bytes_to_values<std::int32_t>(whole)));
    } else {
      device->write_hbm(addr, pack(layout, bytes_to_values<std::int8_t>(whole)));
    }
    check_output(step);
  }

  void complete_collective(std::size_t s, std::uint64_t issue, std::uint64_t end) {
    const ScheduleStep& step = host_step(s);
    if (issue < now || end < issue) throw Error(fmt::format("run: collective of step {} from {} to {} is not after the clock ({})", s, issue, end, now));
    if (step.overlapped) {
      std::size_t consumer = s + 1;
      while (schedule.steps[consumer].kind != StepKind::Launch || schedule.steps[consumer].layer != step.layer) ++consumer;
      not_before[consumer] = std::max(not_before[consumer], end);
    } else {
      now = end;
    }
    r.steps.push_back({step.layer, step.request, issue, end, 0, step.kind});
  }

  // Reads back the tensor `step` wrote and compares it with the reference.
  void check_output(const ScheduleStep& step) {
    const ModelLayer& layer = model.layers[step.layer];
    const ReferenceTensor& want = expected[step.request][step.layer + 1];
    const std::string what = r.requests > 1 ? fmt::format("{}[r{}]", layer.name, step.request) : layer.name;
    const std::uint64_t out_addr = placement.tensor_addr(schedule, step.request, step.layer + 1);
    const TiledLayout& out_layout = compiler->layout(step.layer + 1);
    const auto raw = device->read_hbm(out_addr, out_layout.bytes());
    if (out_layout.elem_bytes == 4) {
      compare<std::int32_t>(unpack<std::int32_t>(out_layout, raw), want.int32, layer.out.channels, what, r);
    } else {
      compare<std::int8_t>(unpack<std::int8_t>(out_layout, raw), want.int8, layer.out.channels, what, r);
    }
  }

  void run_step(std::size_t s) {
  const ScheduleStep& step = schedule.steps[s];
  const ModelLayer& layer = model.layers[step.layer];
  if (step.kind != StepKind::Launch) {
    throw Error(fmt::format("run: step {} ({} '{}') is a collective: the sharded runner moves its data", s, step_kind_name(step.kind), layer.name));
  }
  now = std::max(now, not_before[s]);
  if (settings.interrupted && settings.interrupted()) {
    throw Interrupted(fmt::format("interrupted before step {} of {} (layer '{}'); nothing was written", s + 1,
                                  schedule.steps.size(), layer.name));
  }
  report_progress(s);
  if (step.first_of_request) {
    device->write_hbm(placement.tensor_addr(schedule, step.request, 0), compiler->input_image(inputs[step.request]));
  }
  device->load_program(placement.offsets[schedule.program_buffer[s]], program_bytes[s]);
  const RunResult run = device->run(options);
  // A launch starts the counters from zero: the run's counters are the sum over its launches.
  const auto step_counters = device->counters().to_array();
  auto total = r.counters.to_array();
  for (std::size_t j = 0; j < total.size(); ++j) total[j] += step_counters[j];
  r.counters = Counters::from_array(total);
  if (settings.record_timeline) {
    StepTimeline t;
    t.step = s;
    t.spans = instruction_spans(run.timeline, program_bytes[s]);
    auto shift = [now = now](std::optional<std::uint64_t>& c) {
      if (c) *c += now;
    };
    for (InstructionSpan& span : t.spans) {
      shift(span.issue);
      shift(span.done);
      shift(span.wait_begin);
      shift(span.wait_end);
    }
    for (HbmInterval h : run.hbm_timeline) {
      h.begin += now;
      h.end += now;
      t.hbm.push_back(h);
    }
    r.timelines.push_back(std::move(t));
    r.program = program_bytes[s];
  }
  StepReport sr{step.layer, step.request, now, now + run.cycles, programs[s].size()};
  now += run.cycles;
  compute += run.cycles;
  bound_done += r.layers[step.layer].roofline_cycles;
  r.steps.push_back(sr);
  r.run = run;
  check_output(step);
  }

  // The allocator's view at the measured times, and the run's figures.
  WorkloadReport finish() {
  report_progress(schedule.steps.size());
  const std::uint32_t dim = preset.dim;
  r.bit_exact = r.mismatches == 0 && r.checked_values > 0;
  r.hbm = device->memory_statistics();
  if (r.hbm) {
    r.hbm_timing_set = preset.hbm.timing_set;
    r.hbm_tck_ns = load_hbm_timing_set(preset.hbm.timing_set).tck_ns();
  }

  // ---- the allocator's view at the measured times
  const HbmTimeline timeline = replay_hbm_schedule(schedule, placement, preset, settings, r.steps, now);
  r.hbm_allocation = timeline.metrics;
  r.hbm_allocation_samples = timeline.samples;
  r.allocation_trace = timeline.trace;
  r.allocation_trace.source = model.name;
  r.hbm_allocated_bytes = timeline.metrics.peak_in_use_bytes;

  // ---- metrics
  const Counters& c = r.counters;
  r.cycles = now;
  const double cycles = static_cast<double>(std::max<std::uint64_t>(r.cycles, 1));
  r.roofline_fraction = static_cast<double>(r.roofline_cycles) / cycles;
  r.mxu_utilization = static_cast<double>(c.mxu_busy) / cycles;
  r.dma_bytes = c.bytes_hbm_to_vmem + c.bytes_vmem_to_hbm + c.bytes_hbm_to_smem + c.bytes_smem_to_hbm +
                c.bytes_acc_to_hbm;
  r.hbm_bytes = (c.mem_read_beats + c.mem_write_beats) * dim;
  r.hbm_bytes_per_cycle = static_cast<double>(r.hbm_bytes) / cycles;
  r.hbm_peak_fraction = r.hbm_bytes_per_cycle / r.memory_port_bytes_per_cycle;
  r.hbm_traffic_over_minimum = static_cast<double>(r.dma_bytes) / static_cast<double>(std::max<std::uint64_t>(r.min_hbm_bytes, 1));
  r.vmem_capacity_bytes = preset.vmem_bytes();
  r.acc_capacity_bytes = preset.acc_bytes();
  r.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  r.sim_cycles_per_second = static_cast<double>(r.cycles) / std::max(r.wall_seconds, 1e-9);
  return r;
  }

  const std::chrono::steady_clock::time_point wall_start = std::chrono::steady_clock::now();
  const Preset preset;
  const Model model;
  const RunSettings settings;
  std::optional<DevicePart> part;
  WorkloadReport r;
  HbmSchedule schedule;
  HbmPlacement placement;
  std::unique_ptr<ModelCompiler> compiler;
  std::vector<Program> programs;
  std::vector<std::vector<std::uint8_t>> program_bytes;
  std::vector<LayerParams> params;
  std::vector<std::vector<ReferenceTensor>> expected;
  std::vector<std::vector<std::int8_t>> inputs;
  std::unique_ptr<Device> device;
  RunOptions options;
  std::uint64_t now = 0;
  std::uint64_t compute = 0;               // cycles of the launches
  std::vector<std::uint64_t> not_before;   // per step: an overlapped collective it waits for
  std::uint64_t bound_done = 0;  // roofline cycles of the steps done: the ETA's measure of work
};

ModelRun::ModelRun(const Preset& preset, const Model& model, const RunSettings& settings)
    : state_(std::make_unique<State>(preset, model, settings, std::nullopt)) {}
ModelRun::ModelRun(const Preset& preset, const Model& model, const RunSettings& settings, DevicePart part)
    : state_(std::make_unique<State>(preset, model, settings, std::move(part))) {}
ModelRun::~ModelRun() = default;
ModelRun::ModelRun(ModelRun&&) noexcept = default;
ModelRun& ModelRun::operator=(ModelRun&&) noexcept = default;

void ModelRun::start() { state_->start(); }
std::size_t ModelRun::step_count() const { return state_->schedule.steps.size(); }
void ModelRun::run_step(std::size_t s) {
  if (!state_->device) throw Error("run: run_step before start");
  state_->run_step(s);
}
WorkloadReport ModelRun::finish() { return state_->finish(); }
Device& ModelRun::device() {
  if (!state_->device) throw Error("run: no device before start");
  return *state_->device;
}
std::uint64_t ModelRun::cycles() const { return state_->now; }
std::uint64_t ModelRun::compute_cycles() const { return state_->compute; }
alloc::SpaceMetrics ModelRun::planned_hbm_metrics() const {
  const State& st = *state_;
  std::vector<StepReport> logical(st.schedule.steps.size());
  for (std::size_t s = 0; s < logical.size(); ++s) {
    logical[s].start_cycle = 2 * s + 1;
    logical[s].end_cycle = 2 * s + 2;
  }
  return replay_hbm_schedule(st.schedule, st.placement, st.preset, st.settings, logical, 2 * logical.size() + 1).metrics;
}
StepKind ModelRun::step_kind(std::size_t s) const { return state_->schedule.steps.at(s).kind; }
std::size_t ModelRun::step_layer(std::size_t s) const { return state_->schedule.steps.at(s).layer; }
bool ModelRun::step_overlapped(std::size_t s) const { return state_->schedule.steps.at(s).overlapped; }
std::vector<std::uint8_t> ModelRun::read_part(std::size_t s) {
  if (!state_->device) throw Error("run: read_part before start");
  return state_->read_part(s);
}
void ModelRun::write_whole(std::size_t s, std::span<const std::uint8_t> whole) {
  if (!state_->device) throw Error("run: write_whole before start");
  state_->write_whole(s, whole);
}
void ModelRun::complete_collective(std::size_t s, std::uint64_t issue, std::uint64_t end) {
  state_->complete_collective(s, issue, end);
}

WorkloadReport run_model(const Preset& preset, const Model& model, const RunSettings& settings) {
  ModelRun run(preset, model, settings);
  run.start();
  for (std::size_t s = 0; s < run.step_count(); ++s) run.run_step(s);
  return run.finish();
}

std::optional<std::string> hbm_capacity_problem(const Preset& preset, std::uint64_t bytes) {
  if (bytes % preset.dim == 0 && bytes <= preset.hbm.capacity_bytes) return std::nullopt;
  return fmt::format("must be a multiple of {} bytes (preset {}'s beat) and at most its {} bytes of HBM", preset.dim,
                     preset.name, preset.hbm.capacity_bytes);
}

}  // namespace tpuemu
