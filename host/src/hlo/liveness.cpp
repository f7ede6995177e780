// SPDX-License-Identifier: Apache-2.0
// live_buffers(): the three liveness units composed into the BufferSet every placement policy
// places (docs/hlo.md, "Liveness, schedules and sizes"): the dataflow on the flattened schedule
// (dataflow.cpp), which values share a buffer (alias_analysis.cpp), and when each buffer is live
// (live_range.cpp). Names are made here, once per buffer; descriptions when a report asks.
#include <memory>
#include <string>
#include <vector>

#include "liveness_detail.h"
#include "tpuemu/hlo/alias_analysis.h"
#include "tpuemu/hlo/live_range.h"
#include "tpuemu/hlo/liveness.h"

namespace tpuemu::hlo {
namespace {

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

// A buffer's name and origin from the value that names it: the defining instruction, with the
// tuple index of an element ("p.1{1}"), "(index table)" for a tuple's table, "(copy)" for each
// copy made of it; its memory space the leaf's layout's.
class Namer {
 public:
  Namer(const Module& module, const Dataflow& flow) : module_(module), flow_(flow) {}

  void name(ValueId v, LiveBuffer& b) {
    const HloValue& value = flow_.value(v);
    const Instruction& ins = module_.computations[value.computation].instructions[value.instruction];
    b.origin = {.computation = value.computation, .instruction = value.instruction, .leaf = value.leaf};
    if (value.leaf == kIndexTable) {
      b.name = ins.name + " (index table)";
    } else if (!ins.shape.is_tuple()) {
      b.name = ins.name;
      b.memory_space = ins.shape.layout ? ins.shape.layout->memory_space : 0;
    } else {
      const detail::ShapeLeaf& leaf = leaves(value)[static_cast<std::size_t>(value.leaf)];
      b.name = ins.name + detail::path_text(leaf.path);
      b.memory_space = leaf.shape->layout ? leaf.shape->layout->memory_space : 0;
    }
    for (ValueId c = v; flow_.value(c).copy_of != kNoValue; c = flow_.value(c).copy_of) {
      b.name += " (copy)";
      ++b.origin.copies;
    }
  }

 private:
  // A tuple-shaped instruction's leaves, kept for the next values: an instruction's values are
  // numbered together, so its buffers mostly are too.
  const std::vector<detail::ShapeLeaf>& leaves(const HloValue& value) {
    if (!leaves_valid_ || leaves_computation_ != value.computation || leaves_instruction_ != value.instruction) {
      leaves_ = detail::leaves_of(module_.computations[value.computation].instructions[value.instruction].shape);
      leaves_computation_ = value.computation;
      leaves_instruction_ = value.instruction;
      leaves_valid_ = true;
    }
    return leaves_;
  }

  const Module& module_;
  const Dataflow& flow_;
  std::vector<detail::ShapeLeaf> leaves_;
  std::uint32_t leaves_computation_ = 0, leaves_instruction_ = 0;
  bool leaves_valid_ = false;
};

}  // namespace

BufferSet live_buffers(const Module& module, const Schedule& schedule, const SizeOptions& sizes) {
  const AliasAnalysis alias = AliasAnalysis::run(module, schedule, sizes);
  const Dataflow& flow = alias.dataflow();
  const BufferLiveRanges ranges = buffer_live_ranges(alias, value_live_ranges(flow));

  // Per buffer: its earliest-defined value names and describes it (the loop state by the value
  // entering the loop, a donated output by its argument); its size is its largest value's.
  const std::size_t n = alias.buffer_count();
  std::vector<ValueId> first(n, kNoValue);
  std::vector<std::uint64_t> bytes(n, 0), unpadded(n, 0);
  std::vector<bool> parameter(n, false), constant(n, false);
  for (std::size_t v = 0; v < flow.values().size(); ++v) {
    const HloValue& value = flow.values()[v];
    const std::uint32_t b = alias.buffer_of(static_cast<ValueId>(v));
    if (first[b] == kNoValue || value.position < flow.value(first[b]).position) first[b] = static_cast<ValueId>(v);
    bytes[b] = std::max(bytes[b], value.bytes);
    unpadded[b] = std::max(unpadded[b], value.unpadded);
    parameter[b] = parameter[b] || value.kind == BufferKind::Parameter;
    constant[b] = constant[b] || value.kind == BufferKind::Constant;
  }

  BufferSet set;
  set.positions = flow.positions();
  set.buffers.resize(n);
  set.describer = std::make_shared<ModuleDescriber>(module, sizes);
  Namer namer(module, flow);
  for (std::uint32_t b = 0; b < n; ++b) {
    LiveBuffer& out = set.buffers[b];
    namer.name(first[b], out);
    out.bytes = bytes[b];
    out.unpadded = unpadded[b];
    out.start = ranges.ranges[b].start;
    out.end = ranges.ranges[b].end;
    out.whole_program = ranges.whole_program[b];
    // An output that is a donated argument is reported as an output sharing the argument; a
    // parameter or constant returned as is stays what it is.
    if (alias.shares_argument(b)) {
      out.kind = BufferKind::Output;
      out.shares_argument = true;
    } else if (parameter[b]) {
      out.kind = BufferKind::Parameter;
    } else if (alias.is_output(b)) {
      out.kind = BufferKind::Output;
    } else if (constant[b]) {
      out.kind = BufferKind::Constant;
    } else {
      out.kind = BufferKind::Temp;
    }
  }
  return set;
}

}  // namespace tpuemu::hlo
