// SPDX-License-Identifier: Apache-2.0
#include "gather_dma.h"

#include <fmt/format.h>

#include "tpuemu/base/error.h"

namespace tpuemu {
namespace {

constexpr std::uint64_t kMaxField16 = 0xFFFF;
constexpr std::uint64_t kMaxLocalStride = (1u << 20) - 1;

struct Run {
  bool zero = false;
  std::uint64_t hbm = 0;
  std::uint32_t local = 0;
  std::uint64_t len = 0;
};

}  // namespace

std::vector<isa::Dma> gather_dmas(std::span<const std::optional<std::uint64_t>> sources, const GatherTarget& t) {
  if (t.row_bytes == 0 || t.zero_rows == 0) throw Error("gather: row size and zero rows must be positive");
  std::vector<Run> runs;
  for (std::size_t i = 0; i < sources.size(); ++i) {
    const std::uint32_t local = t.first_local_row + static_cast<std::uint32_t>(i);
    if (!runs.empty()) {
      Run& r = runs.back();
      const bool extends = sources[i] ? (!r.zero && *sources[i] == r.hbm + r.len * t.row_bytes)
                                      : (r.zero && r.len < t.zero_rows);
      if (extends && r.len < kMaxField16) {
        ++r.len;
        continue;
      }
    }
    runs.push_back({!sources[i], sources[i].value_or(t.zero_addr), local, 1});
  }
  std::vector<isa::Dma> out;
  // Zero runs never merge with data runs, even where the addresses would allow it: the number of
  // descriptors must not depend on where the zero rows happen to sit (the program is sized before
  // HBM is placed).
  bool out_zero = false;
  auto start = [&](const Run& r) {
    isa::Dma d;
    d.hbm_addr = static_cast<std::uint32_t>(r.hbm);
    d.local_addr = r.local;
    d.len = static_cast<std::uint16_t>(r.len);
    d.count = 1;
    d.hbm_stride = 0;
    d.local_stride = 0;
    d.path = t.path;
    if (r.hbm + r.len * t.row_bytes > 0x1'0000'0000ull) throw Error(fmt::format("gather: HBM address {:#x} does not fit 32 bits", r.hbm));
    out.push_back(d);
    out_zero = r.zero;
  };
  for (const Run& r : runs) {
    if (!out.empty()) {
      isa::Dma& d = out.back();
      const bool same_shape = d.len == r.len && out_zero == r.zero && r.hbm >= d.hbm_addr && r.local > d.local_addr && d.count < kMaxField16;
      if (same_shape) {
        const std::uint64_t hs = r.hbm - d.hbm_addr, ls = r.local - d.local_addr;
        if (d.count == 1 && ls <= kMaxLocalStride && hs <= 0xFFFF'FFFFull && hs % t.row_bytes == 0) {
          d.hbm_stride = static_cast<std::uint32_t>(hs);
          d.local_stride = static_cast<std::uint32_t>(ls);
          d.count = 2;
          continue;
        }
        if (d.count > 1 && r.hbm == d.hbm_addr + std::uint64_t{d.count} * d.hbm_stride &&
            r.local == d.local_addr + std::uint64_t{d.count} * d.local_stride) {
          ++d.count;
          continue;
        }
      }
    }
    start(r);
  }
  return out;
}

}  // namespace tpuemu
