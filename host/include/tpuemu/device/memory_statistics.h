// SPDX-License-Identifier: Apache-2.0
// Statistics of the memory behind a device, by name. A backend registers each statistic it
// measures - name, unit, meaning, and either one total or one value per channel - the way
// Ramulator 2 components register their stats, so the report, the JSON and every backend share
// one list and the Device interface names no backend's types.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace tpuemu {

struct MemoryStatistic {
  std::string name;         // "row_hits"
  std::string unit;         // "requests", "tCK", "B/tCK", "fraction"
  std::string description;  // one line
  bool per_channel = false;
  double total = 0;                  // per-channel statistics: the sum over channels
  std::vector<double> channels;      // per-channel statistics only
};

class MemoryStatistics {
 public:
  MemoryStatistics() = default;
  // source: what measured them ("hbm2-2000: RTL controller + DRAM device model").
  MemoryStatistics(std::string source, std::size_t channels);

  // Throws Error for a duplicate name or (per channel) a value count other than channels().
  void add_total(std::string name, std::string unit, std::string description, double value);
  void add_per_channel(std::string name, std::string unit, std::string description,
                       std::vector<double> values);

  const std::string& source() const { return source_; }
  std::size_t channels() const { return channels_; }
  const std::vector<MemoryStatistic>& all() const { return stats_; }
  const MemoryStatistic* find(std::string_view name) const;
  // The total of a statistic; throws Error "memory statistics: no statistic 'x' (source ...)".
  double total(std::string_view name) const;
  std::uint64_t count(std::string_view name) const { return static_cast<std::uint64_t>(total(name)); }
  double channel(std::string_view name, std::size_t channel) const;

  // {"source", "channels": N, "statistics": [{"name", "unit", "description", "total", "per_channel"}]}
  nlohmann::json to_json() const;
  // The inverse of to_json (statistics that travel over the protocol); throws Error naming the
  // field that is missing or of the wrong type.
  static MemoryStatistics from_json(const nlohmann::json& j);

 private:
  const MemoryStatistic& get(std::string_view name) const;
  void add(MemoryStatistic s);

  std::string source_;
  std::size_t channels_ = 0;
  std::vector<MemoryStatistic> stats_;
};

}  // namespace tpuemu
