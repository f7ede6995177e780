// SPDX-License-Identifier: Apache-2.0
// The host layer `layout`: how a 2-D host array is laid out in device memory.
//
// TPU tiling (openxla tiled_layout.md) with the lane count taken from the preset (dim), the rule
// of tpu_tiles.h (tpu_tile_rows), which the HLO sizes use too:
//   32-bit elements: tiles of (8, dim)                    -- XLA (8,128)
//   16-bit elements: tiles of (16, dim)                   -- XLA (8,128)(2,1)
//    8-bit elements: tiles of (32, dim)                   -- XLA (8,128)(4,1)
// Each tile holds the same 8 sublanes x dim lanes x 32 bits (4 KiB at 128 lanes). XLA's minor
// (2,1)/(4,1) tile interleaves 2 or 4 consecutive rows inside one 32-bit word; here a VMEM row is
// one whole MXU operand (dim int8 lanes of one matrix row), so that interleave is folded into
// whole rows: inside a tile, rows are stored row-major, each tile row is `dim` contiguous
// elements.
// Tiles are stored in row-major tile order (all tiles of tile-row 0, then tile-row 1, ...).
// Rows and columns are zero-padded up to whole tiles.
//
// The "tiling off" switch is the untiled layout: plain row-major, columns padded only to a
// multiple of dim (a VMEM row must be filled whole), rows not padded. It is the same struct with
// tile_rows = 1, so all offset arithmetic below is shared.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tpuemu {

// The most elements a laid-out tensor may have (offsets are computed in 32-bit words on the device).
inline constexpr std::int64_t kMaxTensorElements = std::int64_t{1} << 31;

struct TiledLayout {
  std::string name = "tensor";  // for error messages
  std::size_t rows = 0;         // logical shape
  std::size_t cols = 0;
  std::size_t elem_bytes = 0;   // 1, 2 or 4
  std::size_t tile_rows = 0;    // tpu_tile_rows(8*elem_bytes) when tiled, 1 when untiled
  std::size_t tile_cols = 0;    // dim
  std::size_t padded_rows = 0;  // rows rounded up to tile_rows
  std::size_t padded_cols = 0;  // cols rounded up to tile_cols

  bool tiled() const { return tile_rows > 1; }
  std::size_t tile_bytes() const { return tile_rows * tile_cols * elem_bytes; }
  std::size_t tiles_per_row() const { return padded_cols / tile_cols; }  // tiles across
  std::size_t tiles_per_col() const { return padded_rows / tile_rows; }  // tiles down
  std::size_t tile_count() const { return tiles_per_row() * tiles_per_col(); }
  // Device footprint including padding.
  std::size_t bytes() const { return padded_rows * padded_cols * elem_bytes; }
  std::size_t logical_bytes() const { return rows * cols * elem_bytes; }
  std::size_t padding_bytes() const { return bytes() - logical_bytes(); }
  // Byte offset of tile (tile_r, tile_c) from the start of the array.
  std::size_t tile_offset(std::size_t tile_r, std::size_t tile_c) const {
    return (tile_r * tiles_per_row() + tile_c) * tile_bytes();
  }
  // Byte offset of element (r, c); also valid inside the padding (r < padded_rows, c < padded_cols).
  std::size_t offset_of_element(std::size_t r, std::size_t c) const {
    return tile_offset(r / tile_rows, c / tile_cols) +
           ((r % tile_rows) * tile_cols + (c % tile_cols)) * elem_bytes;
  }

  bool operator==(const TiledLayout&) const = default;
};

// Tiled layout of a rows x cols array of elem_bytes-wide elements for an MXU with `dim` lanes.
// Throws Error naming the tensor for a zero or negative extent, an element width other than
// 1/2/4, dim not a power of two in [4, 256], more than 2^31 elements, or a padded footprint beyond
// 4 GiB (it could not be addressed by the device).
TiledLayout make_tiled_layout(std::int64_t rows, std::int64_t cols, std::size_t elem_bytes,
                              std::uint32_t dim, std::string_view name = "tensor");
// Row-major layout, columns padded to dim (tile_rows = 1, tile_cols = dim).
TiledLayout make_untiled_layout(std::int64_t rows, std::int64_t cols, std::size_t elem_bytes,
                                std::uint32_t dim, std::string_view name = "tensor");
// Either of the above: the tiling on/off switch.
TiledLayout make_layout(bool tiled, std::int64_t rows, std::int64_t cols, std::size_t elem_bytes,
                        std::uint32_t dim, std::string_view name = "tensor");

// Host row-major data (rows*cols elements) to the device image (layout.bytes() bytes,
// little-endian elements, padding zero). Throws Error if the element type does not match
// layout.elem_bytes or the span has the wrong length.
std::vector<std::uint8_t> pack(const TiledLayout& layout, std::span<const std::int8_t> row_major);
std::vector<std::uint8_t> pack(const TiledLayout& layout, std::span<const std::int16_t> row_major);
std::vector<std::uint8_t> pack(const TiledLayout& layout, std::span<const std::int32_t> row_major);

// Device image (exactly layout.bytes() bytes) back to host row-major data; padding is ignored.
// T is std::int8_t, std::int16_t or std::int32_t (explicitly instantiated); e.g.
// unpack<std::int32_t>(layout, bytes).
template <typename T>
std::vector<T> unpack(const TiledLayout& layout, std::span<const std::uint8_t> device);
extern template std::vector<std::int8_t> unpack(const TiledLayout&, std::span<const std::uint8_t>);
extern template std::vector<std::int16_t> unpack(const TiledLayout&, std::span<const std::uint8_t>);
extern template std::vector<std::int32_t> unpack(const TiledLayout&, std::span<const std::uint8_t>);

}  // namespace tpuemu
