// SPDX-License-Identifier: Apache-2.0
#include "tpuemu/profile/memory_map.h"

#include <map>
#include <vector>

#include <fmt/format.h>

#include "tpuemu/profile/memory_profile.h"

namespace tpuemu::profile {

SpaceMap space_map(const alloc::AllocTrace& trace, const std::string& space, const std::string& policy,
                   std::uint64_t capacity, const PlacementOf& placement_of) {
  SpaceMap map;
  map.space = space;
  map.policy = policy;
  map.capacity = capacity;
  const auto& ev = trace.events;
  map.end = ev.empty() ? 0 : ev.back().time;
  std::map<std::string, std::size_t> open;  // id -> index in map.buffers
  for (std::size_t i = 0; i < ev.size(); ++i) {
    const alloc::TraceEvent& e = ev[i];
    if (e.space != space) continue;
    if (!e.alloc) {
      if (const auto it = open.find(e.id); it != open.end()) {
        map.buffers[it->second].end = e.time;
        open.erase(it);
      }
      continue;
    }
    const std::optional<std::uint64_t> offset = placement_of(i);
    if (!offset) continue;
    const std::string name = e.owner.empty() ? e.id : e.owner;
    open[e.id] = map.buffers.size();
    map.buffers.push_back({e.id, name, buffer_layer(name), std::string(buffer_kind(name)), *offset, e.size, e.time,
                           map.end, {}});
  }
  return map;
}

SpaceMap space_map_as_placed(const alloc::AllocTrace& trace, const std::string& space, const std::string& policy,
                             std::uint64_t capacity) {
  return space_map(trace, space, policy, capacity, [&](std::size_t i) { return trace.events[i].offset; });
}

SpaceMap space_map_of_replay(const alloc::AllocTrace& trace, const alloc::ReplayRun& run) {
  std::map<std::size_t, std::uint64_t> offset_of;
  for (const alloc::ReplayPlacement& p : run.placements) offset_of[p.event] = p.offset;
  SpaceMap map = space_map(trace, run.metrics.space, run.metrics.policy, run.metrics.capacity,
                           [&](std::size_t i) -> std::optional<std::uint64_t> {
                             const auto it = offset_of.find(i);
                             if (it == offset_of.end()) return std::nullopt;
                             return it->second;
                           });
  map.failure = run.first_failure;
  return map;
}

RunPlacements run_placements(const alloc::AllocTrace& trace, const std::string& space, const std::string& policy,
                             std::uint64_t capacity, std::uint64_t granularity, bool every_policy) {
  RunPlacements out;
  out.map.spaces.push_back(space_map_as_placed(trace, space, policy, capacity));
  if (!every_policy) return out;
  alloc::AllocTrace one_space = trace;
  std::erase_if(one_space.events, [&](const alloc::TraceEvent& e) { return e.space != space; });
  alloc::ReplayOptions options;
  options.capacity[space] = capacity;
  options.granularity = granularity;
  options.keep_samples = true;
  options.keep_placements = true;
  for (const std::string& other : alloc::allocator_names()) {
    if (other != policy) options.policies.push_back(other);
  }
  out.replays = alloc::replay_alloc_trace(one_space, options).runs;
  for (const alloc::ReplayRun& run : out.replays) {
    SpaceMap m = space_map_of_replay(one_space, run);
    m.end = out.map.spaces.front().end;  // the whole trace's end, as the run's own map
    out.map.spaces.push_back(std::move(m));
  }
  return out;
}

nlohmann::json memory_map_to_json(const MemoryMap& map) {
  nlohmann::json spaces = nlohmann::json::array();
  for (const SpaceMap& s : map.spaces) {
    nlohmann::json buffers = nlohmann::json::array();
    for (const MapBuffer& b : s.buffers) {
      buffers.push_back({{"id", b.id}, {"name", b.name}, {"layer", b.layer}, {"kind", b.kind}, {"offset", b.offset},
                         {"size", b.size}, {"start", b.start}, {"end", b.end}});
    }
    nlohmann::json j = {{"space", s.space}, {"policy", s.policy}, {"capacity", s.capacity}, {"end", s.end},
                        {"buffers", std::move(buffers)}};
    if (s.failure) j["failure"] = *s.failure;
    spaces.push_back(std::move(j));
  }
  return {{"spaces", std::move(spaces)}};
}

namespace {

// The array member `key` of an object (an error at its position when it is something else).
const nlohmann::json& array_member(JsonObjectReader& object, std::string_view key) {
  const nlohmann::json* v = object.find(key);
  if (v == nullptr) throw object.error("", fmt::format("missing required key \"{}\"", key));
  if (!v->is_array()) throw object.error(key, "expected an array");
  return *v;
}

MapBuffer buffer_from_json(const JsonDocument& doc, const std::string& pointer) {
  JsonObjectReader o(doc, pointer);
  MapBuffer b;
  b.id = o.get_string("id");
  b.name = o.get_string("name");
  b.layer = o.get_string("layer");
  b.kind = o.get_string("kind");
  b.offset = o.get_uint("offset");
  b.size = o.get_uint("size", 1);
  b.start = o.get_uint("start");
  b.end = o.get_uint("end", b.start);
  o.finish();
  return b;
}

SpaceMap space_from_json(const JsonDocument& doc, const std::string& pointer) {
  JsonObjectReader o(doc, pointer);
  SpaceMap s;
  s.space = o.get_string("space");
  s.policy = o.get_string("policy");
  s.capacity = o.get_uint("capacity", 1);
  s.end = o.get_uint("end");
  if (o.has("failure")) s.failure = o.get_string("failure");
  const nlohmann::json& buffers = array_member(o, "buffers");
  for (std::size_t i = 0; i < buffers.size(); ++i) {
    const std::string at = fmt::format("{}/buffers/{}", pointer, i);
    MapBuffer b = buffer_from_json(doc, at);
    if (b.offset > s.capacity || b.size > s.capacity - b.offset)
      throw doc.error_at(at, fmt::format("buffer {} ends past the capacity {}", b.id, s.capacity));
    if (b.end > s.end) throw doc.error_at(at + "/end", fmt::format("after the map's end {}", s.end));
    s.buffers.push_back(std::move(b));
  }
  o.finish();
  return s;
}

}  // namespace

MemoryMap memory_map_from_json(const JsonDocument& doc, const std::string& pointer) {
  JsonObjectReader o(doc, pointer);
  MemoryMap map;
  const nlohmann::json& spaces = array_member(o, "spaces");
  for (std::size_t i = 0; i < spaces.size(); ++i) map.spaces.push_back(space_from_json(doc, fmt::format("{}/spaces/{}", pointer, i)));
  o.finish();
  return map;
}

}  // namespace tpuemu::profile
