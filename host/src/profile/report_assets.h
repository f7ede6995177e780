// SPDX-License-Identifier: Apache-2.0
// The inline style sheet and script of report.html (report_assets.cpp): kept apart from the C++
// that writes the page's data so that each reads as what it is.
#pragma once

#include <string_view>

namespace tpuemu::profile {

std::string_view report_style();
// Reads the page's data (the JSON in #report-data and the rect.buffer attributes) and draws the
// axes, the layout of the memory maps, the legend, the fragmentation curves, the engine timeline
// and the tooltips.
std::string_view report_script();

}  // namespace tpuemu::profile
