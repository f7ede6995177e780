// SPDX-License-Identifier: Apache-2.0
// The "xla" placement policy: XLA's buffer assignment around its heap simulator (docs/hlo.md,
// "Buffer assignment"). As read in xla/service/buffer_assignment.cc (AssignSingleHloBuffer):
// an ENTRY parameter's buffer, a constant's and a buffer that lives out of the program each get a
// BufferAllocation of their own; only the remaining buffers, the temporaries, go through the heap
// simulator, and CombineTempAllocations makes their heap one allocation. This file is an
// independent implementation of that split.
#include <algorithm>
#include <cstdint>
#include <vector>

#include <fmt/format.h>

#include "heap_simulator.h"
#include "placement_detail.h"
#include "tpuemu/hlo/placement.h"

namespace tpuemu::hlo {
namespace {

std::uint64_t align_up(std::uint64_t value, std::uint64_t alignment) {
  const std::uint64_t rem = value % alignment;
  return rem == 0 ? value : value + (alignment - rem);
}

// The allocations of their own, in the order they are stacked.
enum class Own { Argument, Constant, Output, None };

Own own_allocation(const LiveBuffer& b) {
  // A donated argument's buffer is the aliased output's too: one allocation, the argument's.
  if (b.kind == BufferKind::Parameter || b.shares_argument) return Own::Argument;
  if (b.kind == BufferKind::Constant) return Own::Constant;
  if (b.kind == BufferKind::Output) return Own::Output;
  return Own::None;
}

}  // namespace

Placement assign_xla(const BufferSet& set, const PlacementOptions& options) {
  detail::check_buffers(set);
  const std::uint64_t alignment = std::max<std::uint64_t>(options.alignment, 1);
  // The allocations of their own are stacked from 0, group by group, in buffer order.
  const auto stack_own = [&](const auto& place_at) {
    std::uint64_t top = 0;
    for (const Own group : {Own::Argument, Own::Constant, Own::Output}) {
      for (std::size_t i = 0; i < set.buffers.size(); ++i) {
        const LiveBuffer& b = set.buffers[i];
        if (b.bytes == 0 || own_allocation(b) != group) continue;  // 0 bytes: at 0, no space
        top = align_up(top, alignment);
        place_at(i, top);
        top += b.bytes;
      }
    }
    return top;
  };
  const std::uint64_t top = stack_own([](std::size_t, std::uint64_t) {});
  Placement p;
  p.policy = "xla";
  {
    // The temporaries, simulated where they are: a module of millions of buffers has no room for
    // a second set of them, nor for the offsets before the simulation is done with its own.
    const std::vector<std::uint32_t> temporaries =
        detail::heap_members(set, [](const LiveBuffer& b) { return own_allocation(b) == Own::None; });
    const detail::HeapSimulation block = detail::simulate_heap(set, temporaries, alignment, options.stop);
    p.offsets.assign(set.buffers.size(), 0);
    stack_own([&](std::size_t i, std::uint64_t offset) { p.offsets[i] = offset; });
    const std::uint64_t base = block.heap == 0 ? top : align_up(top, alignment);
    for (std::size_t k = 0; k < temporaries.size(); ++k) {
      if (set.buffers[temporaries[k]].bytes != 0) p.offsets[temporaries[k]] = base + block.offsets[k];
    }
    p.temporaries_block_bytes = block.heap;
    p.heap_bytes = base + block.heap;
    p.detail = fmt::format("arguments, constants, outputs {} bytes + temporaries' block {} bytes ({})", top,
                           block.heap, block.detail);
  }
  detail::fill_metrics(set, p);
  return p;
}

}  // namespace tpuemu::hlo
