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

template <typename Size>
std::uint64_t peak(const BufferSet& set, Size size) {
  std::int64_t last = set.positions - 1;
  for (const LiveBuffer& b : set.buffers) last = std::max(last, b.end);
  if (last < 0) return 0;
  std::vector<Wide> delta(static_cast<std::size_t>(last) + 2, 0);
  for (const LiveBuffer& b : set.buffers) {
    const std::int64_t start = std::clamp<std::int64_t>(b.start, 0, last);
    const std::int64_t end = std::clamp<std::int64_t>(b.end, start, last);
    delta[static_cast<std::size_t>(start)] += size(b);
    delta[static_cast<std::size_t>(end) + 1] -= size(b);
  }
  Wide live = 0, best = 0;
  for (std::int64_t t = 0; t <= last; ++t) {
    live += delta[static_cast<std::size_t>(t)];
    best = std::max(best, live);
  }
  return best > static_cast<Wide>(detail::kSaturated) ? detail::kSaturated
                                                       : static_cast<std::uint64_t>(best);
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

std::uint64_t peak_live_bytes(const BufferSet& set) {
  return peak(set, [](const LiveBuffer& b) { return b.bytes; });
}

std::uint64_t peak_live_unpadded_bytes(const BufferSet& set) {
  return peak(set, [](const LiveBuffer& b) { return b.unpadded; });
}

}  // namespace tpuemu::hlo
