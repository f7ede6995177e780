// report.html: one self-contained page (inline CSS, JavaScript and SVG, a canvas for the engine
// timeline; nothing fetched) that shows a run from the texts of its artefacts: the summary, the
// memory map of every space and policy (summary.json's memory_map), the fragmentation curves
// (fragmentation.csv) and the engine and HBM channel lanes (trace.json). `tpuemu run -o DIR` writes
// it; `tpuemu report DIR` renders the same bytes again from the files (docs/profile.md).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

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

}  // namespace tpuemu::profile
