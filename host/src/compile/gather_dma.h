// SPDX-License-Identifier: Apache-2.0
// 2-D DMA descriptors for a gather: rows of dim bytes from arbitrary HBM addresses (or zeros)
// into consecutive local rows. Runs of consecutive addresses become one chunk, chunks of equal
// length at a constant stride one descriptor, so an im2col view of an NHWC image costs a few
// descriptors per image row rather than one per pixel (docs/compiler.md, "Convolutions").
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "tpuemu/program/program.h"

namespace tpuemu {

struct GatherTarget {
  std::uint32_t first_local_row = 0;
  std::uint64_t zero_addr = 0;   // `zero_rows` rows of zeros in HBM, the source of padding rows
  std::uint32_t zero_rows = 0;
  std::uint32_t row_bytes = 0;   // dim
  DmaPath path = DmaPath::HbmToVmem;
};

// sources[i]: the HBM address of local row first_local_row + i, or nullopt for a row of zeros.
std::vector<isa::Dma> gather_dmas(std::span<const std::optional<std::uint64_t>> sources, const GatherTarget& target);

}  // namespace tpuemu
