// SPDX-License-Identifier: Apache-2.0
// The memory map of a run: every buffer of a memory space as a rectangle in time (allocation to
// free) and address (offset to offset + size), per placement policy, as summary.json's
// `memory_map` section carries it and report.html draws it (docs/profile.md).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tpuemu/alloc/alloc_trace.h"
#include "tpuemu/base/json.h"

namespace tpuemu::profile {

struct MapBuffer {
  std::string id;     // the trace's id ("t3")
  std::string name;   // its owner ("layer 0 weights")
  std::string layer;  // buffer_layer(name)
  std::string kind;   // buffer_kind(name)
  std::uint64_t offset = 0, size = 0;
  std::uint64_t start = 0, end = 0;  // allocated at, freed at (the trace's end when never freed)
  // More lines for the tooltip of memory_map_page (an HLO buffer's op_name, source line, shape,
  // padding), once per id; not in summary.json's memory_map.
  std::string detail;
};

// One space placed by one policy.
struct SpaceMap {
  std::string space, policy;
  std::uint64_t capacity = 0;
  std::uint64_t end = 0;  // the time of the trace's last event
  std::vector<MapBuffer> buffers;  // in allocation order
  std::optional<std::string> failure;  // the first allocation this policy could not place
};

struct MemoryMap {
  std::vector<SpaceMap> spaces;
};

// The placement of one alloc event (an index into AllocTrace::events), if it was placed.
using PlacementOf = std::function<std::optional<std::uint64_t>(std::size_t event)>;

// The map of `space` in `trace`, each buffer at the offset `placement_of` gives; buffers without
// one (a failed allocation) are left out.
SpaceMap space_map(const alloc::AllocTrace& trace, const std::string& space, const std::string& policy,
                   std::uint64_t capacity, const PlacementOf& placement_of);
// The runtime's own placements (TraceEvent::offset).
SpaceMap space_map_as_placed(const alloc::AllocTrace& trace, const std::string& space, const std::string& policy,
                             std::uint64_t capacity);
// The placements of a replay run (alloc::ReplayOptions::keep_placements), with its failure.
SpaceMap space_map_of_replay(const alloc::AllocTrace& trace, const alloc::ReplayRun& run);

// The placements of one space of a run: the runtime's own under `policy`, and with every_policy
// each other policy's from a replay of the same trace at the same capacity and granularity (the
// device ran once; docs/profile.md). The replays are kept for their samples (fragmentation.csv).
struct RunPlacements {
  MemoryMap map;                           // the run's policy first, then the others in report order
  std::vector<alloc::ReplayRun> replays;   // with samples and placements
};
RunPlacements run_placements(const alloc::AllocTrace& trace, const std::string& space, const std::string& policy,
                             std::uint64_t capacity, std::uint64_t granularity, bool every_policy);

nlohmann::json memory_map_to_json(const MemoryMap& map);
// Reads the section at `pointer` of doc; errors name the file, line and column of the bad value.
MemoryMap memory_map_from_json(const JsonDocument& doc, const std::string& pointer);

}  // namespace tpuemu::profile
