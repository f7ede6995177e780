// SPDX-License-Identifier: Apache-2.0
// live_buffers(): the three liveness units composed into the BufferSet every placement policy
// places (docs/hlo.md, "Liveness, schedules and sizes"): the dataflow on the flattened schedule
// (dataflow.cpp), which values share a buffer (alias_analysis.cpp), and when each buffer is live
// (live_range.cpp). Names are made here, once per buffer; descriptions when a report asks.
#include <memory>
#include <string>
#include <vector>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "liveness_detail.h"
#include "tpuemu/plan/peak_sweep.h"
#include "tpuemu/hlo/alias_analysis.h"
#include "tpuemu/hlo/live_range.h"
#include "tpuemu/hlo/liveness.h"

namespace tpuemu::hlo {
namespace {

static_assert(BufferOrigin::kIndexTableLeaf == kIndexTable, "an origin's leaf is its value's");

std::string shorten(const std::string& text) {
  constexpr std::size_t kMax = 160;
  return text.size() <= kMax ? text : text.substr(0, kMax - 3) + "...";
}

// The array leaf `leaf` (depth first) of a tuple shape, and its tuple index path.
const Shape* leaf_of(const Shape& shape, std::int32_t leaf, std::vector<std::int64_t>& path) {
  std::int32_t seen = 0;
  const auto walk = [&](auto& self, const Shape& s) -> const Shape* {
    if (!s.is_tuple()) return seen++ == leaf ? &s : nullptr;
    for (std::size_t i = 0; i < s.elements.size(); ++i) {
      path.push_back(static_cast<std::int64_t>(i));
      if (const Shape* found = self(self, s.elements[i])) return found;
      path.pop_back();
    }
    return nullptr;
  };
  return walk(walk, shape);
}

// A buffer's description, made when a report asks, from its origin in the module.
class ModuleDescriber final : public BufferDescriber {
 public:
  ModuleDescriber(const Module& module, const SizeOptions& sizes) : module_(module), sizes_(sizes) {}

  BufferDescription describe(const LiveBuffer& b) const override {
    BufferDescription d;
    const BufferOrigin& o = b.origin;
    if (o.computation >= module_.computations.size()) return d;
    const Computation& comp = module_.computations[o.computation];
    if (o.instruction >= comp.instructions.size()) return d;
    const Instruction& ins = comp.instructions[o.instruction];
    if (o.leaf == BufferOrigin::kIndexTableLeaf) {
      d.shape = ins.shape.to_string();
    } else {
      std::vector<std::int64_t> path;
      const Shape* shape = ins.shape.is_tuple() ? leaf_of(ins.shape, o.leaf, path) : &ins.shape;
      if (shape != nullptr) d.shape = array_shape_text(*shape, sizes_);
    }
    const Metadata& metadata = module_.metadata_of(ins);
    d.op_name = metadata.op_name;
    if (!metadata.source_file.empty()) d.source = metadata.source_file + ":" + std::to_string(metadata.source_line);
    d.instruction = shorten(module_.instruction_text(ins));
    d.computation = comp.name;
    return d;
  }

  // "f32[8,128]{1,0:T(8,128)}": an array shape with the tiled layout its bytes are counted in.
  static std::string array_shape_text(const Shape& shape, const SizeOptions& sizes) {
    std::string dims;
    for (std::size_t i = 0; i < shape.dims.size(); ++i) {
      if (i > 0) dims += ',';
      dims += std::to_string(shape.dims[i]);
    }
    return std::string(type_name(shape.type)) + "[" + dims + "]" + shape_bytes(shape, sizes).layout;
  }

 private:
  const Module& module_;
  SizeOptions sizes_;
};

// A buffer's name from its origin: the defining instruction, with the tuple index of an element
// ("p.1{1}"), "(index table)" for a tuple's table, "(copy)" for each copy made of it; and its
// memory space, the leaf's layout's.
class Namer {
 public:
  explicit Namer(const Module& module) : module_(module) {}

  void name(LiveBuffer& b) {
    const BufferOrigin& o = b.origin;
    const Instruction& ins = module_.computations[o.computation].instructions[o.instruction];
    if (o.leaf == BufferOrigin::kIndexTableLeaf) {
      b.name = ins.name + " (index table)";
    } else if (!ins.shape.is_tuple()) {
      b.name = ins.name;
      b.memory_space = ins.shape.layout ? ins.shape.layout->memory_space : 0;
    } else {
      const detail::ShapeLeaf& leaf = leaves(o)[static_cast<std::size_t>(o.leaf)];
      b.name = ins.name + detail::path_text(leaf.path);
      b.memory_space = leaf.shape->layout ? leaf.shape->layout->memory_space : 0;
    }
    for (std::uint32_t c = 0; c < o.copies; ++c) b.name += " (copy)";
  }

 private:
  // A tuple-shaped instruction's leaves, kept for the next buffers: an instruction's values are
  // numbered together, so its buffers mostly are too.
  const std::vector<detail::ShapeLeaf>& leaves(const BufferOrigin& o) {
    if (!leaves_valid_ || leaves_computation_ != o.computation || leaves_instruction_ != o.instruction) {
      leaves_ = detail::leaves_of(module_.computations[o.computation].instructions[o.instruction].shape);
      leaves_computation_ = o.computation;
      leaves_instruction_ = o.instruction;
      leaves_valid_ = true;
    }
    return leaves_;
  }

