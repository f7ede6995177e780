// SPDX-License-Identifier: Apache-2.0
// Layer hlo: the program's buffers placed in one heap by each policy, side by side on one schedule
// (docs/hlo.md, "Buffer assignment"): "xla" (XLA's heap simulator: decreasing-size best fit in
// the spatial and the temporal order, the smaller heap kept), "planner" (tpuemu's offline
// planner), and the runtime policies of the alloc layer (bfc, first-fit, best-fit, buddy, tlsf)
// allocating and freeing in schedule order.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "tpuemu/base/stop.h"
#include "tpuemu/hlo/buffers.h"

namespace tpuemu::hlo {

struct PlacementOptions {
  // Heap capacity the runtime policies manage (and the planner aims for); nullopt: large enough
  // for any placement (the sum of all buffers).
  std::optional<std::uint64_t> capacity;
  std::uint64_t granularity = 256;   // runtime policies' smallest block
  std::uint64_t alignment = 1;       // every buffer's offset alignment; tile padding already makes sizes whole tiles
  double planner_timeout_seconds = 10;
  StopToken stop;  // asked by the planner's search and between the runtime policies' steps
};

struct Placement {
  std::string policy;
  std::vector<std::uint64_t> offsets;  // one per buffer, in BufferSet order (empty on failure)
  std::uint64_t heap_bytes = 0;        // max offset + size: the program's requirement
  std::uint64_t peak_live_bytes = 0;   // padded
  std::uint64_t peak_live_unpadded = 0;
  std::uint64_t whole_program_bytes = 0;  // bytes live for the whole program
  // XProf's memory viewer: (heap - peak live) / (heap - bytes live for the whole program); 0 when
  // the denominator is 0.
  double fragmentation = 0;
  // Peak heap minus the heap the unpadded sizes need at the same peak: padding's share.
  std::uint64_t padding_bytes = 0;
  // xla: the block of the temporaries above the allocations of their own (assign_xla); 0 for the
  // other policies, which place every buffer in one heap.
  std::uint64_t temporaries_block_bytes = 0;
  std::optional<std::string> failure;  // out of memory (runtime policies) or the planner's reason
  bool timed_out = false;              // planner: its timeout ran out (offsets: best found)
  std::string detail;                  // e.g. "xla: spatial order (temporal 1.2 MiB)"
};

// XLA's heap simulator (both orders, the smaller heap; ties as docs/hlo.md states) on every buffer.
Placement place_xla(const BufferSet& set, const PlacementOptions& options);
// XLA's buffer assignment, the "xla" policy: every argument (ENTRY parameter, donated or not),
// constant and output an allocation of its own, stacked from offset 0 in that order and in buffer
// order; the temporaries in one block above them, placed by place_xla on the temporaries alone.
Placement assign_xla(const BufferSet& set, const PlacementOptions& options);
// tpuemu's offline planner (plan layer) with its timeout.
Placement place_planner(const BufferSet& set, const PlacementOptions& options);
// A runtime policy of the alloc layer, allocate/free in schedule order.
Placement place_runtime(std::string_view policy, const BufferSet& set, const PlacementOptions& options);
// "xla", "planner", or an alloc policy name; "all": every one in that order.
std::vector<std::string> placement_policy_names();
Placement place(std::string_view policy, const BufferSet& set, const PlacementOptions& options);

}  // namespace tpuemu::hlo
