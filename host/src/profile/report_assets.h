// SPDX-License-Identifier: Apache-2.0
// The inline style sheet (report_assets.cpp) and script (report_script.js, embedded at build time
// by cmake/embed_text.cmake) of report.html: kept apart from the C++ that writes the page's data
// so that each reads as what it is, and the script is a JavaScript file its own tools check.
#pragma once

#include <string_view>

namespace tpuemu::profile {

std::string_view report_style();
// report_script.js without its leading comment lines: reads the page's data (the JSON in
// #report-data and the rect.buffer attributes) and draws the axes, the layout of the memory maps,
// the legend, the fragmentation curves, the engine timeline and the tooltips.
std::string_view report_script();

}  // namespace tpuemu::profile
