// SPDX-License-Identifier: Apache-2.0
// The peaks of a BufferSet: a sweep over schedule positions (docs/hlo.md, "Liveness, schedules
// and sizes").
#include "tpuemu/hlo/buffers.h"

#include <algorithm>
#include <vector>

#include "liveness_detail.h"

namespace tpuemu::hlo {
namespace {

// Bytes can saturate at 2^64-1 each, so sums run in 128 bits and saturate only when reported.
__extension__ typedef __int128 Wide;

std::uint64_t saturated(Wide bytes) {
  return bytes > static_cast<Wide>(detail::kSaturated) ? detail::kSaturated : static_cast<std::uint64_t>(bytes);
}

struct Sweep {
  Wide highest = 0;
  std::int64_t at = 0;  // the first position where `highest` is live
  Wide live_at_probe = 0;
};

// The live bytes (`size` of each buffer) at every position of the schedule, by start/end deltas:
// their highest, its first position, and the live bytes at position `probe`. `delta` is scratch.
template <typename Size>
Sweep sweep(const BufferSet& set, Size size, std::int64_t probe, std::vector<Wide>& delta) {
  Sweep s;
  std::int64_t last = set.positions - 1;
  for (const LiveBuffer& b : set.buffers) last = std::max(last, b.end);
  if (last < 0) return s;
  delta.assign(static_cast<std::size_t>(last) + 2, 0);
  for (const LiveBuffer& b : set.buffers) {
    const std::int64_t start = std::clamp<std::int64_t>(b.start, 0, last);
    const std::int64_t end = std::clamp<std::int64_t>(b.end, start, last);
    delta[static_cast<std::size_t>(start)] += size(b);
    delta[static_cast<std::size_t>(end) + 1] -= size(b);
  }
  Wide live = 0;
  for (std::int64_t t = 0; t <= last; ++t) {
    live += delta[static_cast<std::size_t>(t)];
    if (live > s.highest) {
      s.highest = live;
      s.at = t;
    }
    if (t == probe) s.live_at_probe = live;
  }
  return s;
}


}  // namespace

std::string_view buffer_kind_name(BufferKind kind) {
  switch (kind) {
    case BufferKind::Temp: return "HLO temp";
    case BufferKind::Parameter: return "parameter";
    case BufferKind::Output: return "output";
    case BufferKind::Constant: return "constant";
  }
  return "HLO temp";
}

PeakLive peak_live(const BufferSet& set, const BufferFilter& counted) {
  std::vector<Wide> delta;
  const auto padded = [&](const LiveBuffer& b) { return !counted || counted(b) ? Wide{b.bytes} : Wide{0}; };
  const auto unpadded = [&](const LiveBuffer& b) { return !counted || counted(b) ? Wide{b.unpadded} : Wide{0}; };
  const Sweep bytes = sweep(set, padded, -1, delta);
  const Sweep data = sweep(set, unpadded, bytes.at, delta);
  return {.bytes = saturated(bytes.highest),
          .position = bytes.at,
          .unpadded_at_peak = saturated(data.live_at_probe),
          .unpadded = saturated(data.highest)};
}

std::uint64_t peak_live_bytes(const BufferSet& set) {
  std::vector<Wide> delta;
  return saturated(sweep(set, [](const LiveBuffer& b) { return Wide{b.bytes}; }, -1, delta).highest);
}

std::uint64_t peak_live_unpadded_bytes(const BufferSet& set) {
  std::vector<Wide> delta;
  return saturated(sweep(set, [](const LiveBuffer& b) { return Wide{b.unpadded}; }, -1, delta).highest);
}

}  // namespace tpuemu::hlo
