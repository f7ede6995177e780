// SPDX-License-Identifier: Apache-2.0
// Layer hlo: which values share one buffer, the second of the three units live_buffers()
// composes (docs/hlo.md, "Liveness, schedules and sizes"). A union-find over the dataflow's
// values (dataflow.h) with XLA's aliasing rules: a while's state across the loop, a conditional's
// branch results, the ENTRY parameters that input_output_alias donates to outputs; with the copies
// XLA's copy insertion makes where a rule would write a read-only value, join two ENTRY
// parameters, or return one buffer twice. In-place updates and forwarding instructions share a
// value already in the dataflow.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "tpuemu/hlo/dataflow.h"

namespace tpuemu::hlo {

class AliasAnalysis final : public CarriedValues {
 public:
  // The dataflow of `module` on `schedule` with this analysis answering at each while and
  // conditional, then the ENTRY results' rules. Throws what run_dataflow throws, and Error for an
  // input_output_alias that names a parameter ENTRY does not have or pairs shapes that differ.
  static AliasAnalysis run(const Module& module, const Schedule& schedule, const SizeOptions& sizes);

  const Dataflow& dataflow() const { return flow_; }
  // Dataflow::release_positions() on the analysis's dataflow; the buffers stay.
  void release_positions();

  // Buffers are numbered in the order of their first value; a buffer's values are the ones
  // joined into it.
  std::size_t buffer_count() const { return buffer_output_.size(); }
  std::uint32_t buffer_of(ValueId v) const { return buffer_of_[v]; }
  std::vector<ValueId> values_of(std::uint32_t buffer) const;  // ascending; a scan over every value
  bool same_buffer(ValueId a, ValueId b) const { return buffer_of_[a] == buffer_of_[b]; }
  // The buffer holds a leaf or the index table of the program's result.
  bool is_output(std::uint32_t buffer) const { return buffer_output_[buffer]; }
  // The buffer is an output that input_output_alias gives a donated argument's buffer.
  bool shares_argument(std::uint32_t buffer) const { return buffer_shares_argument_[buffer]; }
  // The program's result after copy insertion: per array leaf of ENTRY's ROOT the value holding
  // it (kNoValue: no storage), and its index table.
  const std::vector<ValueId>& outputs() const { return outputs_; }
  ValueId output_index_table() const { return output_table_; }

  // The rules the dataflow walk asks (dataflow.h). A while: each iteration's result becomes the
  // next state, one buffer per leaf across the loop; a leaf the body writes whose init is
  // read-only is first copied at the loop's first position, a leaf the body passes through is
  // not. A conditional: every branch's result for the leaf joins one buffer; a read-only one is
  // copied into it at the conditional's position.
  ValueId loop_state(Dataflow& flow, ValueId init, ValueId written, std::int32_t window,
                     std::int32_t body_end) override;
  ValueId branch_result(Dataflow& flow, std::span<const ValueId> branches, std::int32_t position) override;

 private:
  AliasAnalysis() = default;

  void grow(const Dataflow& flow);  // every value the dataflow has is a node
  ValueId find(ValueId v);
  void unite(ValueId a, ValueId b);
  bool holds_entry_parameter(ValueId v) { return flags_[find(v)] & kEntryParameter; }
  bool readonly(ValueId v) { return flags_[find(v)] & kReadonly; }
  void join(Dataflow& flow, ValueId target, ValueId v, std::int32_t position);
  ValueId copy(Dataflow& flow, ValueId v, std::int32_t position);
  void resolve_results(const Module& module);
  std::vector<ValueId> donated_parameters(const Module& module) const;
  void number_buffers();

  static constexpr std::uint8_t kReadonly = 1, kEntryParameter = 2;
  Dataflow flow_;
  std::vector<ValueId> parent_;
  std::vector<std::uint8_t> flags_;  // of a root: its buffer's
  std::vector<ValueId> outputs_;
  ValueId output_table_ = kNoValue;
  std::vector<ValueId> donors_;  // ENTRY parameter values donated to an output
  std::vector<std::uint32_t> buffer_of_;
  std::vector<bool> buffer_output_, buffer_shares_argument_;
};

}  // namespace tpuemu::hlo
