// SPDX-License-Identifier: Apache-2.0
#include "tpuemu/profile/engine_timeline.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <unordered_map>

#include <fmt/format.h>

#include "tpuemu/base/json.h"

namespace tpuemu::profile {
namespace {

constexpr std::string_view kCoreProcess = "core", kHbmProcess = "HBM";

// Where a lane stands: the queues in pipeline order, other core threads after them, then the HBM
// channels by number.
std::pair<int, std::uint64_t> lane_rank(const TimelineLane& lane, std::uint64_t tid) {
  if (lane.process == kCoreProcess) {
    static constexpr std::string_view kQueues[] = {"DMA queue", "MXU queue", "vector queue"};
    for (int i = 0; i < 3; ++i) {
      if (lane.name == kQueues[i]) return {0, static_cast<std::uint64_t>(i)};
    }
    return {1, tid};
  }
  std::uint64_t channel = tid;
  if (lane.name.starts_with("channel ")) {
    const std::string_view n = std::string_view(lane.name).substr(8);
    std::from_chars(n.data(), n.data() + n.size(), channel);
  }
  return {2, channel};
}

const nlohmann::json* member(const nlohmann::json& object, const char* key) {
  const auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

}  // namespace

EngineTimeline engine_timeline(const nlohmann::json& root, const std::string& source) {
  auto error_at = [&](const std::string& pointer, std::string_view cause) { return json_value_error(source, pointer, cause); };
  const nlohmann::json* events = root.is_object() ? member(root, "traceEvents") : nullptr;
  if (events == nullptr || !events->is_array()) throw error_at("/traceEvents", "expected an array of trace events");
  double clock_ghz = 1;
  if (const nlohmann::json* other = member(root, "otherData"); other != nullptr && other->is_object()) {
    if (const nlohmann::json* c = member(*other, "clock_ghz"); c != nullptr) {
      if (!c->is_number() || !(c->get<double>() > 0) || !std::isfinite(c->get<double>()))
        throw error_at("/otherData/clock_ghz", "expected a positive number");
      clock_ghz = c->get<double>();
    }
  }
  // Names first: metadata events may follow the events they name.
  std::map<std::uint64_t, std::string> process_of;
  std::map<std::pair<std::uint64_t, std::uint64_t>, std::string> thread_of;
  auto number = [&](const nlohmann::json& e, std::size_t i, const char* key) {
    const nlohmann::json* v = member(e, key);
    if (v == nullptr || !v->is_number() || v->get<double>() < 0)
      throw error_at(fmt::format("/traceEvents/{}/{}", i, key), "expected a non-negative number");
    return v->get<double>();
  };
  auto text = [](const nlohmann::json& e, const char* key) {
    const nlohmann::json* v = member(e, key);
    return v != nullptr && v->is_string() ? v->get<std::string>() : std::string();
  };
  for (std::size_t i = 0; i < events->size(); ++i) {
    const nlohmann::json& e = (*events)[i];
    if (!e.is_object()) throw error_at(fmt::format("/traceEvents/{}", i), "expected an object");
    if (text(e, "ph") != "M") continue;
    const nlohmann::json* args = member(e, "args");
    const std::string name = args != nullptr && args->is_object() ? text(*args, "name") : "";
    const auto pid = static_cast<std::uint64_t>(number(e, i, "pid"));
    if (text(e, "name") == "process_name") process_of[pid] = name;
    if (text(e, "name") == "thread_name") thread_of[{pid, static_cast<std::uint64_t>(number(e, i, "tid"))}] = name;
  }
  EngineTimeline out;
  std::map<std::pair<std::uint64_t, std::uint64_t>, TimelineLane> lanes;
  std::unordered_map<std::string, std::uint32_t> label_of;
  auto cycles = [&](double us) { return static_cast<std::uint64_t>(std::llround(us * 1000.0 * clock_ghz)); };
  for (std::size_t i = 0; i < events->size(); ++i) {
    const nlohmann::json& e = (*events)[i];
    if (text(e, "ph") != "X") continue;
    const auto pid = static_cast<std::uint64_t>(number(e, i, "pid"));
    const auto process = process_of.find(pid);
    if (process == process_of.end() || (process->second != kCoreProcess && process->second != kHbmProcess)) continue;
    const std::pair key{pid, static_cast<std::uint64_t>(number(e, i, "tid"))};
    auto [lane, added] = lanes.try_emplace(key);
    if (added) {
      lane->second.process = process->second;
      const auto thread = thread_of.find(key);
      lane->second.name = thread != thread_of.end() ? thread->second : fmt::format("thread {}", key.second);
    }
    const std::string name = text(e, "name");
    const auto [label, new_label] = label_of.try_emplace(name, static_cast<std::uint32_t>(out.labels.size()));
    if (new_label) out.labels.push_back(name);
    lane->second.slices.push_back({cycles(number(e, i, "ts")), cycles(number(e, i, "dur")), label->second});
  }
  std::vector<std::pair<std::pair<int, std::uint64_t>, TimelineLane>> ranked;
  for (auto& [key, lane] : lanes) ranked.emplace_back(lane_rank(lane, key.second), std::move(lane));
  std::stable_sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (auto& [rank, lane] : ranked) {
    // In start order, which the page's hover search relies on.
    std::stable_sort(lane.slices.begin(), lane.slices.end(),
                     [](const TimelineSlice& a, const TimelineSlice& b) { return a.start < b.start; });
    out.lanes.push_back(std::move(lane));
  }
  return out;
}

}  // namespace tpuemu::profile
