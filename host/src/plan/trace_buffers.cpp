// SPDX-License-Identifier: Apache-2.0
// Buffer lifetimes from the order of a trace's events.
#include "tpuemu/plan/trace_buffers.h"

#include <cstdint>
#include <unordered_map>

namespace tpuemu::plan {

std::vector<PlanBuffer> plan_buffers_from_trace(const alloc::AllocTrace& trace, const std::string& space) {
  std::vector<PlanBuffer> buffers;
  std::unordered_map<std::string, std::size_t> live;
  std::int64_t index = 0;
  for (const alloc::TraceEvent& e : trace.events) {
    ++index;
    if (e.space != space) continue;
    if (e.alloc) {
      live[e.id] = buffers.size();
      buffers.push_back({e.id, index, 0, e.size, e.alignment});
    } else if (const auto it = live.find(e.id); it != live.end()) {
      buffers[it->second].upper = index;
      live.erase(it);
    }
  }
  for (PlanBuffer& b : buffers) {
    if (b.upper == 0) b.upper = index + 1;
  }
  return buffers;
}

}  // namespace tpuemu::plan
