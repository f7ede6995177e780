// SPDX-License-Identifier: Apache-2.0
// live_buffers(): the three liveness units composed into the BufferSet every placement policy
// places (docs/hlo.md, "Liveness, schedules and sizes"): the dataflow on the flattened schedule
// (dataflow.cpp), which values share a buffer (alias_analysis.cpp), and when each buffer is live
// (live_range.cpp). Names and descriptions are made here, once per buffer.
#include <string>
#include <unordered_map>
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

// What a user recognises a value by: the defining instruction, with the tuple index of an element
// ("p.1{1}"), "(index table)" for a tuple's table, "(copy)" for each copy made of it.
class Describer {
 public:
  Describer(const Module& module, const Dataflow& flow, const SizeOptions& sizes)
      : module_(module), flow_(flow), sizes_(sizes) {}

  void describe(ValueId v, LiveBuffer& b) {
    const HloValue& value = flow_.value(v);
    const Computation& comp = module_.computations[value.computation];
    const Instruction& ins = comp.instructions[value.instruction];
    if (value.leaf == kIndexTable) {
      b.name = ins.name + " (index table)";
      b.shape = ins.shape.to_string();
    } else {
      const Shape* shape = &ins.shape;
      b.name = ins.name;
      if (ins.shape.is_tuple()) {
        const detail::ShapeLeaf& leaf = leaves(value)[static_cast<std::size_t>(value.leaf)];
        shape = leaf.shape;
        b.name += detail::path_text(leaf.path);
      }
      std::string dims;
      for (std::size_t i = 0; i < shape->dims.size(); ++i) {
        if (i > 0) dims += ',';
        dims += std::to_string(shape->dims[i]);
      }
      b.shape = std::string(type_name(shape->type)) + "[" + dims + "]" + shape_bytes(*shape, sizes_).layout;
      b.memory_space = shape->layout ? shape->layout->memory_space : 0;
    }
    for (ValueId c = v; flow_.value(c).copy_of != kNoValue; c = flow_.value(c).copy_of) b.name += " (copy)";
    const Metadata& metadata = module_.metadata_of(ins);
    b.op_name = metadata.op_name;
    if (!metadata.source_file.empty()) b.source = metadata.source_file + ":" + std::to_string(metadata.source_line);
    b.instruction = shorten(module_.instruction_text(ins));
    b.computation = comp.name;
  }

 private:
  // A tuple-shaped instruction's leaves, computed once however many of its values are reported.
  const std::vector<detail::ShapeLeaf>& leaves(const HloValue& value) {
    const std::uint64_t key = (std::uint64_t{value.computation} << 32) | value.instruction;
    auto [it, added] = leaves_.try_emplace(key);
    if (added)
      it->second = detail::leaves_of(module_.computations[value.computation].instructions[value.instruction].shape);
    return it->second;
  }

  const Module& module_;
  const Dataflow& flow_;
  SizeOptions sizes_;
  std::unordered_map<std::uint64_t, std::vector<detail::ShapeLeaf>> leaves_;
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
  Describer describer(module, flow, sizes);
  for (std::uint32_t b = 0; b < n; ++b) {
    LiveBuffer& out = set.buffers[b];
    describer.describe(first[b], out);
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
