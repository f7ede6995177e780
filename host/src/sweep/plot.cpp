// SPDX-License-Identifier: Apache-2.0
// plot-<metric>.svg: one line chart per metric, written by hand (a plotting library would be a
// dependency for a few dozen elements). The x axis is categorical - the x axis's values in grid
// order, evenly spaced - because axis values are often names (shard, allocator) and even numeric
// ones (devices 1, 2, 4) read best one step apart. Each combination of the other axes that vary
// is one series; the axes with one value are constant and shown under the title.
#include <algorithm>
#include <array>
#include <cmath>
#include <iterator>
#include <limits>
#include <optional>

#include <fmt/format.h>

#include "sweep_rules.h"
#include "tpuemu/base/markup.h"
#include "tpuemu/sweep/sweep.h"

namespace tpuemu::sweep {
namespace {

// The canvas: the plot area with room for the tick labels on the left, the title above and the
// category and axis labels below; the legend to the right of it.
constexpr double kPlotLeft = 90, kPlotTop = 64, kPlotWidth = 560, kPlotHeight = 300;
constexpr double kLegendLeft = kPlotLeft + kPlotWidth + 30, kLegendRow = 20, kCanvasWidth = kLegendLeft + 260;
constexpr double kBottomMargin = 80;
constexpr int kTargetTicks = 5;
// Tableau 10: distinguishable, and readable on white. More series than colours repeat them.
constexpr std::array<std::string_view, 10> kPalette = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                                                       "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};
// Series with equal values lie on top of each other (an axis that changes nothing - which is a
// finding). Each series also has a dash pattern, so a line drawn over another lets it show through.
constexpr std::array<std::string_view, 4> kDashes = {"", " stroke-dasharray=\"8 5\"", " stroke-dasharray=\"3 4\"",
                                                     " stroke-dasharray=\"12 4 3 4\""};

struct Series {
  std::string label;
  std::vector<std::optional<double>> values;  // per x category; empty where no row has a number
};

struct YScale {
  double low = 0, high = 1, step = 0.2;
  double y(double value) const { return kPlotTop + kPlotHeight * (high - value) / (high - low); }
};

// From 0 (or the least value, when negative) to the largest, widened to whole steps of 1, 2, 2.5
// or 5 times a power of ten so that about kTargetTicks ticks carry round numbers.
YScale y_scale(double least, double largest) {
  const double low = std::min(0.0, least), high = std::max(0.0, largest);
  const double span = high > low ? high - low : 1;
  const double raw = span / kTargetTicks;
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  double step = magnitude * 10;
  for (double nice : {1.0, 2.0, 2.5, 5.0}) {
    if (magnitude * nice >= raw) {
      step = magnitude * nice;
      break;
    }
  }
  YScale scale{std::floor(low / step) * step, std::ceil(high / step) * step, step};
  if (scale.high <= scale.low) scale.high = scale.low + step;
  return scale;
}

// 1500000 -> "1.5M": tick labels stay short whatever the metric's unit.
std::string tick_label(double value) {
  const double magnitude = std::abs(value);
  constexpr std::array<std::pair<double, std::string_view>, 3> kSuffixes = {{{1e9, "G"}, {1e6, "M"}, {1e3, "k"}}};
  for (const auto& [scale, suffix] : kSuffixes) {
    if (magnitude >= scale) return fmt::format("{:.4g}{}", value / scale, suffix);
  }
  return fmt::format("{:.4g}", std::abs(value) < 1e-12 ? 0.0 : value);
}

std::vector<Series> series_of(const SweepTable& table, const SweepGrid& grid, std::string_view metric,
                              const SweepAxis& x_axis) {
  std::vector<std::string> varying;  // the other axes with more than one value
  for (const SweepAxis& axis : grid.axes) {
    if (axis.name != x_axis.name && axis.values.size() > 1) varying.push_back(axis.name);
  }
  std::vector<Series> series;
  for (const SweepRow& row : table.rows) {
    std::vector<AxisValue> series_values;
    std::copy_if(
        row.point.values.begin(), row.point.values.end(), std::back_inserter(series_values),
        [&](const AxisValue& v) { return std::find(varying.begin(), varying.end(), v.axis) != varying.end(); });
    const std::string label = varying.empty() ? std::string(metric) : values_label(series_values);
    auto it = std::find_if(series.begin(), series.end(), [&](const Series& s) { return s.label == label; });
    if (it == series.end()) {
      series.push_back({label, std::vector<std::optional<double>>(x_axis.values.size())});
      it = series.end() - 1;
    }
    const nlohmann::json& x = *row.point.find(x_axis.name);
    const auto category = std::find(x_axis.values.begin(), x_axis.values.end(), x) - x_axis.values.begin();
    const auto result = row.results.find(std::string(metric));
    if (result != row.results.end() && result->is_number()) it->values[category] = result->get<double>();
  }
  return series;
}

}  // namespace

std::string sweep_plot_svg(const SweepTable& table, const SweepGrid& grid, std::string_view metric) {
  const SweepAxis* x_axis = grid.find_axis(grid.x_axis);
  if (x_axis == nullptr)
    throw Error(fmt::format("sweep plot: the x axis \"{}\" is not an axis of the grid", grid.x_axis));
  const std::vector<Series> series = series_of(table, grid, metric, *x_axis);

  double least = std::numeric_limits<double>::infinity(), largest = -least;
  for (const Series& s : series) {
    for (const std::optional<double>& v : s.values) {
      if (v) least = std::min(least, *v), largest = std::max(largest, *v);
    }
  }
  const YScale scale = std::isfinite(least) ? y_scale(least, largest) : YScale{};
  const double legend_height = kPlotTop + kLegendRow * static_cast<double>(series.size() + 1);
  const double height = std::max(kPlotTop + kPlotHeight + kBottomMargin, legend_height);
  const std::size_t categories = x_axis->values.size();
  auto x_of = [&](std::size_t c) {
    return kPlotLeft + kPlotWidth * (static_cast<double>(c) + 0.5) / static_cast<double>(categories);
  };

  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0:.0f}\" height=\"{1:.0f}\" viewBox=\"0 0 {0:.0f} {1:.0f}\" "
      "font-family=\"sans-serif\" font-size=\"12\">\n<title>{2}</title>\n"
      "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      "<text x=\"{3:.1f}\" y=\"26\" font-size=\"16\" font-weight=\"bold\" text-anchor=\"middle\">{2}</text>\n",
      kCanvasWidth, height, escape_markup(metric), kPlotLeft + kPlotWidth / 2);
  std::vector<AxisValue> constant_values;
  for (const SweepAxis& axis : grid.axes) {
    if (axis.name != x_axis->name && axis.values.size() == 1)
      constant_values.push_back({axis.name, axis.values.front()});
  }
  const std::string constant = values_label(constant_values);
  if (!constant.empty()) {
    svg += fmt::format("<text x=\"{:.1f}\" y=\"44\" fill=\"#555\" text-anchor=\"middle\">{}</text>\n",
                       kPlotLeft + kPlotWidth / 2, escape_markup(constant));
  }

  // Grid lines and tick labels of the y axis, then the axes themselves.
  const auto ticks = static_cast<int>(std::lround((scale.high - scale.low) / scale.step));
  for (int t = 0; t <= ticks; ++t) {
    const double value = scale.low + scale.step * t, y = scale.y(value);
    svg += fmt::format(
        "<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{2:.1f}\" y2=\"{1:.1f}\" stroke=\"#ddd\"/>\n"
        "<text x=\"{3:.1f}\" y=\"{4:.1f}\" text-anchor=\"end\">{5}</text>\n",
        kPlotLeft, y, kPlotLeft + kPlotWidth, kPlotLeft - 8, y + 4, tick_label(value));
  }
  svg += fmt::format("<path d=\"M{0:.1f},{1:.1f} V{2:.1f} H{3:.1f}\" fill=\"none\" stroke=\"black\"/>\n", kPlotLeft,
                     kPlotTop, kPlotTop + kPlotHeight, kPlotLeft + kPlotWidth);
  // Many categories do not fit side by side: tilt their labels.
  const bool tilt = categories > 8;
  for (std::size_t c = 0; c < categories; ++c) {
    const double x = x_of(c), y = kPlotTop + kPlotHeight + 18;
    svg +=
        fmt::format("<text x=\"{0:.1f}\" y=\"{1:.1f}\" text-anchor=\"{2}\"{3}>{4}</text>\n", x, y,
                    tilt ? "end" : "middle", tilt ? fmt::format(" transform=\"rotate(-40 {:.1f} {:.1f})\"", x, y) : "",
                    escape_markup(value_text(x_axis->values[c])));
  }
  svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{}</text>\n", kPlotLeft + kPlotWidth / 2,
                     kPlotTop + kPlotHeight + kBottomMargin - 12, escape_markup(x_axis->name));
  svg += fmt::format(
      "<text x=\"20\" y=\"{0:.1f}\" text-anchor=\"middle\" transform=\"rotate(-90 20 {0:.1f})\">{1}</text>\n",
      kPlotTop + kPlotHeight / 2, escape_markup(metric));

  // The series: a line through the categories that have a value, a marker on each, a legend entry.
  for (std::size_t s = 0; s < series.size(); ++s) {
    const std::string_view colour = kPalette[s % kPalette.size()], dash = kDashes[s % kDashes.size()];
    std::string points, markers;
    for (std::size_t c = 0; c < categories; ++c) {
      if (!series[s].values[c]) continue;
      const double x = x_of(c), y = scale.y(*series[s].values[c]);
      points += fmt::format("{}{:.1f},{:.1f}", points.empty() ? "" : " ", x, y);
      markers += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3.5\" fill=\"{}\"/>\n", x, y, colour);
    }
    svg += fmt::format(
        "<g class=\"series\">\n<polyline points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\"{}/>\n{}", points,
        colour, dash, markers);
    const double y = kPlotTop + kLegendRow * static_cast<double>(s);
    svg += fmt::format(
        "<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{2:.1f}\" y2=\"{1:.1f}\" stroke=\"{3}\" stroke-width=\"2\"{8}/>"
        "<circle cx=\"{4:.1f}\" cy=\"{1:.1f}\" r=\"3.5\" fill=\"{3}\"/>"
        "<text x=\"{5:.1f}\" y=\"{6:.1f}\" class=\"legend\">{7}</text>\n</g>\n",
        kLegendLeft, y, kLegendLeft + 24, colour, kLegendLeft + 12, kLegendLeft + 32, y + 4,
        escape_markup(series[s].label), dash);
  }
  return svg + "</svg>\n";
}

}  // namespace tpuemu::sweep
