// SPDX-License-Identifier: Apache-2.0
// Bytes of an HLO shape as a TPU stores it: XLA's tiled layouts (docs/hlo.md, "Liveness,
// schedules and sizes"). One algebra serves the module's own T(...) tiles and tpuemu's default
// TPU tiles, so a printed layout always reproduces the bytes counted for it.
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "liveness_detail.h"
#include "tiled_size.h"
#include "tpuemu/base/error.h"
#include "tpuemu/hlo/liveness.h"

namespace tpuemu::hlo {
namespace {

using detail::sat_mul;
using Tile = std::vector<std::int64_t>;

// The default TPU tiles of an array of `bits`-wide elements with `lanes` lanes. A 32-bit word per
// sublane: 8 sublanes x lanes words, narrower types packing 32/bits rows into each word - the
// (2,1), (4,1), ... minor tile - so a tile spans 8*32/bits rows (16 for bf16, 32 for int8). Types
// of 32 bits and wider take (8, lanes) elements. Rank 0 and 1 arrays are one row of granules of
// 8*lanes bytes (TPU dumps print f32[N]{0:T(256)}, bf16 T(512), s8 T(1024) at 128 lanes).
std::vector<Tile> default_tiles(unsigned bits, std::size_t rank, std::uint32_t lanes) {
  const auto l = static_cast<std::int64_t>(lanes);
  if (rank <= 1) return {{std::max<std::int64_t>(1, 8 * l * 8 / static_cast<std::int64_t>(bits))}};
  if (bits >= 32) return {{8, l}};
  const auto pack = static_cast<std::int64_t>(32 / bits);
  return {{8 * pack, l}, {pack, 1}};
}

std::string tiles_text(const std::vector<Tile>& tiles) {
  std::string s = tiles.empty() ? "" : "T";  // XLA prints T(8,128)(2,1)
  for (const Tile& t : tiles) {
    s += "(";
    for (std::size_t i = 0; i < t.size(); ++i) {
      if (i > 0) s += ',';
      s += t[i] < 0 ? std::string("*") : std::to_string(t[i]);
    }
    s += ')';
  }
  return s;
}

// Elements after tiling, XLA's tiled-layout algebra: each tile applies to the minor-most dims of
// the (already tiled) shape, rounding each up to the tile and splitting it into (count, tile);
// a tile with more dims than the shape sees leading 1s; '*' (-1) leaves a dim whole. nullopt when
// the count does not fit 64 bits.
std::optional<std::uint64_t> tiled_elements(std::vector<std::uint64_t> dims, const std::vector<Tile>& tiles) {
  for (const Tile& tile : tiles) {
    if (tile.empty()) continue;
    while (dims.size() < tile.size()) dims.insert(dims.begin(), 1);
    const std::size_t first = dims.size() - tile.size();
    std::vector<std::uint64_t> counts, sizes;
    for (std::size_t j = 0; j < tile.size(); ++j) {
      const std::uint64_t d = dims[first + j];
      if (tile[j] < 0) {
        counts.push_back(1);
        sizes.push_back(d);
        continue;
      }
      // The reader refuses other tile dimensions; a Shape built by hand may still hold one.
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

// ceil(elements * bits / 8); nullopt when it does not fit 64 bits.
std::optional<std::uint64_t> exact_bytes(std::optional<std::uint64_t> elements, unsigned bits) {
  if (!elements) return std::nullopt;
  std::uint64_t whole = 0;
  if (__builtin_mul_overflow(*elements / 8, std::uint64_t{bits}, &whole)) return std::nullopt;
  std::uint64_t bytes = 0;
  if (__builtin_add_overflow(whole, ((*elements % 8) * bits + 7) / 8, &bytes)) return std::nullopt;
  return bytes;
}

// The minor_to_major order to use: the layout's, or the default {rank-1, ..., 0}.
std::vector<std::int64_t> minor_to_major(const Shape& shape) {
  const std::size_t rank = shape.dims.size();
  if (shape.layout && shape.layout->minor_to_major.size() == rank) return shape.layout->minor_to_major;
  std::vector<std::int64_t> m2m;
  for (std::size_t i = 0; i < rank; ++i) m2m.push_back(static_cast<std::int64_t>(rank - 1 - i));
  return m2m;
}

// The bits each element stores: the layout's E(n), or the element type's own width (no E, E(0)).
unsigned stored_bits(const Shape& shape) {
  if (shape.layout && shape.layout->element_size_bits > 0)
    return static_cast<unsigned>(shape.layout->element_size_bits);
  return bit_width(shape.type);
}

// A tiled array's elements rounded up to its layout's L(n), as XLA's ShapeUtil::ArraySize does;
// nullopt when the count does not fit 64 bits.
std::optional<std::uint64_t> tail_padded(std::optional<std::uint64_t> elements,
                                         const Shape& shape) {
  const std::int64_t alignment = shape.layout ? shape.layout->tail_padding_elements : 1;
  if (!elements || alignment <= 1) return elements;
  const auto a = static_cast<std::uint64_t>(alignment);
  const std::uint64_t short_by = (a - *elements % a) % a;
  std::uint64_t padded = 0;
  if (__builtin_add_overflow(*elements, short_by, &padded)) return std::nullopt;
  return padded;
}

// The L(n) and E(n) items of a layout tpuemu prints, in XLA's order (after the tiles, before S).
std::string size_items_text(const Shape& shape) {
  if (!shape.layout) return "";
  std::string s;
  if (shape.layout->tail_padding_elements > 1)
    s += "L(" + std::to_string(shape.layout->tail_padding_elements) + ")";
  if (shape.layout->element_size_bits > 0)
    s += "E(" + std::to_string(shape.layout->element_size_bits) + ")";
  return s;
}

// Logical dims in the layout's major-to-minor order (minor_to_major read backwards); an unbounded
// dynamic dimension counts 0.
std::vector<std::uint64_t> physical_dims(const Shape& shape, const std::vector<std::int64_t>& m2m) {
  const std::size_t rank = shape.dims.size();
  std::vector<std::uint64_t> physical;
  for (std::size_t i = rank; i-- > 0;) {
    const std::int64_t dim = m2m[i];
    const std::int64_t d = dim >= 0 && static_cast<std::size_t>(dim) < rank ? shape.dims[dim] : 0;
    physical.push_back(d < 0 ? 0 : static_cast<std::uint64_t>(d));
  }
  return physical;
}

}  // namespace

namespace detail {

std::optional<std::uint64_t> own_tiled_bytes(const Shape& shape) {
  const std::vector<Tile> none;
  const std::vector<Tile>& tiles = shape.layout ? shape.layout->tiles : none;
  std::optional<std::uint64_t> elements =
      tiled_elements(physical_dims(shape, minor_to_major(shape)), tiles);
  // XLA pads the tail of tiled arrays only (an untiled one's size is its elements').
  if (!tiles.empty()) elements = tail_padded(elements, shape);
  return exact_bytes(elements, stored_bits(shape));
}

std::uint64_t index_table_bytes(const Shape& shape, bool nested) {
  if (!shape.is_tuple()) return 0;
  std::uint64_t bytes = sat_mul(8, shape.elements.size());
  if (nested)
    for (const Shape& e : shape.elements) bytes = detail::sat_add(bytes, index_table_bytes(e, true));
  return bytes;
}

}  // namespace detail

namespace {

std::uint64_t saturated(std::optional<std::uint64_t> bytes) { return bytes.value_or(detail::kSaturated); }

}  // namespace

ShapeBytes shape_bytes(const Shape& shape, const SizeOptions& options) {
  ShapeBytes out;
  if (shape.is_tuple()) {
    // The index tables: storage, not program data, so they count in the padded (stored) bytes
    // only; unpadded sizes are the arrays' own.
    out.padded = detail::index_table_bytes(shape);
    return out;
  }
  const unsigned bits = bit_width(shape.type);
  if (!shape.is_array() || bits == 0) return out;  // token: no storage
  if (options.lanes == 0) throw Error("tiled layout: a lane count of 0");

  const std::vector<std::int64_t> m2m = minor_to_major(shape);
  const std::vector<std::uint64_t> physical = physical_dims(shape, m2m);
  std::uint64_t elements = 1;
  for (const std::uint64_t d : physical) elements = sat_mul(elements, d);
  // The program's data: dense at the type's width, so a wider E(n) counts as padding (pred
  // under E(32) pads each byte to a word). A narrower E(n) holds the data in fewer bits, and
  // the data is then counted at that width: padding is never negative.
  const unsigned stored = options.tiled ? stored_bits(shape) : bits;
  out.unpadded = detail::bits_to_bytes(elements, std::min(bits, stored));

  std::string m2m_text;
  for (std::size_t i = 0; i < m2m.size(); ++i) {
    if (i > 0) m2m_text += ',';
    m2m_text += std::to_string(m2m[i]);
  }
  const std::string space = shape.layout && shape.layout->memory_space != 0
                                ? "S(" + std::to_string(shape.layout->memory_space) + ")"
                                : "";
  if (!options.tiled) {
    out.padded = out.unpadded;  // dense; sub-byte types packed
    out.layout = "{" + m2m_text + (space.empty() ? "" : ":" + space) + "}";
    return out;
  }
  if (shape.layout && !shape.layout->tiles.empty()) {
    out.padded = saturated(detail::own_tiled_bytes(shape));
    out.layout = "{" + shape.layout->text + "}";
    return out;
  }
  // The default tiles of the stored width: pred under E(32) takes the 32-bit (8, lanes) tile.
  const std::vector<Tile> tiles = default_tiles(stored, m2m.size(), options.lanes);
  out.padded = saturated(exact_bytes(tail_padded(tiled_elements(physical, tiles), shape), stored));
  out.layout = "{" + m2m_text + ":" + tiles_text(tiles) + size_items_text(shape) + space + "}";
  return out;
}

}  // namespace tpuemu::hlo
