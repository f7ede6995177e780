// SPDX-License-Identifier: Apache-2.0
// Planner instances from allocation traces: what the offline planner can do with the buffers a
// run really allocated. Here and not in the alloc layer because the planner's types are above it.
#pragma once

#include <string>
#include <vector>

#include "tpuemu/alloc/alloc_trace.h"
#include "tpuemu/plan/planner.h"

namespace tpuemu::plan {

// The buffers of one space with the lifetimes the trace gives them, for the offline planner:
// [index of the alloc event, index of the free event) in trace order; buffers never freed live to
// the end. Offsets the planner finds are what an allocator knowing the future could do.
std::vector<PlanBuffer> plan_buffers_from_trace(const alloc::AllocTrace& trace, const std::string& space);

}  // namespace tpuemu::plan
