// SPDX-License-Identifier: Apache-2.0
// Layer layout: the TPU's tiling rule, the one copy of it. The model compiler's 2-D layouts
// (layout.h) and the HLO sizes (tpuemu/hlo/liveness.h, shape_bytes) both take their tiles here,
// so a tensor the compiler lays out and the same array in an HLO program pad alike.
//
// A TPU vector register holds 8 sublanes of `lanes` 32-bit words. An array of 32-bit (or wider)
// elements is tiled (8, lanes); narrower elements pack 32/bits consecutive rows into each word,
// XLA's minor (2,1), (4,1), ... tile, so a tile spans 8*32/bits rows: 16 for 16-bit types, 32
// for 8-bit ones, 64 for 4-bit ones (openxla's tiled-layout page; docs/hlo.md, "Sizes").
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace tpuemu {

// One tile of XLA's tiled layouts: its dimensions, minor-most last; kWholeDimension ('*' in
// XLA's text) leaves that dimension whole.
using Tile = std::vector<std::int64_t>;
inline constexpr std::int64_t kWholeDimension = -1;

// Rows of the TPU's 2-D tile for elements `element_bits` wide: 8 sublanes, each 32-bit word
// packing 32/bits rows (8 for 32 bits and wider). `element_bits` is 1 or more.
std::int64_t tpu_tile_rows(unsigned element_bits);

// The TPU's default tiles of a rank-`rank` array of `element_bits`-wide elements on `lanes`
// lanes, in XLA's element terms: (8, lanes) for 32 bits and wider; (rows, lanes)(32/bits, 1)
// below, rows = tpu_tile_rows (bf16 at 128 lanes: T(16,128)(2,1)). Rank 0 and 1 arrays are one
// row of granules of 8*lanes bytes: T(8*lanes*8/bits) (f32: T(256) at 128 lanes).
std::vector<Tile> tpu_default_tiles(unsigned element_bits, std::size_t rank, std::uint32_t lanes);

// Elements an array of `major_to_minor` dimensions stores under `tiles`, XLA's tiled-layout
// algebra: each tile applies to the minor-most dimensions of the already tiled shape, rounding
// each up to the tile and splitting it into (count, tile); a tile with more dimensions than the
// shape sees leading 1s; kWholeDimension leaves a dimension whole. nullopt when the count does
// not fit 64 bits. Throws Error on a tile dimension of 0 or below other than kWholeDimension.
std::optional<std::uint64_t> tiled_element_count(std::vector<std::uint64_t> major_to_minor,
                                                 const std::vector<Tile>& tiles);

}  // namespace tpuemu
