// SPDX-License-Identifier: Apache-2.0
// Layer plan: the one peak-live sweep - the most bytes live at once over buffers with lifetimes,
// from start/end deltas over dense positions (docs/hlo.md, "Liveness, schedules and sizes";
// docs/allocation.md, "Algorithm"). Buffers come from a visitor, so hlo's peak_live() sweeps a
// BufferSet, its schedule choice a schedule's buffers without making them, and the planner its
// buffers' lifetimes ranked into positions.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>


namespace tpuemu::plan {

// Bytes can saturate at 2^64-1 each, so sums that could pass 2^63 run in 128 bits and saturate
// only when reported.
__extension__ typedef __int128 WideBytes;

inline std::uint64_t saturated(WideBytes bytes) {
  constexpr std::uint64_t kMost = std::numeric_limits<std::uint64_t>::max();
  return bytes > static_cast<WideBytes>(kMost) ? kMost : static_cast<std::uint64_t>(bytes);
}

struct Sweep {
  WideBytes highest = 0;
  std::int64_t at = 0;  // the first position where `highest` is live
  WideBytes live_at_probe = 0;
};

template <typename Delta, typename ForEach>
Sweep sweep_with(std::int64_t last, const ForEach& for_each, std::int64_t probe) {
  Sweep s;
  std::vector<Delta> delta(static_cast<std::size_t>(last) + 2, 0);
  for_each([&](std::int64_t start, std::int64_t end, std::uint64_t size) {
    start = std::clamp<std::int64_t>(start, 0, last);
    end = std::clamp<std::int64_t>(end, start, last);
    delta[static_cast<std::size_t>(start)] += static_cast<Delta>(size);
    delta[static_cast<std::size_t>(end) + 1] -= static_cast<Delta>(size);
  });
  Delta live = 0;
  for (std::int64_t t = 0; t <= last; ++t) {
    live += delta[static_cast<std::size_t>(t)];
    if (live > static_cast<Delta>(s.highest)) {
      s.highest = live;
      s.at = t;
    }
    if (t == probe) s.live_at_probe = live;
  }
  return s;
}

// The live bytes (the `size` each buffer is visited with) at every position of a schedule of
// `positions`, by start/end deltas: their highest, its first position, and the live bytes at
// position `probe`. `for_each(visit)` calls visit(start, end, size) once per buffer, the same
// buffers each time it is called. The deltas take 64 bits a position, 128 when the sizes' sum
// could pass 2^63.
template <typename ForEach>
Sweep sweep_live(std::int64_t positions, const ForEach& for_each, std::int64_t probe) {
  std::int64_t last = positions - 1;
  WideBytes total = 0;
  for_each([&](std::int64_t, std::int64_t end, std::uint64_t size) {
    last = std::max(last, end);
    total += size;
  });
  if (last < 0) return {};
  if (total <= static_cast<WideBytes>(std::numeric_limits<std::int64_t>::max()))
    return sweep_with<std::int64_t>(last, for_each, probe);
  return sweep_with<WideBytes>(last, for_each, probe);
}

}  // namespace tpuemu::plan
