// SPDX-License-Identifier: Apache-2.0
// Live ranges on the flattened schedule (tpuemu/hlo/live_range.h; docs/hlo.md, "Liveness,
// schedules and sizes"; XLA: xla/hlo/analysis/hlo_live_range.cc). One pass over the positions:
// the last position reading each position's result, then each value's end from the positions
// holding it, in time linear in the positions plus the result leaves.
#include "tpuemu/hlo/live_range.h"

#include <algorithm>

namespace tpuemu::hlo {

std::vector<LiveInterval> value_live_ranges(const Dataflow& flow) {
  const auto n = static_cast<std::size_t>(flow.positions());
  // read_until[q]: the last position at which position q's result is live - q itself, its
  // readers, the end of its computation's window when q is a ROOT. table_until[q]: the same for
  // its index table, which get-tuple-element reads too.
  std::vector<std::int32_t> read_until(n), table_until(n);
  for (std::size_t q = 0; q < n; ++q) read_until[q] = static_cast<std::int32_t>(q);
  for (std::size_t p = 0; p < n; ++p) {
    if (flow.reads_index_table_only(static_cast<std::int64_t>(p))) continue;
    for (const std::int32_t q : flow.operands(static_cast<std::int64_t>(p)))
      read_until[static_cast<std::size_t>(q)] = std::max(read_until[static_cast<std::size_t>(q)], static_cast<std::int32_t>(p));
  }
  for (const ComputationWindow& w : flow.windows())
    read_until[static_cast<std::size_t>(w.root)] = std::max(read_until[static_cast<std::size_t>(w.root)], w.last);
  table_until = read_until;
  for (std::size_t p = 0; p < n; ++p) {
    if (!flow.reads_index_table_only(static_cast<std::int64_t>(p))) continue;
    for (const std::int32_t q : flow.operands(static_cast<std::int64_t>(p)))
      table_until[static_cast<std::size_t>(q)] = std::max(table_until[static_cast<std::size_t>(q)], static_cast<std::int32_t>(p));
  }

  std::vector<LiveInterval> ranges(flow.values().size());
  for (std::size_t v = 0; v < ranges.size(); ++v) ranges[v] = {flow.values()[v].position, flow.values()[v].position};
  for (std::size_t q = 0; q < n; ++q) {
    const auto p = static_cast<std::int64_t>(q);
    for (const ValueId v : flow.result(p))
      if (v != kNoValue) ranges[v].end = std::max(ranges[v].end, read_until[q]);
    if (const ValueId t = flow.index_table(p); t != kNoValue) ranges[t].end = std::max(ranges[t].end, table_until[q]);
  }
  return ranges;
}

BufferLiveRanges buffer_live_ranges(const AliasAnalysis& alias, const std::vector<LiveInterval>& values) {
  const Dataflow& flow = alias.dataflow();
  BufferLiveRanges out;
  out.ranges.resize(alias.buffer_count());
  out.whole_program.assign(alias.buffer_count(), false);
  std::vector<bool> seen(alias.buffer_count(), false);
  for (std::size_t v = 0; v < values.size(); ++v) {
    const std::uint32_t b = alias.buffer_of(static_cast<ValueId>(v));
    LiveInterval& r = out.ranges[b];
    if (!seen[b]) {
      r = values[v];
      seen[b] = true;
    } else {
      r.start = std::min(r.start, values[v].start);
      r.end = std::max(r.end, values[v].end);
    }
    if (flow.values()[v].kind == BufferKind::Parameter) out.whole_program[b] = true;
  }
  const auto last = static_cast<std::int32_t>(flow.positions() - 1);
  for (std::size_t b = 0; b < out.ranges.size(); ++b)
    if (out.whole_program[b]) out.ranges[b] = {0, last};
  return out;
}

}  // namespace tpuemu::hlo
