// SPDX-License-Identifier: Apache-2.0
#include "tpuemu/profile/report_html.h"

#include <algorithm>

#include <fmt/format.h>

#include "report_assets.h"
#include "tpuemu/alloc/memory_space.h"
#include "tpuemu/base/json.h"
#include "tpuemu/base/markup.h"
#include "tpuemu/profile/engine_timeline.h"
#include "tpuemu/profile/fragmentation_series.h"
#include "tpuemu/profile/memory_map.h"

namespace tpuemu::profile {
namespace {

// JSON inside <script>: '<' only occurs in strings, where \u003c means the same and cannot close
// the element.
std::string script_json(const nlohmann::json& j) {
  const std::string text = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  std::string out;
  out.reserve(text.size());
  for (const char ch : text) {
    if (ch == '<') out += "\\u003c";
    else out += ch;
  }
  return out;
}

// The run summary: label and the value's text, each read from summary.json at a JSON pointer.
struct SummaryField {
  const char* label;
  const char* pointer;
  enum class Format { Text, Count, Bytes, Percent, YesNo } format;
};

constexpr SummaryField kSummaryFields[] = {
    {"workload", "/workload", SummaryField::Format::Text},
    {"preset", "/preset", SummaryField::Format::Text},
    {"backend", "/backend", SummaryField::Format::Text},
    {"cycles", "/run/cycles", SummaryField::Format::Count},
    {"bit-exact", "/result/bit_exact", SummaryField::Format::YesNo},
    {"HBM policy", "/hbm_allocation/policy", SummaryField::Format::Text},
    {"HBM capacity", "/hbm_allocation/capacity", SummaryField::Format::Bytes},
    {"peak live", "/hbm_allocation/peak_live_bytes", SummaryField::Format::Bytes},
    {"peak in use", "/hbm_allocation/peak_in_use_bytes", SummaryField::Format::Bytes},
    {"peak footprint", "/hbm_allocation/peak_footprint_bytes", SummaryField::Format::Bytes},
    {"max external fragmentation", "/hbm_allocation/max_external_fragmentation", SummaryField::Format::Percent},
    {"HBM traffic", "/hbm/bytes", SummaryField::Format::Bytes},
    {"MXU utilisation", "/mxu_utilization", SummaryField::Format::Percent},
    {"roofline fraction", "/roofline/fraction", SummaryField::Format::Percent},
};

std::string summary_value(const JsonDocument& doc, const SummaryField& f) {
  const nlohmann::json::json_pointer pointer(f.pointer);
  if (!doc.root().contains(pointer)) throw doc.error_at(f.pointer, "missing (is this a summary.json of tpuemu run -o?)");
  const nlohmann::json& v = doc.root().at(pointer);
  auto expect = [&](bool ok, const char* what) {
    if (!ok) throw doc.error_at(f.pointer, fmt::format("expected {}", what));
  };
  switch (f.format) {
    case SummaryField::Format::Text:
      expect(v.is_string(), "a string");
      return v.get<std::string>();
    case SummaryField::Format::Count:
      expect(v.is_number_unsigned(), "a non-negative integer");
      return fmt::format("{}", v.get<std::uint64_t>());
    case SummaryField::Format::Bytes:
      expect(v.is_number_unsigned(), "a byte count");
      return fmt::format("{} ({} B)", alloc::format_bytes(v.get<std::uint64_t>()), v.get<std::uint64_t>());
    case SummaryField::Format::Percent:
      expect(v.is_number(), "a number");
      return fmt::format("{:.1f}%", 100.0 * v.get<double>());
    case SummaryField::Format::YesNo:
      expect(v.is_boolean(), "true or false");
      return v.get<bool>() ? "yes" : "NO";
  }
  return {};
}

std::string summary_table(const JsonDocument& doc) {
  std::string out = "<table class=\"summary\">\n";
  for (const SummaryField& f : kSummaryFields) {
    out += fmt::format("<tr><th>{}</th><td>{}</td></tr>\n", escape_markup(f.label), escape_markup(summary_value(doc, f)));
  }
  return out + "</table>\n";
}

std::string buffer_rect(const MapBuffer& b) {
  return fmt::format(
      "<rect class=\"buffer\" data-id=\"{}\" data-name=\"{}\" data-layer=\"{}\" data-kind=\"{}\" data-offset=\"{}\" "
      "data-size=\"{}\" data-start=\"{}\" data-end=\"{}\"><title>{}</title></rect>\n",
      escape_markup(b.id), escape_markup(b.name), escape_markup(b.layer), escape_markup(b.kind), b.offset, b.size, b.start,
      b.end, escape_markup(fmt::format("{} ({}, {} B at {})", b.name, b.layer, b.size, b.offset)));
}

// One figure per placement; the script draws the axes and lays the rectangles out.
std::string map_figures(const MemoryMap& map) {
  std::string out = "<div class=\"maps\">\n";
  for (const SpaceMap& s : map.spaces) {
    out += fmt::format("<figure class=\"map\" data-space=\"{0}\" data-policy=\"{1}\" data-capacity=\"{2}\" "
                       "data-end=\"{3}\">\n<figcaption>{0} &middot; {1} &middot; {4} buffers</figcaption>\n",
                       escape_markup(s.space), escape_markup(s.policy), s.capacity, s.end, s.buffers.size());
    out += "<svg class=\"map-svg\" role=\"img\"><g class=\"buffers\">\n";
    for (const MapBuffer& b : s.buffers) out += buffer_rect(b);
    out += "</g></svg>\n";
    // Below the map, so that the maps side by side stay aligned.
    if (s.failure) out += fmt::format("<p class=\"failure\">{} failed: {}</p>\n", escape_markup(s.policy), escape_markup(*s.failure));
    out += "</figure>\n";
  }
  if (map.spaces.empty()) out += "<p class=\"empty\">no memory space in this run</p>\n";
  return out + "</div>\n";
}

nlohmann::json series_json(const std::vector<FragmentationSeries>& series) {
  nlohmann::json out = nlohmann::json::array();
  for (const FragmentationSeries& f : series) {
    nlohmann::json t = nlohmann::json::array(), frag = t, largest = t, in_use = t, live = t;
    for (const alloc::SpaceSnapshot& s : f.samples) {
      t.push_back(s.time);
      frag.push_back(s.external_fragmentation);
      largest.push_back(s.largest_free_block);
      in_use.push_back(s.in_use_bytes);
      live.push_back(s.live_bytes);
    }
    out.push_back({{"space", f.space}, {"policy", f.policy}, {"t", t}, {"frag", frag}, {"largest", largest},
                   {"in_use", in_use}, {"live", live}});
  }
  return out;
}

// Lanes as parallel arrays (start, duration, label index): compact for 10^5 slices.
nlohmann::json timeline_json(const EngineTimeline& timeline) {
  nlohmann::json lanes = nlohmann::json::array();
  for (const TimelineLane& lane : timeline.lanes) {
    nlohmann::json s = nlohmann::json::array(), d = s, l = s;
    for (const TimelineSlice& slice : lane.slices) {
      s.push_back(slice.start);
      d.push_back(slice.duration);
      l.push_back(slice.label);
    }
    lanes.push_back({{"process", lane.process}, {"name", lane.name}, {"s", s}, {"d", d}, {"l", l}});
  }
  return {{"labels", timeline.labels}, {"lanes", lanes}};
}

// The trace as a plain document (see engine_timeline.h); a syntax error names file:line:column.
nlohmann::json parse_trace(const ReportFile& trace) {
  try {
    return nlohmann::json::parse(trace.text);
  } catch (const nlohmann::json::parse_error& e) {
    const std::size_t at = std::min<std::size_t>(e.byte == 0 ? 0 : e.byte - 1, trace.text.size());
    const std::size_t line = 1 + static_cast<std::size_t>(std::count(trace.text.begin(), trace.text.begin() + at, '\n'));
    const std::size_t line_start = trace.text.rfind('\n', at == 0 ? 0 : at - 1);
    const std::size_t column = line == 1 ? at + 1 : at - line_start;
    std::string_view message = e.what();
    if (const auto colon = message.find(": "); colon != std::string_view::npos) message.remove_prefix(colon + 2);
    throw Error(fmt::format("{}:{}:{}", trace.name, line, column), message);
  }
}

}  // namespace

std::string report_html(const ReportFile& summary, const ReportFile& fragmentation, const ReportFile& trace) {
  const JsonDocument summary_doc = JsonDocument::parse(summary.text, summary.name);
  if (!summary_doc.root().is_object()) throw summary_doc.error_at("", "expected an object (a tpuemu run summary)");
  if (!summary_doc.root().contains("memory_map")) throw summary_doc.error_at("", "missing the memory_map section");
  const MemoryMap map = memory_map_from_json(summary_doc, "/memory_map");
  const std::string table = summary_table(summary_doc);
  const std::vector<FragmentationSeries> series = parse_fragmentation_csv(fragmentation.text, fragmentation.name);
  const EngineTimeline timeline =
      trace.parsed ? engine_timeline(*trace.parsed, trace.name) : engine_timeline(parse_trace(trace), trace.name);

  std::uint64_t end = 0;
  for (const SpaceMap& s : map.spaces) end = std::max(end, s.end);
  for (const FragmentationSeries& f : series) {
    if (!f.samples.empty()) end = std::max(end, f.samples.back().time);
  }
  for (const TimelineLane& lane : timeline.lanes) {
    for (const TimelineSlice& s : lane.slices) end = std::max(end, s.start + s.duration);
  }
  const nlohmann::json data = {{"end", end}, {"series", series_json(series)}, {"timeline", timeline_json(timeline)}};
  const std::string workload = summary_doc.root().at("workload").get<std::string>();

  std::string html;
  html += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  html += fmt::format("<title>tpuemu report: {}</title>\n<style>\n{}</style>\n</head>\n<body>\n", escape_markup(workload),
                      report_style());
  html += fmt::format("<h1>tpuemu run: {}</h1>\n", escape_markup(workload));
  html += table;
  html += "<h2 id=\"memory-map\">Memory map</h2>\n<p class=\"note\">Each rectangle is a buffer: x is its lifetime in core cycles, y its "
          "addresses. The hatched background is free memory: every gap between rectangles is a hole. Placements of "
          "the same space by different policies share both axes. <button id=\"y-range\" type=\"button\"></button>"
          "</p>\n<div id=\"legend\" class=\"legend\"></div>\n";
  html += map_figures(map);
  html += "<h2 id=\"fragmentation\">Fragmentation</h2>\n<p class=\"note\">The allocator's state after every allocation and free "
          "(fragmentation.csv), on the memory map's time axis.</p>\n<div id=\"curves\"></div>\n";
  html += "<h2 id=\"engine-timeline\">Engine timeline</h2>\n<div id=\"timeline\"></div>\n";
  html += "<div id=\"tooltip\" class=\"tooltip\" hidden></div>\n";
  html += fmt::format("<script type=\"application/json\" id=\"report-data\">{}</script>\n", script_json(data));
  html += fmt::format("<script>\n{}</script>\n</body>\n</html>\n", report_script());
  return html;
}

std::string memory_map_page(const MapPage& page) {
  const std::vector<FragmentationSeries> series = parse_fragmentation_csv(page.fragmentation.text, page.fragmentation.name);
  std::uint64_t end = 0;
  for (const SpaceMap& s : page.map.spaces) end = std::max(end, s.end);
  for (const FragmentationSeries& f : series) {
    if (!f.samples.empty()) end = std::max(end, f.samples.back().time);
  }
  // Each buffer's detail once, by id: the same buffer in every policy's map shares it, and a page of
  // 10^4 buffers under seven policies stays a few tens of megabytes.
  nlohmann::json details = nlohmann::json::object();
  for (const SpaceMap& s : page.map.spaces) {
    for (const MapBuffer& b : s.buffers) {
      if (!b.detail.empty() && !details.contains(b.id)) details[b.id] = b.detail;
    }
  }
  const nlohmann::json data = {{"end", end},
                               {"time_unit", page.time_unit},
                               {"details", std::move(details)},
                               {"series", series_json(series)},
                               {"timeline", timeline_json(EngineTimeline{})}};
  std::string html;
  html += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  html += fmt::format("<title>tpuemu report: {}</title>\n<style>\n{}</style>\n</head>\n<body>\n", escape_markup(page.title),
                      report_style());
  html += fmt::format("<h1>{}</h1>\n<table class=\"summary\">\n", escape_markup(page.title));
  for (const auto& [label, value] : page.summary)
    html += fmt::format("<tr><th>{}</th><td>{}</td></tr>\n", escape_markup(label), escape_markup(value));
  html += "</table>\n";
  html += fmt::format("<h2 id=\"memory-map\">Memory map</h2>\n<p class=\"note\">{} <button id=\"y-range\" type=\"button\">"
                      "</button></p>\n<div id=\"legend\" class=\"legend\"></div>\n",
                      escape_markup(page.map_note));
  html += map_figures(page.map);
  for (const SortableTable& t : page.tables) {
    html += fmt::format("<h2 id=\"{}\">{}</h2>\n<p class=\"note\">{}</p>\n<table class=\"sortable\" id=\"{}-table\">\n<thead><tr>",
                        escape_markup(t.id), escape_markup(t.title), escape_markup(t.note), escape_markup(t.id));
    for (const std::string& c : t.columns) html += fmt::format("<th>{}</th>", escape_markup(c));
    html += "</tr></thead>\n<tbody>\n";
    for (const std::vector<TableCell>& row : t.rows) {
      html += "<tr>";
      for (const TableCell& c : row) {
        if (c.sort) html += fmt::format("<td class=\"num\" data-sort=\"{}\">{}</td>", *c.sort, escape_markup(c.text));
        else html += fmt::format("<td>{}</td>", escape_markup(c.text));
      }
      html += "</tr>\n";
    }
    html += "</tbody>\n</table>\n";
  }
  html += "<h2 id=\"fragmentation\">Fragmentation</h2>\n<p class=\"note\">Each policy's heap at every schedule position "
          "(fragmentation.csv), on the memory map's axis.</p>\n<div id=\"curves\"></div>\n";
  html += "<div id=\"timeline\" hidden></div>\n<div id=\"tooltip\" class=\"tooltip\" hidden></div>\n";
  html += fmt::format("<script type=\"application/json\" id=\"report-data\">{}</script>\n", script_json(data));
  html += fmt::format("<script>\n{}</script>\n</body>\n</html>\n", report_script());
  return html;
}

}  // namespace tpuemu::profile
