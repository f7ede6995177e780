// SPDX-License-Identifier: Apache-2.0
// The peaks of a BufferSet: a sweep over schedule positions (docs/hlo.md, "Liveness, schedules
// and sizes").
#include "tpuemu/hlo/buffers.h"

#include "tpuemu/plan/peak_sweep.h"

namespace tpuemu::hlo {

using plan::saturated;
using plan::WideBytes;

std::string_view buffer_kind_name(BufferKind kind) {
  switch (kind) {
    case BufferKind::Temp: return "HLO temp";
    case BufferKind::Parameter: return "parameter";
    case BufferKind::Output: return "output";
    case BufferKind::Constant: return "constant";
  }
  return "HLO temp";
}

namespace {

// Visits every buffer of `set` with the size `size(b)`.
template <typename Size>
auto each_buffer(const BufferSet& set, Size size) {
  return [&set, size](const auto& visit) {
    for (const LiveBuffer& b : set.buffers) visit(b.start, b.end, size(b));
  };
}

}  // namespace

PeakLive peak_live(const BufferSet& set, const BufferFilter& counted) {
  const auto padded = [&](const LiveBuffer& b) { return !counted || counted(b) ? b.bytes : 0; };
  const auto unpadded = [&](const LiveBuffer& b) { return !counted || counted(b) ? b.unpadded : 0; };
  const plan::Sweep bytes = plan::sweep_live(set.positions, each_buffer(set, padded), -1);
  const plan::Sweep data = plan::sweep_live(set.positions, each_buffer(set, unpadded), bytes.at);
  return {.bytes = saturated(bytes.highest),
          .position = bytes.at,
          .unpadded_at_peak = saturated(data.live_at_probe),
          .unpadded = saturated(data.highest)};
}

std::uint64_t peak_live_bytes(const BufferSet& set) {
  return saturated(plan::sweep_live(set.positions, each_buffer(set, [](const LiveBuffer& b) { return b.bytes; }), -1).highest);
}

std::uint64_t peak_live_unpadded_bytes(const BufferSet& set) {
  return saturated(
      plan::sweep_live(set.positions, each_buffer(set, [](const LiveBuffer& b) { return b.unpadded; }), -1).highest);
}

}  // namespace tpuemu::hlo
