// SPDX-License-Identifier: Apache-2.0
// The grid file (docs/sweep.md, "Grid file") and its points. Every mistake is an Error at the
// place it was written; values are checked for their type only, since what a preset or shard
// name means is the runner's to know.
#include <algorithm>

#include <fmt/format.h>

#include "tpuemu/sweep/sweep.h"
#include "sweep_rules.h"

namespace tpuemu::sweep {
namespace {

enum class ValueKind { PositiveInteger, Bool, String };

ValueKind value_kind(std::string_view axis) {
  if (axis == "devices" || axis == "buffers" || axis == "batch") return ValueKind::PositiveInteger;
  if (axis == "overlap") return ValueKind::Bool;
  return ValueKind::String;
}

std::string_view kind_name(ValueKind kind) {
  switch (kind) {
    case ValueKind::PositiveInteger: return "a positive integer";
    case ValueKind::Bool: return "true or false";
    case ValueKind::String: break;
  }
  return "a non-empty string";
}

bool has_kind(const nlohmann::json& value, ValueKind kind) {
  switch (kind) {
    case ValueKind::PositiveInteger: return value.is_number_unsigned() && value.get<std::uint64_t>() > 0;
    case ValueKind::Bool: return value.is_boolean();
    case ValueKind::String: break;
  }
  return value.is_string() && !value.get_ref<const std::string&>().empty();
}

// "file:line:col: /pointer", the place part of an Error the document would raise there.
std::string place_of(const JsonDocument& doc, const std::string& pointer) {
  const JsonDocument::Position pos = doc.position_of(pointer);
  return Error::at(doc.source(), pos.line, pos.column, pointer).what();
}

std::string axis_list() { return fmt::format("{}", fmt::join(kAxisNames, ", ")); }

SweepAxis parse_axis(const JsonDocument& doc, std::string_view name, const nlohmann::json& list) {
  const std::string pointer = fmt::format("/axes/{}", name);
  if (!list.is_array()) throw doc.error_at(pointer, fmt::format("expected a list of values, got {}", list.type_name()));
  if (list.empty()) throw doc.error_at(pointer, "empty list: give at least one value");
  const ValueKind kind = value_kind(name);
  SweepAxis axis{std::string(name), {}};
  for (std::size_t i = 0; i < list.size(); ++i) {
    const nlohmann::json& value = list[i];
    const std::string element = fmt::format("{}/{}", pointer, i);
    if (!has_kind(value, kind)) {
      throw doc.error_at(element, fmt::format("expected {}, got {}", kind_name(kind), value.dump()));
    }
    if (auto same = std::find(axis.values.begin(), axis.values.end(), value); same != axis.values.end()) {
      throw doc.error_at(
          element, fmt::format("duplicate value {} (also {}/{})", value.dump(), pointer, same - axis.values.begin()));
    }
    axis.values.push_back(value);
  }
  return axis;
}

// The axes in kAxisNames order, whatever order the file lists them in.
std::vector<SweepAxis> parse_axes(const JsonDocument& doc, const nlohmann::json& axes) {
  for (const auto& [name, list] : axes.items()) {
    if (std::find(kAxisNames.begin(), kAxisNames.end(), name) == kAxisNames.end()) {
      throw doc.error_at("/axes/" + json_pointer_escape(name),
                         fmt::format("unknown axis \"{}\" (axes: {})", name, axis_list()));
    }
  }
  std::vector<SweepAxis> parsed;
  for (std::string_view name : kAxisNames) {
    if (auto it = axes.find(std::string(name)); it != axes.end()) parsed.push_back(parse_axis(doc, name, *it));
  }
  if (parsed.empty()) throw doc.error_at("/axes", fmt::format("no axes: give at least one of {}", axis_list()));
  // In floating point: the product of nine long lists would overflow an integer (exact to 2^53).
  double points = 1;
  std::string shape;
  for (const SweepAxis& axis : parsed) {
    shape += fmt::format("{}{} {}", shape.empty() ? "" : " x ", axis.name, axis.values.size());
    points *= static_cast<double>(axis.values.size());
  }
  if (points > static_cast<double>(kMaxSweepPoints)) {
    throw doc.error_at(
        "/axes", fmt::format("{:.0f} points ({}), more than the {} a sweep may have", points, shape, kMaxSweepPoints));
  }
  return parsed;
}

void parse_metrics(const JsonDocument& doc, const nlohmann::json& metrics, SweepGrid& grid) {
  if (!metrics.is_array())
    throw doc.error_at("/metrics", fmt::format("expected a list of result names, got {}", metrics.type_name()));
  if (metrics.empty())
    throw doc.error_at("/metrics",
                       "empty list: name at least one result, or leave \"metrics\" out for every numeric result");
  for (std::size_t i = 0; i < metrics.size(); ++i) {
    const std::string pointer = fmt::format("/metrics/{}", i);
    const nlohmann::json& metric = metrics[i];
    if (!metric.is_string()) throw doc.error_at(pointer, fmt::format("expected a result name, got {}", metric.dump()));
    const std::string& name = metric.get_ref<const std::string&>();
    if (!is_result_name(name)) throw doc.error_at(pointer, fmt::format("\"{}\": {}", name, kResultNameRule));
    if (auto same = std::find(grid.metrics.begin(), grid.metrics.end(), name); same != grid.metrics.end()) {
      throw doc.error_at(pointer,
                         fmt::format("duplicate metric \"{}\" (also /metrics/{})", name, same - grid.metrics.begin()));
    }
    grid.metrics.push_back(name);
    grid.metric_places.push_back(place_of(doc, pointer));
  }
}

}  // namespace

const SweepAxis* SweepGrid::find_axis(std::string_view name) const {
  auto it = std::find_if(axes.begin(), axes.end(), [&](const SweepAxis& a) { return a.name == name; });
  return it == axes.end() ? nullptr : &*it;
}

std::size_t SweepGrid::point_count() const {
  std::size_t count = 1;
  for (const SweepAxis& axis : axes) count *= axis.values.size();
  return count;
}

SweepGrid parse_sweep_grid(const JsonDocument& doc, const std::filesystem::path& grid_folder) {
  JsonObjectReader root(doc, "");
  SweepGrid grid;
  grid.source = doc.source();
  const std::string model = root.get_string("model");
  if (model.empty()) throw root.error("model", "empty path");
  grid.model = (grid_folder / model).lexically_normal();
  root.get_object("axes");  // an object, or the error says so
  grid.axes = parse_axes(doc, doc.root()["axes"]);
  if (const nlohmann::json* metrics = root.find("metrics")) parse_metrics(doc, *metrics, grid);
  if (const nlohmann::json* x = root.find("x")) {
    if (!x->is_string()) throw root.error("x", fmt::format("expected an axis name, got {}", x->dump()));
    grid.x_axis = x->get<std::string>();
    if (grid.find_axis(grid.x_axis) == nullptr) {
      std::vector<std::string> names;
      for (const SweepAxis& axis : grid.axes) names.push_back(axis.name);
      throw root.error(
          "x", fmt::format("\"{}\" is not an axis of this grid (its axes: {})", grid.x_axis, fmt::join(names, ", ")));
    }
  } else {
    auto varying =
        std::find_if(grid.axes.begin(), grid.axes.end(), [](const SweepAxis& a) { return a.values.size() > 1; });
    grid.x_axis = (varying != grid.axes.end() ? *varying : grid.axes.front()).name;
  }
  root.finish();
  return grid;
}

SweepGrid load_sweep_grid(const std::filesystem::path& path) {
  const JsonDocument doc = JsonDocument::load(path);
  return parse_sweep_grid(doc, path == "-" ? std::filesystem::path() : path.parent_path());
}

nlohmann::json grid_to_json(const SweepGrid& grid) {
  nlohmann::json axes = nlohmann::json::array();
  for (const SweepAxis& axis : grid.axes) axes.push_back({{"name", axis.name}, {"values", axis.values}});
  return {{"model", grid.model.string()}, {"axes", std::move(axes)}, {"metrics", grid.metrics}, {"x", grid.x_axis}};
}

const nlohmann::json* SweepPoint::find(std::string_view axis) const {
  auto it = std::find_if(values.begin(), values.end(), [&](const AxisValue& v) { return v.axis == axis; });
  return it == values.end() ? nullptr : &it->value;
}

std::string values_label(const std::vector<AxisValue>& values) {
  std::vector<std::string> parts;
  for (const AxisValue& v : values) parts.push_back(fmt::format("{}={}", v.axis, value_text(v.value)));
  return fmt::format("{}", fmt::join(parts, " "));
}

std::string SweepPoint::label() const { return values_label(values); }

SweepPoint sweep_point(const SweepGrid& grid, std::size_t index) {
  if (index >= grid.point_count()) {
    throw Error(fmt::format("sweep point {}: the grid has {} points", index, grid.point_count()));
  }
  SweepPoint point{index, std::vector<AxisValue>(grid.axes.size())};
  std::size_t rest = index;
  for (std::size_t a = grid.axes.size(); a-- > 0;) {
    const SweepAxis& axis = grid.axes[a];
    point.values[a] = {axis.name, axis.values[rest % axis.values.size()]};
    rest /= axis.values.size();
  }
  return point;
}

std::vector<SweepPoint> sweep_points(const SweepGrid& grid) {
  std::vector<SweepPoint> points;
  points.reserve(grid.point_count());
  for (std::size_t i = 0; i < grid.point_count(); ++i) points.push_back(sweep_point(grid, i));
  return points;
}

}  // namespace tpuemu::sweep
