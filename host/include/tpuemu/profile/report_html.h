// SPDX-License-Identifier: Apache-2.0
// report.html: one self-contained page (inline CSS, JavaScript and SVG, a canvas for the engine
// timeline; nothing fetched) that shows a run from the texts of its artefacts: the summary, the
// memory map of every space and policy (summary.json's memory_map), the fragmentation curves
// (fragmentation.csv) and the engine and HBM channel lanes (trace.json). `tpuemu run -o DIR` writes
// it; `tpuemu report DIR` renders the same bytes again from the files (docs/profile.md).
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "tpuemu/profile/memory_map.h"

namespace tpuemu::profile {

struct ReportFile {
  std::string name;  // for errors: "out/summary.json"
  std::string text;
  // The text already parsed (the writer of the artefacts has it): skips parsing it again. Must be
  // what `text` parses to, so that `tpuemu report DIR` renders the same bytes.
  const nlohmann::json* parsed = nullptr;
};

// Throws Error naming the file (and line:column) of anything missing or malformed.
std::string report_html(const ReportFile& summary, const ReportFile& fragmentation, const ReportFile& trace);

// A table the reader sorts by clicking a column's heading; a cell with a sort key sorts by that
// number (largest first on the first click), the others by their text.
struct TableCell {
  std::string text;
  std::optional<double> sort;
};
struct SortableTable {
  std::string id, title, note;
  std::vector<std::string> columns;
  std::vector<std::vector<TableCell>> rows;
};

// The same page for placements that are not a run's (an HLO program's buffers placed by each
// policy, docs/hlo.md): a summary of label/value rows, the memory maps side by side (each
// buffer's `detail` in its tooltip, kept once per buffer id), sortable tables, and the
// fragmentation curves of a fragmentation.csv in the run's format. The time axis is in `time_unit`.
struct MapPage {
  std::string title;
  std::vector<std::pair<std::string, std::string>> summary;
  std::string map_note;
  MemoryMap map;
  std::vector<SortableTable> tables;
  ReportFile fragmentation;
  std::string time_unit = "core cycles";
};
std::string memory_map_page(const MapPage& page);

}  // namespace tpuemu::profile
