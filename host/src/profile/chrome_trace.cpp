#include "tpuemu/profile/chrome_trace.h"

#include <fmt/format.h>

#include "tpuemu/profile/memory_profile.h"

namespace tpuemu::profile {

nlohmann::json chrome_trace(const ChromeTraceInputs& in) {
  nlohmann::json events = nlohmann::json::array();
  const double us_per_cycle = 1.0 / (1000.0 * in.clock_ghz);
  auto ts = [&](std::uint64_t cycles) { return static_cast<double>(cycles) * us_per_cycle; };
  constexpr int kMemoryPid = 1;
  events.push_back({{"ph", "M"}, {"name", "process_name"}, {"pid", kMemoryPid}, {"args", {{"name", "device memory"}}}});
  std::map<std::string, int> tid_of;
  auto tid = [&](const std::string& space) {
    const auto [it, added] = tid_of.try_emplace(space, static_cast<int>(tid_of.size()) + 1);
    if (added) {
      events.push_back({{"ph", "M"}, {"name", "thread_name"}, {"pid", kMemoryPid}, {"tid", it->second},
                        {"args", {{"name", space + " buffers"}}}});
    }
    return it->second;
  };
  if (in.allocations != nullptr) {
    const auto& ev = in.allocations->events;
    const std::uint64_t end = ev.empty() ? 0 : ev.back().time;
    std::map<std::string, std::pair<std::uint64_t, const alloc::TraceEvent*>> open;  // space\0id -> (async id, alloc)
    std::uint64_t next_id = 1;
    for (const alloc::TraceEvent& e : ev) {
      const std::string key = e.space + '\0' + e.id;
      const int t = tid(e.space);
      if (e.alloc) {
        const std::string owner = e.owner.empty() ? e.id : e.owner;
        open[key] = {next_id, &e};
        events.push_back({{"ph", "b"}, {"cat", e.space}, {"name", owner}, {"id", fmt::format("{:#x}", next_id++)},
                          {"pid", kMemoryPid}, {"tid", t}, {"ts", ts(e.time)},
                          {"args", {{"buffer", e.id}, {"bytes", e.size}, {"kind", buffer_kind(owner)},
                                    {"layer", buffer_layer(owner)}}}});
      } else if (const auto it = open.find(key); it != open.end()) {
        const alloc::TraceEvent& a = *it->second.second;
        events.push_back({{"ph", "e"}, {"cat", e.space}, {"name", a.owner.empty() ? a.id : a.owner},
                          {"id", fmt::format("{:#x}", it->second.first)}, {"pid", kMemoryPid}, {"tid", t},
                          {"ts", ts(e.time)}});
        open.erase(it);
      }
    }
    for (const auto& [key, v] : open) {  // never freed: the slice ends with the trace
      const alloc::TraceEvent& a = *v.second;
      events.push_back({{"ph", "e"}, {"cat", a.space}, {"name", a.owner.empty() ? a.id : a.owner},
                        {"id", fmt::format("{:#x}", v.first)}, {"pid", kMemoryPid}, {"tid", tid(a.space)}, {"ts", ts(end)}});
    }
  }
  for (const auto& [space, samples] : in.samples) {
    for (const alloc::SpaceSnapshot& s : samples) {
      events.push_back({{"ph", "C"}, {"name", space + " bytes"}, {"pid", kMemoryPid}, {"ts", ts(s.time)},
                        {"args", {{"in use", s.in_use_bytes}, {"live", s.live_bytes}}}});
      events.push_back({{"ph", "C"}, {"name", space + " largest free block"}, {"pid", kMemoryPid}, {"ts", ts(s.time)},
                        {"args", {{"bytes", s.largest_free_block}}}});
      events.push_back({{"ph", "C"}, {"name", space + " external fragmentation"}, {"pid", kMemoryPid},
                        {"ts", ts(s.time)}, {"args", {{"fraction", s.external_fragmentation}}}});
    }
  }
  return {{"traceEvents", std::move(events)}, {"displayTimeUnit", "ns"},
          {"otherData", {{"workload", in.title}, {"clock_ghz", in.clock_ghz}, {"time_unit", "core cycles"}}}};
}

}  // namespace tpuemu::profile
