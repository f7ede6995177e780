// SPDX-License-Identifier: Apache-2.0
// TPU tiling: shapes, padding and packing (see layout.h for the format).
#include "tpuemu/layout/layout.h"

#include <bit>
#include <cstring>
#include <type_traits>

#include <fmt/format.h>

#include "tpuemu/base/error.h"
#include "tpuemu/layout/tpu_tiles.h"

namespace tpuemu {
namespace {

constexpr std::int64_t kMaxElements = kMaxTensorElements;
constexpr std::uint64_t kMaxDeviceBytes = std::uint64_t{1} << 32;  // 32-bit device addresses

std::size_t round_up(std::size_t x, std::size_t m) { return (x + m - 1) / m * m; }

Error layout_error(std::string_view name, std::string_view cause) {
  return Error(fmt::format("tensor '{}'", name), cause);
}

TiledLayout make(std::int64_t rows, std::int64_t cols, std::size_t elem_bytes, std::uint32_t dim,
                 std::string_view name, bool tiled) {
  if (rows <= 0 || cols <= 0) {
    throw layout_error(name, fmt::format("shape {}x{} must have positive extents", rows, cols));
  }
  if (elem_bytes != 1 && elem_bytes != 2 && elem_bytes != 4) {
    throw layout_error(name, fmt::format("element size must be 1, 2 or 4 bytes, got {}", elem_bytes));
  }
  if (dim < 4 || dim > 256 || !std::has_single_bit(dim)) {
    throw layout_error(name, fmt::format("dim must be a power of two in [4, 256], got {}", dim));
  }
  // Checked before multiplying so the product cannot overflow.
  if (rows > kMaxElements || cols > kMaxElements || rows * cols > kMaxElements) {
    throw layout_error(name, fmt::format("shape {}x{} has more than 2^31 elements", rows, cols));
  }
  TiledLayout l;
  l.name = std::string(name);
  l.rows = static_cast<std::size_t>(rows);
  l.cols = static_cast<std::size_t>(cols);
  l.elem_bytes = elem_bytes;
  // The TPU's tile (tpu_tiles.h), its packed rows folded into whole VMEM rows (layout.h).
  const auto element_bits = static_cast<unsigned>(elem_bytes * 8);
  l.tile_rows = tiled ? static_cast<std::size_t>(tpu_tile_rows(element_bits)) : 1;
  l.tile_cols = dim;
  l.padded_rows = round_up(l.rows, l.tile_rows);
  l.padded_cols = round_up(l.cols, l.tile_cols);
  if (l.bytes() > kMaxDeviceBytes) {
    throw layout_error(name, fmt::format("padded shape {}x{} of {}-byte elements needs {} bytes, "
                                         "more than the 4 GiB device address space",
                                         l.padded_rows, l.padded_cols, elem_bytes, l.bytes()));
  }
  return l;
}

template <typename T>
void check_elem(const TiledLayout& layout) {
  if (layout.elem_bytes != sizeof(T)) {
    throw layout_error(layout.name, fmt::format("layout has {}-byte elements, data has {}-byte",
                                                layout.elem_bytes, sizeof(T)));
  }
}

// Element values are little-endian on the device whatever the host is.
template <typename T>
void store_le(std::uint8_t* dst, const T* src, std::size_t n) {
  if constexpr (std::endian::native == std::endian::little) {
    std::memcpy(dst, src, n * sizeof(T));
  } else {
    for (std::size_t i = 0; i < n; ++i) {
      const auto u = static_cast<std::make_unsigned_t<T>>(src[i]);
      for (std::size_t b = 0; b < sizeof(T); ++b) dst[i * sizeof(T) + b] = std::uint8_t(u >> (8 * b));
    }
  }
}

template <typename T>
void load_le(T* dst, const std::uint8_t* src, std::size_t n) {
  if constexpr (std::endian::native == std::endian::little) {
    std::memcpy(dst, src, n * sizeof(T));
  } else {
    for (std::size_t i = 0; i < n; ++i) {
      std::make_unsigned_t<T> u = 0;
      for (std::size_t b = 0; b < sizeof(T); ++b) u |= std::make_unsigned_t<T>(src[i * sizeof(T) + b]) << (8 * b);
      dst[i] = static_cast<T>(u);
    }
  }
}

// Calls f(r, c0, n, offset) for each run of n <= tile_cols elements of row r that are
// contiguous both in the host row-major array (starting at column c0) and on the device.
template <typename F>
void for_each_run(const TiledLayout& l, F&& f) {
  for (std::size_t r = 0; r < l.rows; ++r) {
    for (std::size_t c0 = 0; c0 < l.cols; c0 += l.tile_cols) {
      const std::size_t n = std::min(l.tile_cols, l.cols - c0);
      f(r, c0, n, l.offset_of_element(r, c0));
    }
  }
}

template <typename T>
std::vector<std::uint8_t> pack_impl(const TiledLayout& layout, std::span<const T> data) {
  check_elem<T>(layout);
  if (data.size() != layout.rows * layout.cols) {
    throw layout_error(layout.name, fmt::format("expected {}x{} = {} elements, got {}", layout.rows,
                                                layout.cols, layout.rows * layout.cols, data.size()));
  }
  std::vector<std::uint8_t> out(layout.bytes(), 0);
  for_each_run(layout, [&](std::size_t r, std::size_t c0, std::size_t n, std::size_t off) {
    store_le(out.data() + off, data.data() + r * layout.cols + c0, n);
  });
  return out;
}

}  // namespace

TiledLayout make_tiled_layout(std::int64_t rows, std::int64_t cols, std::size_t elem_bytes,
                              std::uint32_t dim, std::string_view name) {
  return make(rows, cols, elem_bytes, dim, name, true);
}

TiledLayout make_untiled_layout(std::int64_t rows, std::int64_t cols, std::size_t elem_bytes,
                                std::uint32_t dim, std::string_view name) {
  return make(rows, cols, elem_bytes, dim, name, false);
}

TiledLayout make_layout(bool tiled, std::int64_t rows, std::int64_t cols, std::size_t elem_bytes,
                        std::uint32_t dim, std::string_view name) {
  return make(rows, cols, elem_bytes, dim, name, tiled);
}

std::vector<std::uint8_t> pack(const TiledLayout& layout, std::span<const std::int8_t> row_major) {
  return pack_impl(layout, row_major);
}
std::vector<std::uint8_t> pack(const TiledLayout& layout, std::span<const std::int16_t> row_major) {
  return pack_impl(layout, row_major);
}
std::vector<std::uint8_t> pack(const TiledLayout& layout, std::span<const std::int32_t> row_major) {
  return pack_impl(layout, row_major);
}

template <typename T>
std::vector<T> unpack(const TiledLayout& layout, std::span<const std::uint8_t> device) {
  check_elem<T>(layout);
  if (device.size() != layout.bytes()) {
    throw layout_error(layout.name, fmt::format("expected a {}-byte device image, got {} bytes",
                                                layout.bytes(), device.size()));
  }
  std::vector<T> out(layout.rows * layout.cols);
  for_each_run(layout, [&](std::size_t r, std::size_t c0, std::size_t n, std::size_t off) {
    load_le(out.data() + r * layout.cols + c0, device.data() + off, n);
  });
  return out;
}

template std::vector<std::int8_t> unpack(const TiledLayout&, std::span<const std::uint8_t>);
template std::vector<std::int16_t> unpack(const TiledLayout&, std::span<const std::uint8_t>);
template std::vector<std::int32_t> unpack(const TiledLayout&, std::span<const std::uint8_t>);

}  // namespace tpuemu
