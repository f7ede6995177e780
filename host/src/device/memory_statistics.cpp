// SPDX-License-Identifier: Apache-2.0
#include "tpuemu/device/memory_statistics.h"

#include <numeric>

#include <fmt/format.h>

#include "tpuemu/base/error.h"

namespace tpuemu {

MemoryStatistics::MemoryStatistics(std::string source, std::size_t channels)
    : source_(std::move(source)), channels_(channels) {}

void MemoryStatistics::add(MemoryStatistic s) {
  if (find(s.name) != nullptr) {
    throw Error("memory statistics", fmt::format("statistic '{}' is registered twice", s.name));
  }
  stats_.push_back(std::move(s));
}

void MemoryStatistics::add_total(std::string name, std::string unit, std::string description, double value) {
  add({std::move(name), std::move(unit), std::move(description), false, value, {}});
}

void MemoryStatistics::add_per_channel(std::string name, std::string unit, std::string description,
                                       std::vector<double> values) {
  if (values.size() != channels_) {
    throw Error("memory statistics", fmt::format("statistic '{}' has {} channel values, the memory has {} channels",
                                                 name, values.size(), channels_));
  }
  const double sum = std::accumulate(values.begin(), values.end(), 0.0);
  add({std::move(name), std::move(unit), std::move(description), true, sum, std::move(values)});
}

const MemoryStatistic* MemoryStatistics::find(std::string_view name) const {
  for (const MemoryStatistic& s : stats_) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

const MemoryStatistic& MemoryStatistics::get(std::string_view name) const {
  if (const MemoryStatistic* s = find(name)) return *s;
  throw Error("memory statistics", fmt::format("no statistic '{}' (source {})", name, source_));
}

double MemoryStatistics::total(std::string_view name) const { return get(name).total; }

double MemoryStatistics::channel(std::string_view name, std::size_t c) const {
  const MemoryStatistic& s = get(name);
  if (!s.per_channel || c >= s.channels.size()) {
    throw Error("memory statistics", fmt::format("statistic '{}' has no value for channel {}", name, c));
  }
  return s.channels[c];
}

nlohmann::json MemoryStatistics::to_json() const {
  nlohmann::json list = nlohmann::json::array();
  for (const MemoryStatistic& s : stats_) {
    nlohmann::json j{{"name", s.name}, {"unit", s.unit}, {"description", s.description}, {"total", s.total}};
    if (s.per_channel) j["per_channel"] = s.channels;
    list.push_back(std::move(j));
  }
  return {{"source", source_}, {"channels", channels_}, {"statistics", std::move(list)}};
}

MemoryStatistics MemoryStatistics::from_json(const nlohmann::json& j) {
  try {
    MemoryStatistics out(j.at("source").get<std::string>(), j.at("channels").get<std::size_t>());
    for (const nlohmann::json& s : j.at("statistics")) {
      auto name = s.at("name").get<std::string>();
      auto unit = s.at("unit").get<std::string>();
      auto description = s.at("description").get<std::string>();
      if (s.contains("per_channel")) {
        out.add_per_channel(std::move(name), std::move(unit), std::move(description),
                            s.at("per_channel").get<std::vector<double>>());
      } else {
        out.add_total(std::move(name), std::move(unit), std::move(description), s.at("total").get<double>());
      }
    }
    return out;
  } catch (const nlohmann::json::exception& e) {
    throw Error("memory statistics", fmt::format("malformed statistics: {}", e.what()));
  }
}

}  // namespace tpuemu
