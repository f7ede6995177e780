// SPDX-License-Identifier: Apache-2.0
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
  // Engines: complete events must nest on a track, so an instruction that starts before the
  // previous one on its track ended goes to the next track of the same queue.
  constexpr int kCorePid = 2, kHbmPid = 3;
  if (!in.engine.empty()) {
    events.push_back({{"ph", "M"}, {"name", "process_name"}, {"pid", kCorePid}, {"args", {{"name", "core"}}}});
    std::map<std::string, std::vector<std::uint64_t>> track_end;  // queue -> end of each of its tracks
    std::map<std::pair<std::string, std::size_t>, int> tids;
    auto engine_tid = [&](const std::string& queue, std::size_t lane) {
      const auto key = std::pair{queue, lane};
      if (const auto it = tids.find(key); it != tids.end()) return it->second;
      const int t = static_cast<int>(tids.size()) + 1;
      tids[key] = t;
      events.push_back({{"ph", "M"}, {"name", "thread_name"}, {"pid", kCorePid}, {"tid", t},
                        {"args", {{"name", lane == 0 ? queue + " queue" : fmt::format("{} queue ({})", queue, lane + 1)}}}});
      events.push_back({{"ph", "M"}, {"name", "thread_sort_index"}, {"pid", kCorePid}, {"tid", t}, {"args", {{"sort_index", t}}}});
      return t;
    };
    for (const std::string q : {"DMA", "MXU", "vector"}) engine_tid(q, 0);
    for (const EngineSlice& e : in.engine) {
      auto& ends = track_end[e.queue];
      std::size_t lane = 0;
      while (lane < ends.size() && ends[lane] > e.begin) ++lane;
      if (lane == ends.size()) ends.push_back(0);
      ends[lane] = std::max(e.end, e.begin + 1);
      events.push_back({{"ph", "X"}, {"cat", "engine"}, {"name", e.name}, {"pid", kCorePid},
                        {"tid", engine_tid(e.queue, lane)}, {"ts", ts(e.begin)},
                        {"dur", ts(std::max(e.end, e.begin + 1)) - ts(e.begin)},
                        {"args", {{"pc", e.pc}, {"layer", e.layer}}}});
    }
  }
  if (in.hbm_channel_count > 0) {
    events.push_back({{"ph", "M"}, {"name", "process_name"}, {"pid", kHbmPid}, {"args", {{"name", "HBM"}}}});
    for (unsigned c = 0; c < in.hbm_channel_count; ++c) {
      events.push_back({{"ph", "M"}, {"name", "thread_name"}, {"pid", kHbmPid}, {"tid", static_cast<int>(c) + 1},
                        {"args", {{"name", fmt::format("channel {}", c)}}}});
    }
    for (const ChannelSlice& h : in.hbm_channels) {
      events.push_back({{"ph", "X"}, {"cat", "hbm"}, {"name", h.refresh ? "refresh" : "busy"}, {"pid", kHbmPid},
                        {"tid", static_cast<int>(h.channel) + 1}, {"ts", ts(h.begin)},
                        {"dur", ts(std::max(h.end, h.begin + 1)) - ts(h.begin)}});
    }
  }
  return {{"traceEvents", std::move(events)}, {"displayTimeUnit", "ns"},
          {"otherData", {{"workload", in.title}, {"clock_ghz", in.clock_ghz}, {"time_unit", "core cycles"}}}};
}

}  // namespace tpuemu::profile
