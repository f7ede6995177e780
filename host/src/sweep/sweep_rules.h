// SPDX-License-Identifier: Apache-2.0
// What the files of the sweep layer share about names, values and results (private to the layer).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "tpuemu/sweep/sweep.h"

namespace tpuemu::sweep {

// A result name becomes a CSV column and a file name (plot-<name>.svg): letters, digits, '_', '-'
// and '.', not starting with '.' (no hidden files, no "..").
bool is_result_name(std::string_view name);
inline constexpr std::string_view kResultNameRule =
    "a result name is letters, digits, '_', '-' and '.', and does not start with '.'";

// An axis value or result as a person reads it: strings without quotes, everything else as JSON.
std::string value_text(const nlohmann::json& value);

// "buffers=2 preset=small": axis values as a person reads them (SweepPoint::label, plot legends).
std::string values_label(const std::vector<AxisValue>& values);

// Throws Error (the cause alone; the caller adds the place) unless `results` is what a
// PointRunner must return: a flat object of finite numbers, bools and strings under result names
// that are not axis names, with every metric of the grid among them as a number.
void check_results(const SweepGrid& grid, const nlohmann::json& results);

// "sweep point 7 (devices=4 shard=tensor)": the place of every error about one point.
std::string point_place(const SweepPoint& point);

}  // namespace tpuemu::sweep
