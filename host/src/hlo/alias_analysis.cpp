// SPDX-License-Identifier: Apache-2.0
// Which values share a buffer (tpuemu/hlo/alias_analysis.h; docs/hlo.md, "Liveness, schedules and
// sizes"): XLA's HloAliasAnalysis and buffer assignment's colocations as a union-find over the
// dataflow's values, with the copies of XLA's copy insertion (xla/service/copy_insertion.cc).
#include "tpuemu/hlo/alias_analysis.h"

#include <algorithm>
#include <string>
#include <utility>

#include "liveness_detail.h"
#include "tpuemu/base/error.h"

namespace tpuemu::hlo {

AliasAnalysis AliasAnalysis::run(const Module& module, const Schedule& schedule, const SizeOptions& sizes) {
  AliasAnalysis a;
  a.flow_ = run_dataflow(module, schedule, sizes, a);
  a.grow(a.flow_);
  a.resolve_results(module);
  a.number_buffers();
  // The union-find is done: buffer_of_ answers from here on (fresh vectors free the storage).
  a.parent_ = std::vector<ValueId>();
  a.flags_ = std::vector<std::uint8_t>();
  return a;
}

void AliasAnalysis::release_positions() { flow_.release_positions(); }

std::vector<ValueId> AliasAnalysis::values_of(std::uint32_t buffer) const {
  std::vector<ValueId> out;
  for (std::size_t v = 0; v < buffer_of_.size(); ++v)
    if (buffer_of_[v] == buffer) out.push_back(static_cast<ValueId>(v));
  return out;
}

void AliasAnalysis::grow(const Dataflow& flow) {
  if (parent_.capacity() < flow.values().capacity()) {
    parent_.reserve(flow.values().capacity());
    flags_.reserve(flow.values().capacity());
  }
  for (std::size_t v = parent_.size(); v < flow.values().size(); ++v) {
    const HloValue& value = flow.values()[v];
    parent_.push_back(static_cast<ValueId>(v));
    flags_.push_back(static_cast<std::uint8_t>((value.readonly ? kReadonly : 0) |
                                               (value.entry_parameter ? kEntryParameter : 0)));
  }
}

ValueId AliasAnalysis::find(ValueId v) {
  while (parent_[v] != v) {
    parent_[v] = parent_[parent_[v]];
    v = parent_[v];
  }
  return v;
}

void AliasAnalysis::unite(ValueId a, ValueId b) {
  a = find(a);
  b = find(b);
  if (a == b) return;
  if (b < a) std::swap(a, b);  // the first-defined value roots the buffer: buffers keep its order
  parent_[b] = a;
  flags_[a] |= flags_[b];
}

// A copy XLA's copy insertion would make of v's buffer: a fresh value from `position`.
ValueId AliasAnalysis::copy(Dataflow& flow, ValueId v, std::int32_t position) {
  const ValueId c = flow.add_copy(find(v), position);
  grow(flow);
  return c;
}

// Joins v's buffer to target's, as an alias (loop state, branch result, donation) asks. Each ENTRY
// parameter is an argument allocation of its own, so two of them never become one buffer: a copy
// of v made at `position` joins instead, as XLA's copy insertion copies such a value.
void AliasAnalysis::join(Dataflow& flow, ValueId target, ValueId v, std::int32_t position) {
  if (find(target) != find(v) && holds_entry_parameter(target) && holds_entry_parameter(v)) v = copy(flow, v, position);
  unite(target, v);
}

ValueId AliasAnalysis::loop_state(Dataflow& flow, ValueId init, ValueId written, std::int32_t window,
                                  std::int32_t body_end) {
  grow(flow);
  if (written != kNoValue && find(written) == find(init)) return init;  // passed through unchanged
  ValueId target = init;
  if (readonly(target)) target = copy(flow, target, window);
  if (written != kNoValue && !readonly(written)) join(flow, target, written, body_end);
  return target;
}

ValueId AliasAnalysis::branch_result(Dataflow& flow, std::span<const ValueId> branches, std::int32_t position) {
  grow(flow);
  std::vector<ValueId> joined;
  bool copied = false;
  for (const ValueId v : branches) {
    if (v == kNoValue) continue;
    if (readonly(v)) copied = true;
    else joined.push_back(v);
  }
  if (copied && !branches.empty() && branches.front() != kNoValue) joined.push_back(copy(flow, branches.front(), position));
  if (joined.empty()) return kNoValue;
  for (const ValueId v : joined) join(flow, joined.front(), v, position);
  return joined.front();
}

// input_output_alias: for each leaf of the ENTRY ROOT's shape, the ENTRY parameter value donated
// to it (its buffer becomes the output's), or kNoValue.
std::vector<ValueId> AliasAnalysis::donated_parameters(const Module& module) const {
  const std::span<const ValueId> root = flow_.result(flow_.entry_root());
  std::vector<ValueId> donors(root.size(), kNoValue);
  const Computation& entry = module.entry_computation();
  const std::vector<detail::ShapeLeaf> out_leaves = detail::leaves_of(entry.instructions.at(entry.root).shape);
  for (const IoAlias& a : module.input_output_alias) {
    if (a.parameter_number < 0 || static_cast<std::size_t>(a.parameter_number) >= entry.parameters.size())
      throw Error(module.source, "input_output_alias names parameter " + std::to_string(a.parameter_number) +
                                     ", which ENTRY does not have");
    const std::int32_t at = flow_.entry_parameter(a.parameter_number);
    if (at < 0) continue;
    const std::span<const ValueId> param = flow_.result(at);
    const Instruction& param_ins = entry.instructions.at(entry.parameters[static_cast<std::size_t>(a.parameter_number)]);
    const std::vector<detail::ShapeLeaf> in_leaves = detail::leaves_of(param_ins.shape);
    std::vector<std::size_t> outs, ins;
    for (std::size_t j = 0; j < out_leaves.size() && j < root.size(); ++j)
      if (detail::path_has_prefix(out_leaves[j].path, a.output_index)) outs.push_back(j);
    for (std::size_t j = 0; j < in_leaves.size() && j < param.size(); ++j)
      if (detail::path_has_prefix(in_leaves[j].path, a.parameter_index)) ins.push_back(j);
    if (outs.size() != ins.size() || outs.empty())
      throw Error(module.source, "input_output_alias: output " + detail::path_text(a.output_index) + " and parameter " +
                                     std::to_string(a.parameter_number) + " " + detail::path_text(a.parameter_index) +
                                     " are not the same shape");
    for (std::size_t j = 0; j < outs.size(); ++j)
      if (param[ins[j]] != kNoValue) donors[outs[j]] = param[ins[j]];
  }
  return donors;
}

// XLA's copy insertion makes the entry's results distinct buffers, none of them read-only: a result
// leaf that holds an ENTRY parameter other than the one donated to it, a constant, or a buffer an
// earlier result leaf holds is copied into a fresh buffer at the program's last position. So an
// output never takes an argument's or a constant's allocation. Then each donated parameter joins
// its output.
void AliasAnalysis::resolve_results(const Module& module) {
  const std::vector<ValueId> donors = donated_parameters(module);
  const std::int32_t last = static_cast<std::int32_t>(flow_.positions() - 1);
  const std::int32_t root = flow_.entry_root();
  outputs_.assign(flow_.result(root).begin(), flow_.result(root).end());
  output_table_ = flow_.index_table(root);
  std::vector<bool> held(flow_.values().size(), false);  // buffers (roots) a result leaf holds so far
  for (std::size_t j = 0; j < outputs_.size(); ++j) {
    ValueId& leaf = outputs_[j];
    if (leaf == kNoValue) continue;
    const ValueId r = find(leaf);
    const bool own_donor = donors[j] != kNoValue && find(donors[j]) == r;
    const bool foreign = (holds_entry_parameter(r) || readonly(r)) && !own_donor;
    if (held[r] || foreign) leaf = copy(flow_, leaf, last);
    held.resize(parent_.size(), false);
    held[find(leaf)] = true;
  }
  if (output_table_ != kNoValue && flow_.value(find(output_table_)).kind != BufferKind::Temp)
    output_table_ = copy(flow_, output_table_, last);
  for (std::size_t j = 0; j < outputs_.size(); ++j) {
    if (donors[j] == kNoValue) continue;
    if (outputs_[j] != kNoValue) join(flow_, donors[j], outputs_[j], last);
    donors_.push_back(donors[j]);
  }
}

void AliasAnalysis::number_buffers() {
  const std::size_t n = parent_.size();
  buffer_of_.assign(n, 0);
  std::uint32_t buffers = 0;
  for (std::size_t v = 0; v < n; ++v) {
    const ValueId r = find(static_cast<ValueId>(v));
    buffer_of_[v] = r == v ? buffers++ : buffer_of_[r];  // a root is its buffer's first value
  }
  buffer_output_.assign(buffers, false);
  buffer_shares_argument_.assign(buffers, false);
  for (const ValueId v : outputs_)
    if (v != kNoValue) buffer_output_[buffer_of_[v]] = true;
  if (output_table_ != kNoValue) buffer_output_[buffer_of_[output_table_]] = true;
  for (const ValueId v : donors_) buffer_shares_argument_[buffer_of_[v]] = true;
}

}  // namespace tpuemu::hlo
