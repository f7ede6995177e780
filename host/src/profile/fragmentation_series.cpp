// SPDX-License-Identifier: Apache-2.0
#include "tpuemu/profile/fragmentation_series.h"

#include <algorithm>
#include <charconv>
#include <cmath>

#include <fmt/format.h>

#include "tpuemu/alloc/csv_reader.h"

namespace tpuemu::profile {
namespace {

double fraction_field(const alloc::CsvReader& csv, std::string_view column) {
  const std::string text = csv.field(column);
  double v = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size() || !std::isfinite(v) || v < 0 || v > 1)
    throw csv.error_at(column, fmt::format("{} '{}' is not a fraction between 0 and 1", column, text));
  return v;
}

}  // namespace

std::vector<FragmentationSeries> parse_fragmentation_csv(std::string text, const std::string& source) {
  alloc::CsvReader csv(std::move(text), source);
  csv.require_columns({"space", "policy", "time", "live_bytes", "in_use_bytes", "footprint_bytes", "free_bytes",
                       "free_blocks", "largest_free_block", "external_fragmentation", "gap_square_ratio",
                       "internal_waste_bytes"});
  std::vector<FragmentationSeries> out;
  while (csv.next_row()) {
    const std::string space = csv.field("space"), policy = csv.field("policy");
    auto series = std::find_if(out.begin(), out.end(),
                               [&](const FragmentationSeries& f) { return f.space == space && f.policy == policy; });
    if (series == out.end()) series = out.insert(out.end(), {space, policy, {}});
    alloc::SpaceSnapshot s;
    s.time = csv.unsigned_field("time");
    s.live_bytes = csv.unsigned_field("live_bytes");
    s.in_use_bytes = csv.unsigned_field("in_use_bytes");
    s.footprint_bytes = csv.unsigned_field("footprint_bytes");
    s.free_bytes = csv.unsigned_field("free_bytes");
    s.free_blocks = csv.unsigned_field("free_blocks");
    s.largest_free_block = csv.unsigned_field("largest_free_block");
    s.external_fragmentation = fraction_field(csv, "external_fragmentation");
    s.gap_square_ratio = fraction_field(csv, "gap_square_ratio");
    s.internal_waste_bytes = csv.unsigned_field("internal_waste_bytes");
    series->samples.push_back(s);
  }
  return out;
}

}  // namespace tpuemu::profile
