// SPDX-License-Identifier: Apache-2.0
#include "report_assets.h"

namespace tpuemu::profile {

std::string_view report_style() {
  return R"css(body { font: 13px/1.4 system-ui, sans-serif; margin: 16px 20px; color: #222; background: #fff; }
h1 { font-size: 20px; margin: 0 0 8px; }
h2 { font-size: 16px; margin: 22px 0 4px; border-bottom: 1px solid #ddd; }
table.summary { border-collapse: collapse; }
table.summary th { text-align: left; font-weight: 600; padding: 1px 14px 1px 0; color: #555; }
table.summary td { padding: 1px 0; font-variant-numeric: tabular-nums; }
.note { color: #555; margin: 2px 0 6px; max-width: 1100px; }
.maps { display: grid; grid-template-columns: repeat(auto-fit, minmax(440px, 1fr)); gap: 10px 18px; }
figure.map { margin: 0; min-width: 0; }
figure.map figcaption { font-weight: 600; }
.failure { color: #b00020; margin: 2px 0; }
.empty { color: #777; font-style: italic; }
svg text { font: 11px system-ui, sans-serif; fill: #333; }
svg .axis line, svg .axis path { stroke: #999; }
svg .grid line { stroke: #e6e6e6; }
rect.buffer { stroke: #1d1d1d; stroke-width: 0.6; }
rect.buffer.hover { stroke: #000; stroke-width: 2.5; }
svg text.label { font-size: 10px; fill: #111; pointer-events: none; }
.legend { display: flex; flex-wrap: wrap; gap: 4px 14px; margin: 4px 0 8px; }
.legend span { display: inline-flex; align-items: center; gap: 5px; }
.legend i { display: inline-block; width: 14px; height: 11px; border: 1px solid #1d1d1d; }
.tooltip { position: fixed; z-index: 10; pointer-events: none; background: #fffef4; border: 1px solid #888;
  padding: 4px 7px; box-shadow: 0 1px 4px rgba(0,0,0,.25); font-size: 12px; max-width: 420px; }
canvas { display: block; }
button { font: inherit; margin-left: 6px; }
table.sortable { border-collapse: collapse; font-variant-numeric: tabular-nums; }
table.sortable th { cursor: pointer; text-align: left; background: #f2f2f2; padding: 2px 8px; user-select: none; }
table.sortable th[data-order=desc]::after { content: ' \25bc'; }
table.sortable th[data-order=asc]::after { content: ' \25b2'; }
table.sortable td { padding: 1px 8px; border-top: 1px solid #eee; }
table.sortable td.num { text-align: right; }
)css";
}

}  // namespace tpuemu::profile
