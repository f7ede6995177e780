// SPDX-License-Identifier: Apache-2.0
// Layer hlo: when each value and each buffer is live on the flattened schedule, the third of the
// three units live_buffers() composes (docs/hlo.md, "Liveness, schedules and sizes"), as XLA's
// HloLiveRange times them: a value from its defining position through the last position that
// reads it or holds it; a computation's ROOT values to the end of the computation's window (the
// program's result therefore to the last position); a buffer over the union of its values' ranges,
// and from the first position to the last when it holds an ENTRY parameter.
#pragma once

#include <cstdint>
#include <vector>

#include "tpuemu/hlo/alias_analysis.h"
#include "tpuemu/hlo/dataflow.h"

namespace tpuemu::hlo {

// Positions [start, end], both inclusive.
struct LiveInterval {
  std::int32_t start = 0;
  std::int32_t end = 0;
  bool operator==(const LiveInterval&) const = default;
};

// Each value's range (indexed by ValueId). get-tuple-element reads only its operand's index table,
// so a tuple element nobody extracts dies at its last other reader.
std::vector<LiveInterval> value_live_ranges(const Dataflow& flow);

struct BufferLiveRanges {
  std::vector<LiveInterval> ranges;  // indexed by AliasAnalysis buffer number
  std::vector<bool> whole_program;   // holds an ENTRY parameter: live at every position
};
BufferLiveRanges buffer_live_ranges(const AliasAnalysis& alias, const std::vector<LiveInterval>& values);

}  // namespace tpuemu::hlo
