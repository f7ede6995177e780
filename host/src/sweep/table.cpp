// SPDX-License-Identifier: Apache-2.0
// The sweep table: what a result may be, the table as JSON (for ranks and sweep.json), as CSV
// and as text for the terminal.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "sweep_rules.h"
#include "tpuemu/sweep/sweep.h"

namespace tpuemu::sweep {

bool is_result_name(std::string_view name) {
  if (name.empty() || name.front() == '.') return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
           c == '.';
  });
}

std::string value_text(const nlohmann::json& value) {
  if (value.is_string()) return value.get<std::string>();
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string point_place(const SweepPoint& point) {
  return fmt::format("sweep point {} ({})", point.index, point.label());
}

void check_results(const SweepGrid& grid, const nlohmann::json& results) {
  if (!results.is_object()) {
    throw Error(fmt::format("the point runner returned {}, not an object of results", results.type_name()));
  }
  for (const auto& [name, value] : results.items()) {
    if (!is_result_name(name)) throw Error(fmt::format("result \"{}\": {}", name, kResultNameRule));
    if (std::find(kAxisNames.begin(), kAxisNames.end(), name) != kAxisNames.end()) {
      throw Error(fmt::format("result \"{}\" has the name of an axis (they share the CSV's columns)", name));
    }
    if (!value.is_number() && !value.is_boolean() && !value.is_string()) {
      throw Error(
          fmt::format("result \"{}\" is {}; a result is a number, a bool or a string", name, value.type_name()));
    }
    if (value.is_number_float() && !std::isfinite(value.get<double>())) {
      throw Error(fmt::format("result \"{}\" is not a finite number (JSON and CSV cannot hold it)", name));
    }
  }
  for (std::size_t m = 0; m < grid.metrics.size(); ++m) {
    const auto it = results.find(grid.metrics[m]);
    if (it != results.end() && it->is_number()) continue;
    std::vector<std::string> names;
    for (const auto& [name, value] : results.items()) names.push_back(name);
    throw Error(grid.metric_places[m],
                fmt::format("the point has no numeric result \"{}\" (its results: {})", grid.metrics[m],
                            names.empty() ? "none" : fmt::format("{}", fmt::join(names, ", "))));
  }
}

std::vector<std::string> SweepTable::result_names() const {
  std::vector<std::string> names;
  for (const SweepRow& row : rows) {
    for (const auto& [name, value] : row.results.items()) {
      if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
    }
  }
  return names;
}

nlohmann::json table_to_json(const SweepTable& table, const SweepGrid& grid) {
  nlohmann::json axes = nlohmann::json::array();
  for (const SweepAxis& axis : grid.axes) axes.push_back(axis.name);
  nlohmann::json rows = nlohmann::json::array();
  for (const SweepRow& row : table.rows) {
    nlohmann::json values = nlohmann::json::object();
    for (const AxisValue& v : row.point.values) values[v.axis] = v.value;
    rows.push_back({{"point", row.point.index}, {"values", std::move(values)}, {"results", row.results}});
  }
  return {{"axes", std::move(axes)}, {"rows", std::move(rows)}};
}

SweepTable table_from_json(const nlohmann::json& table, const SweepGrid& grid, std::string_view source) {
  auto fail = [&](const std::string& pointer, std::string_view cause) {
    return json_value_error(source, pointer, cause);
  };
  if (!table.is_object()) throw fail("", fmt::format("expected an object, got {}", table.type_name()));
  nlohmann::json axes = nlohmann::json::array();
  for (const SweepAxis& axis : grid.axes) axes.push_back(axis.name);
  if (table.value("axes", nlohmann::json()) != axes) {
    throw fail("/axes", fmt::format("expected the grid's axes {}", axes.dump()));
  }
  const auto rows = table.find("rows");
  if (rows == table.end() || !rows->is_array()) throw fail("/rows", "expected a list of rows");
  SweepTable parsed;
  for (std::size_t r = 0; r < rows->size(); ++r) {
    const nlohmann::json& row = (*rows)[r];
    const std::string pointer = fmt::format("/rows/{}", r);
    if (!row.is_object() || !row.contains("point") || !row.contains("values") || !row.contains("results")) {
      throw fail(pointer, "expected an object with \"point\", \"values\" and \"results\"");
    }
    const nlohmann::json& index = row["point"];
    if (!index.is_number_unsigned() || index.get<std::size_t>() >= grid.point_count()) {
      throw fail(pointer + "/point",
                 fmt::format("expected a point of the grid (0 to {}), got {}", grid.point_count() - 1, index.dump()));
    }
    SweepPoint point = sweep_point(grid, index.get<std::size_t>());
    if (!parsed.rows.empty() && point.index <= parsed.rows.back().point.index) {
      throw fail(pointer + "/point", fmt::format("point {} after point {}: rows are in increasing point order",
                                                 point.index, parsed.rows.back().point.index));
    }
    nlohmann::json values = nlohmann::json::object();
    for (const AxisValue& v : point.values) values[v.axis] = v.value;
    if (row["values"] != values) {
      throw fail(pointer + "/values",
                 fmt::format("{} is not point {} of the grid ({})", row["values"].dump(), point.index, values.dump()));
    }
    try {
      check_results(grid, row["results"]);
    } catch (const Error& e) {
      throw fail(pointer + "/results", e.what());
    }
    parsed.rows.push_back({std::move(point), row["results"]});
  }
  return parsed;
}

namespace {

// RFC 4180: a field with a comma, a double quote or a line break is quoted, its quotes doubled.
std::string csv_field(std::string_view text) {
  if (text.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(text);
  std::string quoted = "\"";
  for (char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

// Every cell of the table: the axis values, then the results in result_names() order ("" where
// a row lacks a result). text_of renders one present value.
template <typename TextOf>
std::vector<std::vector<std::string>> table_cells(const SweepTable& table, const std::vector<std::string>& results,
                                                  TextOf text_of) {
  std::vector<std::vector<std::string>> cells;
  for (const SweepRow& row : table.rows) {
    std::vector<std::string> line;
    for (const AxisValue& v : row.point.values) line.push_back(text_of(v.value));
    for (const std::string& name : results) {
      const auto it = row.results.find(name);
      line.push_back(it == row.results.end() ? "" : text_of(*it));
    }
    cells.push_back(std::move(line));
  }
  return cells;
}

std::vector<std::string> header(const SweepGrid& grid, const std::vector<std::string>& results) {
  std::vector<std::string> names;
  for (const SweepAxis& axis : grid.axes) names.push_back(axis.name);
  names.insert(names.end(), results.begin(), results.end());
  return names;
}

}  // namespace

std::string sweep_csv(const SweepTable& table, const SweepGrid& grid) {
  const std::vector<std::string> results = table.result_names();
  std::vector<std::vector<std::string>> lines = table_cells(table, results, value_text);
  lines.insert(lines.begin(), header(grid, results));
  std::string csv;
  for (const std::vector<std::string>& line : lines) {
    for (std::size_t c = 0; c < line.size(); ++c) {
      if (c > 0) csv += ',';
      csv += csv_field(line[c]);
    }
    csv += '\n';
  }
  return csv;
}

nlohmann::json sweep_json(const SweepTable& table, const SweepGrid& grid) {
  nlohmann::json j = table_to_json(table, grid);
  j["grid"] = grid_to_json(grid);
  return j;
}

std::vector<std::string> plotted_metrics(const SweepTable& table, const SweepGrid& grid) {
  if (!grid.metrics.empty()) return grid.metrics;
  std::vector<std::string> numeric;
  for (const std::string& name : table.result_names()) {
    const bool is_number = std::any_of(table.rows.begin(), table.rows.end(), [&](const SweepRow& row) {
      const auto it = row.results.find(name);
      return it != row.results.end() && it->is_number();
    });
    if (is_number) numeric.push_back(name);
  }
  return numeric;
}

std::string format_sweep_table(const SweepTable& table, const SweepGrid& grid) {
  const std::vector<std::string> results = table.result_names();
  // Four significant digits are enough to compare points by eye; sweep.csv has every digit.
  std::vector<std::vector<std::string>> lines = table_cells(table, results, [](const nlohmann::json& v) {
    return v.is_number_float() ? fmt::format("{:.4g}", v.get<double>()) : value_text(v);
  });
  lines.insert(lines.begin(), header(grid, results));
  std::vector<std::size_t> widths(lines.front().size(), 0);
  for (const std::vector<std::string>& line : lines) {
    for (std::size_t c = 0; c < line.size(); ++c) widths[c] = std::max(widths[c], line[c].size());
  }
  std::string text;
  for (const std::vector<std::string>& line : lines) {
    std::string out;
    for (std::size_t c = 0; c < line.size(); ++c)
      out += fmt::format("{}{:<{}}", c == 0 ? "" : "  ", line[c], widths[c]);
    while (!out.empty() && out.back() == ' ') out.pop_back();
    text += out + '\n';
  }
  return text;
}

}  // namespace tpuemu::sweep
