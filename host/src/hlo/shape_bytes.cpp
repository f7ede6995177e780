// SPDX-License-Identifier: Apache-2.0
// Bytes of an HLO shape as a TPU stores it: XLA's tiled layouts (docs/hlo.md, "Liveness,
// schedules and sizes"). The tiling rule and the tiled-layout algebra are the layout layer's
// (tpuemu/layout/tpu_tiles.h), shared with the model compiler; one algebra serves the module's own
// T(...) tiles and the TPU's default tiles, so a printed layout always reproduces the bytes
// counted for it.
#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "liveness_detail.h"
#include "tiled_size.h"
#include "tpuemu/base/error.h"
#include "tpuemu/hlo/liveness.h"
#include "tpuemu/layout/tpu_tiles.h"

namespace tpuemu::hlo {
namespace {

using detail::sat_mul;

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

// NAME(value) appended to `s`, as XLA prints a layout's one-value items.
void append_item(std::string& s, std::string_view name, std::string_view value) {
  s += name;
  s += '(';
  s += value;
  s += ')';
}

// The items of a layout tpuemu prints with `tiles` in place of the layout's own, in XLA's order
// (xla/layout.cc, Layout::Print): D T L # * E S SC P M.
std::string items_text(const Shape& shape, const std::vector<Tile>& tiles) {
  std::string s;
  const Layout* layout = shape.layout ? &*shape.layout : nullptr;
  if (layout && !layout->dim_levels.empty()) {
    std::string levels;
    for (const DimLevel& level : layout->dim_levels) {
      if (!levels.empty()) levels += ',';
      levels += "DCSH"[static_cast<std::size_t>(level.type)];
      if (!level.unique) levels += '+';
      if (!level.ordered) levels += '~';
    }
    append_item(s, "D", levels);
  }
  s += tiles_text(tiles);
  if (!layout) return s;
  if (layout->tail_padding_elements > 1)
    append_item(s, "L", std::to_string(layout->tail_padding_elements));
  if (layout->index_type) append_item(s, "#", type_name(*layout->index_type));
  if (layout->pointer_type) append_item(s, "*", type_name(*layout->pointer_type));
  if (layout->element_size_bits > 0) append_item(s, "E", std::to_string(layout->element_size_bits));
  if (layout->memory_space != 0) append_item(s, "S", std::to_string(layout->memory_space));
  if (!layout->split_configs.empty()) {
    s += "SC";
    for (const SplitConfig& split : layout->split_configs) {
      std::string indices = std::to_string(split.dimension);
      indices += ':';
      for (std::size_t i = 0; i < split.split_indices.size(); ++i) {
        if (i > 0) indices += ',';
        indices += std::to_string(split.split_indices[i]);
      }
      append_item(s, "", indices);
    }
  }
  if (layout->physical_shape) append_item(s, "P", layout->physical_shape->to_string());
  if (layout->dynamic_metadata_prefix_bytes > 0)
    append_item(s, "M", std::to_string(layout->dynamic_metadata_prefix_bytes));
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

// The physical dims as one part of a split array holds them: each SC(d:...) dimension counts its
// largest part, as XLA's ShapeUtil::ArraySize (LayoutUtil::MaxSplitSize) counts a tiled array.
std::vector<std::uint64_t> split_dims(std::vector<std::uint64_t> physical, const Shape& shape) {
  if (!shape.layout) return physical;
  for (const SplitConfig& split : shape.layout->split_configs) {
    const auto dimension = static_cast<std::size_t>(split.dimension);
    if (split.dimension < 0 || dimension >= physical.size()) continue;
    std::uint64_t& size = physical[dimension];
    std::uint64_t largest = 0, start = 0;
    for (const std::int64_t index : split.split_indices) {
      const auto at = std::min(size, static_cast<std::uint64_t>(std::max<std::int64_t>(index, 0)));
      largest = std::max(largest, at > start ? at - start : 0);
      start = std::max(start, at);
    }
    size = std::max(largest, size - start);
  }
  return physical;
}

}  // namespace

namespace detail {

std::optional<std::uint64_t> own_tiled_bytes(const Shape& shape) {
  const std::vector<Tile> none;
  const std::vector<Tile>& tiles = shape.layout ? shape.layout->tiles : none;
  std::vector<std::uint64_t> physical = physical_dims(shape, minor_to_major(shape));
  // XLA splits and pads the tail of tiled arrays only (an untiled one's size is its elements').
  if (!tiles.empty()) physical = split_dims(std::move(physical), shape);
  std::optional<std::uint64_t> elements = tiled_element_count(std::move(physical), tiles);
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
  // Tiled, a split array's buffer holds its largest part (SC); --untiled counts it whole, as XLA
  // counts an untiled array.
  std::vector<std::uint64_t> physical = physical_dims(shape, m2m);
  if (options.tiled) physical = split_dims(std::move(physical), shape);
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
  const std::vector<Tile> tiles = tpu_default_tiles(stored, m2m.size(), options.lanes);
  out.padded =
      saturated(exact_bytes(tail_padded(tiled_element_count(physical, tiles), shape), stored));
  out.layout = "{" + m2m_text + ":" + items_text(shape, tiles) + "}";
  return out;
}

}  // namespace tpuemu::hlo
