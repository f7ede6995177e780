// SPDX-License-Identifier: Apache-2.0
// The engine and HBM channel lanes of a trace.json, as report.html draws them: the threads of the
// processes "core" (one per queue: "DMA queue", "MXU queue", "vector queue"; instructions and
// semaphore waits "wait sN" as complete events) and "HBM" ("channel N"; "busy" and "refresh").
// Times are converted back from the trace's microseconds to core cycles.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace tpuemu::profile {

struct TimelineSlice {
  std::uint64_t start = 0, duration = 0;  // core cycles
  std::uint32_t label = 0;                // index into EngineTimeline::labels
};

struct TimelineLane {
  std::string process;  // "core" or "HBM"
  std::string name;     // the thread's name
  std::vector<TimelineSlice> slices;
};

struct EngineTimeline {
  std::vector<std::string> labels;  // each slice name once
  std::vector<TimelineLane> lanes;  // core lanes (DMA, MXU, vector first), then HBM channels by number
};

// Empty when the trace has no such tracks. Errors name the file and the JSON pointer of the bad
// value. (A plain nlohmann document: a trace of 10^5 events is parsed in a fraction of the time a
// JsonDocument, which records every key's position, takes.)
EngineTimeline engine_timeline(const nlohmann::json& trace, const std::string& source);

}  // namespace tpuemu::profile
