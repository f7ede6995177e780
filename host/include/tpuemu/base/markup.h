// SPDX-License-Identifier: Apache-2.0
// Text inside HTML and SVG (XML) documents the project writes: report.html, the sweep's plots.
#pragma once

#include <string>
#include <string_view>

namespace tpuemu {

// text with & < > " ' replaced by their entities, safe both as element text and inside a quoted
// attribute value, in HTML and in XML alike (&#39; rather than &apos;, which HTML 4 lacks).
std::string escape_markup(std::string_view text);

}  // namespace tpuemu
