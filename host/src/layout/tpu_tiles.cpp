// SPDX-License-Identifier: Apache-2.0
// The TPU's tiling rule and XLA's tiled-layout algebra (see tpu_tiles.h).
#include "tpuemu/layout/tpu_tiles.h"

#include <algorithm>

#include "tpuemu/base/error.h"

namespace tpuemu {

namespace {

constexpr std::int64_t kSublanes = 8;
constexpr unsigned kWordBits = 32;  // a sublane's word

}  // namespace

std::int64_t tpu_tile_rows(unsigned element_bits) {
  if (element_bits == 0) throw Error("tiled layout: an element width of 0 bits");
  // Types of a word or wider take one element a word; narrower ones pack rows into each word.
  if (element_bits >= kWordBits) return kSublanes;
  return kSublanes * static_cast<std::int64_t>(kWordBits / element_bits);
}

std::vector<Tile> tpu_default_tiles(unsigned element_bits, std::size_t rank, std::uint32_t lanes) {
  if (element_bits == 0) throw Error("tiled layout: an element width of 0 bits");
  const auto l = static_cast<std::int64_t>(lanes);
  // Granules of 8*lanes bytes (1 KiB at 128 lanes), as TPU dumps print f32[N]{0:T(256)}; a tile
  // holds at least one element however wide.
  if (rank <= 1) {
    const std::int64_t granule_bits = kSublanes * l * 8;
    return {{std::max<std::int64_t>(1, granule_bits / static_cast<std::int64_t>(element_bits))}};
  }
  const std::int64_t rows = tpu_tile_rows(element_bits);
  if (rows == kSublanes) return {{rows, l}};
  return {{rows, l}, {rows / kSublanes, 1}};
}

std::optional<std::uint64_t> tiled_element_count(std::vector<std::uint64_t> dims,
                                                 const std::vector<Tile>& tiles) {
  for (const Tile& tile : tiles) {
    if (tile.empty()) continue;
    while (dims.size() < tile.size()) dims.insert(dims.begin(), 1);
    const std::size_t first = dims.size() - tile.size();
    std::vector<std::uint64_t> counts, sizes;
    for (std::size_t j = 0; j < tile.size(); ++j) {
      const std::uint64_t d = dims[first + j];
      if (tile[j] < 0) {  // kWholeDimension
        counts.push_back(1);
        sizes.push_back(d);
        continue;
      }
      // The HLO reader refuses other tile dimensions; a layout built by hand may still hold one.
      if (tile[j] == 0) throw Error("tiled layout: a tile dimension of 0");
      const auto t = static_cast<std::uint64_t>(tile[j]);
      counts.push_back(d / t + (d % t != 0 ? 1 : 0));
      sizes.push_back(t);
    }
    dims.resize(first);
    dims.insert(dims.end(), counts.begin(), counts.end());
    dims.insert(dims.end(), sizes.begin(), sizes.end());
  }
  if (std::find(dims.begin(), dims.end(), 0) != dims.end()) return 0;  // whatever the other dims
  std::uint64_t n = 1;
  for (const std::uint64_t d : dims)
    if (__builtin_mul_overflow(n, d, &n)) return std::nullopt;
  return n;
}

}  // namespace tpuemu
