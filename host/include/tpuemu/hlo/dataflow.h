// SPDX-License-Identifier: Apache-2.0
// Layer hlo: dataflow on one flattened schedule, the first of the three units live_buffers()
// composes (docs/hlo.md, "Liveness, schedules and sizes"; the others: alias_analysis.h,
// live_range.h). For every position of the schedule - the positions of the computations an
// instruction runs spliced in before its own, as XLA's HloLiveRange flattens them - it records the
// instruction, the value each array leaf of its result holds (defined there or forwarded from an
// operand), its tuple index table and the positions of the operands it reads. Values are compact
// records; names and descriptions are made only when a buffer is reported.
#pragma once

#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include "tpuemu/hlo/buffers.h"
#include "tpuemu/hlo/hlo_module.h"
#include "tpuemu/hlo/liveness.h"

namespace tpuemu::hlo {

using ValueId = std::uint32_t;
inline constexpr ValueId kNoValue = std::numeric_limits<ValueId>::max();  // a leaf without storage
inline constexpr std::int32_t kIndexTable = -1;  // HloValue::leaf of a tuple's index table

// One value: the contents of one array leaf of an instruction's result (leaf: its depth-first
// index among the shape's array leaves), or of its tuple index table, or a copy XLA's copy
// insertion would make of another value (copy_of; the instruction and leaf are then the copied
// value's, which describes it).
struct HloValue {
  std::uint32_t computation = 0;  // index into Module::computations
  std::uint32_t instruction = 0;  // index into Computation::instructions
  std::int32_t leaf = 0;          // or kIndexTable
  std::int32_t position = 0;      // where it is defined
  ValueId copy_of = kNoValue;
  BufferKind kind = BufferKind::Temp;  // Temp, Parameter (an ENTRY parameter) or Constant
  bool readonly = false;         // a non-donated ENTRY parameter or a constant: never written in place
  bool entry_parameter = false;  // an ENTRY parameter's leaf or table: an argument allocation of its own
  std::uint64_t bytes = 0;       // padded
  std::uint64_t unpadded = 0;
};

// One instance of a computation in the flattened schedule: its positions [first, last] and the
// position of its ROOT, whose values live to `last` (the caller's uses extend them further).
struct ComputationWindow {
  std::uint32_t computation = 0;
  std::int32_t first = 0, last = 0, root = 0;
};

class Dataflow;

// Asked by the dataflow walk where aliasing decides which value a result holds: the state of a
// while after the loop and the result of a conditional. XLA decides these with copy insertion
// before its dataflow runs; here the copies depend on the buffers joined so far, so the walk asks
// as it goes. AliasAnalysis (alias_analysis.h) answers.
class CarriedValues {
 public:
  virtual ~CarriedValues() = default;
  // The value holding one leaf of a while's state after the loop: `init` entering it, `written`
  // the body ROOT's (kNoValue: none); `window` the loop's first position, `body_end` the body's last.
  virtual ValueId loop_state(Dataflow& flow, ValueId init, ValueId written, std::int32_t window,
                             std::int32_t body_end) = 0;
  // The value holding one leaf of a conditional's result at `position`: every branch ROOT's value
  // for that leaf, in branch order (kNoValue: none).
  virtual ValueId branch_result(Dataflow& flow, std::span<const ValueId> branches, std::int32_t position) = 0;
};

class Dataflow {
 public:
  std::int64_t positions() const { return positions_; }
  const std::vector<HloValue>& values() const { return values_; }
  const HloValue& value(ValueId v) const { return values_[v]; }

  // What runs at position p.
  std::uint32_t computation_at(std::int64_t p) const { return steps_[static_cast<std::size_t>(p)].computation; }
  std::uint32_t instruction_at(std::int64_t p) const { return steps_[static_cast<std::size_t>(p)].instruction; }
  // Per array leaf of the result (depth first): the value that holds it, kNoValue where the leaf
  // has no storage. A forwarding instruction holds its operand's values; a defining one its own.
  std::span<const ValueId> result(std::int64_t p) const;
  ValueId index_table(std::int64_t p) const { return steps_[static_cast<std::size_t>(p)].index_table; }
  // The values defined at p (in the order defined): the result's leaves and table that p defines.
  std::vector<ValueId> defined(std::int64_t p) const;
  // The positions of the operands read at p, in operand order (a called computation's parameter
  // reads none: it holds its argument).
  std::span<const std::int32_t> operands(std::int64_t p) const;
  // get-tuple-element reads only its operand's index table; everything else all of its operands.
  bool reads_index_table_only(std::int64_t p) const { return steps_[static_cast<std::size_t>(p)].reads_table_only; }
  // The values read at p, from operands().
  std::vector<ValueId> reads(std::int64_t p) const;

  // Every computation instance, in the order their windows close (callees before callers; the
  // ENTRY last).
  const std::vector<ComputationWindow>& windows() const { return windows_; }
  // The position of ENTRY's ROOT, and of ENTRY's parameter(n) (-1: none).
  std::int32_t entry_root() const { return windows_.empty() ? -1 : windows_.back().root; }
  std::int32_t entry_parameter(std::int64_t n) const;

  // A copy of `source` defined at `position` (kind Temp, not read-only), for copy insertion.
  ValueId add_copy(ValueId source, std::int32_t position);

  // Frees what each position holds (its instruction, result, index table and operands), keeping
  // the values, the windows and positions(): for a caller done with the positions, as
  // live_buffers() is once the live ranges are known (a module of millions of positions).
  void release_positions();

 private:
  friend class DataflowBuilder;
  struct Step {
    std::uint32_t computation = 0, instruction = 0;
    ValueId index_table = kNoValue;
    bool reads_table_only = false;
  };
  ValueId add_value(const HloValue& v);

  std::vector<HloValue> values_;
  std::int64_t positions_ = 0;
  std::vector<Step> steps_;
  std::vector<std::uint32_t> result_begin_{0};  // result(p): result_values_[begin[p], begin[p+1])
  std::vector<ValueId> result_values_;
  std::vector<std::uint32_t> operand_begin_{0};
  std::vector<std::int32_t> operand_positions_;
  std::vector<ComputationWindow> windows_;
  std::vector<std::int32_t> entry_parameters_;
};

// The dataflow of `module` on `schedule`, values sized under `sizes`. Throws Error for a schedule
// that is not a topological order of every computation, a computation that calls itself, a
// malformed call site, or a flattened schedule beyond 2^25 positions.
Dataflow run_dataflow(const Module& module, const Schedule& schedule, const SizeOptions& sizes,
                      CarriedValues& carried);

}  // namespace tpuemu::hlo
