// The Chrome trace-event JSON of a run (Perfetto and chrome://tracing load it): one async track of
// buffers per memory space (each buffer a slice from its allocation to its free, with its size,
// kind and layer) and counter tracks of bytes in use, largest free block and external
// fragmentation per space (docs/profile.md). Times are core cycles, shown at the preset's clock.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tpuemu/alloc/alloc_trace.h"
#include "tpuemu/alloc/memory_space.h"

namespace tpuemu::profile {

struct ChromeTraceInputs {
  const alloc::AllocTrace* allocations = nullptr;
  // Per space: the allocator's state after every allocation and free (MemorySpace samples).
  std::map<std::string, std::vector<alloc::SpaceSnapshot>> samples;
  double clock_ghz = 1;  // core cycles -> microseconds
  std::string title;     // the workload
};

nlohmann::json chrome_trace(const ChromeTraceInputs& in);

}  // namespace tpuemu::profile
