// SPDX-License-Identifier: Apache-2.0
// Layer hlo, private to the "xla" policy's sources (placement_xla.cpp, assignment_xla.cpp): XLA's
// heap simulator on some of a set's buffers, without copying them - buffer assignment simulates
// the temporaries alone, and a module of millions of buffers has no room for a second set.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "tpuemu/base/stop.h"
#include "tpuemu/hlo/buffers.h"

namespace tpuemu::hlo::detail {

struct HeapSimulation {
  std::vector<std::uint64_t> offsets;  // offsets[k]: where members[k] went
  std::uint64_t heap = 0;
  std::string detail;  // "spatial order (temporal N bytes)", or the temporal one's
};

// Both GlobalDecreasingSizeBestFitHeap orders on `members` (indices into set.buffers, ascending:
// ties end on the buffer's index), the smaller heap kept (docs/hlo.md, "Buffer assignment").
// `stop` is asked every thousand buffers (Interrupted).
// The indices of the buffers `wanted` accepts (every one when it is empty), ascending: the members
// simulate_heap takes. Throws Error for a set of 2^32 buffers or more.
std::vector<std::uint32_t> heap_members(const BufferSet& set, const std::function<bool(const LiveBuffer&)>& wanted = {});

HeapSimulation simulate_heap(const BufferSet& set, std::span<const std::uint32_t> members, std::uint64_t alignment,
                             const StopToken& stop);

}  // namespace tpuemu::hlo::detail