  const Module& module_;
  std::vector<detail::ShapeLeaf> leaves_;
  std::uint32_t leaves_computation_ = 0, leaves_instruction_ = 0;
  bool leaves_valid_ = false;
};

// What one phase freed (a scheduler's lists, the dataflow and the alias analysis of a module of
// millions of positions) stays resident in the heap when glibc's raised mmap threshold kept it off
// mmap, and the next phase's tables, other sizes, do not fit its holes: the C library is asked to
// hand the free pages back to the system, or they would count in the process's memory twice.
void return_free_memory() {
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
}

// Per buffer of one schedule, what its peaks and its LiveBuffer are made of, in a few bytes: the
// dataflow and the alias analysis (many times larger) are gone before the buffers are made.
struct BufferTable {
  std::int64_t positions = 0;
  std::vector<std::uint64_t> bytes, unpadded;
  std::vector<LiveInterval> ranges;
  // With origins only:
  std::vector<BufferOrigin> origins;
  std::vector<BufferKind> kinds;
  std::vector<bool> whole_program, shares_argument;

  std::size_t size() const { return bytes.size(); }
};

BufferTable buffer_table(const Module& module, const Schedule& schedule, const SizeOptions& sizes, bool origins) {
  return_free_memory();  // of what came before: the schedule's making, other liveness runs
  AliasAnalysis alias = AliasAnalysis::run(module, schedule, sizes);
  const Dataflow& flow = alias.dataflow();
  BufferTable t;
  t.positions = flow.positions();
  {
    // The positions are needed for the values' ranges only: they are freed before the buffers'
    // ranges are made.
    std::vector<LiveInterval> values = value_live_ranges(flow);
    alias.release_positions();
    BufferLiveRanges ranges = buffer_live_ranges(alias, values);
    t.ranges = std::move(ranges.ranges);
    if (origins) t.whole_program = std::move(ranges.whole_program);
  }

  // Per buffer: its earliest-defined value names and describes it (the loop state by the value
  // entering the loop, a donated output by its argument); its size is its largest value's.
  const std::size_t n = alias.buffer_count();
  t.bytes.assign(n, 0);
  t.unpadded.assign(n, 0);
  std::vector<ValueId> first;
  std::vector<bool> parameter, constant;
  if (origins) {
    first.assign(n, kNoValue);
    parameter.assign(n, false);
    constant.assign(n, false);
  }
  for (std::size_t v = 0; v < flow.values().size(); ++v) {
    const HloValue& value = flow.values()[v];
    const std::uint32_t b = alias.buffer_of(static_cast<ValueId>(v));
    t.bytes[b] = std::max(t.bytes[b], value.bytes);
    t.unpadded[b] = std::max(t.unpadded[b], value.unpadded);
    if (!origins) continue;
    if (first[b] == kNoValue || value.position < flow.value(first[b]).position) first[b] = static_cast<ValueId>(v);
    parameter[b] = parameter[b] || value.kind == BufferKind::Parameter;
    constant[b] = constant[b] || value.kind == BufferKind::Constant;
  }
  if (!origins) return t;

  t.origins.resize(n);
  t.kinds.resize(n);
  t.shares_argument.assign(n, false);
  for (std::uint32_t b = 0; b < n; ++b) {
    const HloValue& value = flow.value(first[b]);
    BufferOrigin& o = t.origins[b];
    o = {.computation = value.computation, .instruction = value.instruction, .leaf = value.leaf};
    for (ValueId c = first[b]; flow.value(c).copy_of != kNoValue; c = flow.value(c).copy_of) ++o.copies;
    // An output that is a donated argument is reported as an output sharing the argument; a
    // parameter or constant returned as is stays what it is.
    if (alias.shares_argument(b)) {
      t.kinds[b] = BufferKind::Output;
      t.shares_argument[b] = true;
    } else if (parameter[b]) {
      t.kinds[b] = BufferKind::Parameter;
    } else if (alias.is_output(b)) {
      t.kinds[b] = BufferKind::Output;
    } else if (constant[b]) {
      t.kinds[b] = BufferKind::Constant;
    } else {
      t.kinds[b] = BufferKind::Temp;
    }
  }
  return t;
}

// Visits every buffer of the table with the size `size(b)`, for plan::sweep_live.
template <typename Size>
auto each_buffer(const BufferTable& t, Size size) {
  return [&t, size](const auto& visit) {
    for (std::size_t b = 0; b < t.size(); ++b) visit(t.ranges[b].start, t.ranges[b].end, size(b));
  };
}

}  // namespace

BufferSet live_buffers(const Module& module, const Schedule& schedule, const SizeOptions& sizes) {
  const BufferTable t = buffer_table(module, schedule, sizes, true);
  return_free_memory();  // of the dataflow and the alias analysis
  BufferSet set;
  set.positions = t.positions;
  set.buffers.resize(t.size());
  set.describer = std::make_shared<ModuleDescriber>(module, sizes);
  Namer namer(module);
  for (std::size_t b = 0; b < t.size(); ++b) {
    LiveBuffer& out = set.buffers[b];
    out.origin = t.origins[b];
    namer.name(out);
    out.bytes = t.bytes[b];
    out.unpadded = t.unpadded[b];
    out.start = t.ranges[b].start;
    out.end = t.ranges[b].end;
    out.whole_program = t.whole_program[b];
    out.kind = t.kinds[b];
    out.shares_argument = t.shares_argument[b];
  }
  return set;
}

namespace detail {

SchedulePeaks live_peaks(const Module& module, const Schedule& schedule, const SizeOptions& sizes) {
  const BufferTable t = buffer_table(module, schedule, sizes, false);
  return {.padded = plan::saturated(
              plan::sweep_live(t.positions, each_buffer(t, [&](std::size_t b) { return t.bytes[b]; }), -1).highest),
          .unpadded = plan::saturated(
              plan::sweep_live(t.positions, each_buffer(t, [&](std::size_t b) { return t.unpadded[b]; }), -1).highest)};
}

}  // namespace detail

}  // namespace tpuemu::hlo
