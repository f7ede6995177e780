// SPDX-License-Identifier: Apache-2.0
// Layer hlo, private: what the liveness units (dataflow.cpp, alias_analysis.cpp, liveness.cpp),
// schedule.cpp and shape_bytes.cpp share - 64-bit arithmetic that saturates instead of wrapping,
// which opcodes define no buffer of their own, a shape's array leaves with their tuple paths, and
// a schedule's peaks without its buffers.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "tpuemu/hlo/hlo_module.h"
#include "tpuemu/hlo/liveness.h"

namespace tpuemu::hlo::detail {

inline constexpr std::uint64_t kSaturated = std::numeric_limits<std::uint64_t>::max();

// A 10^12-element tensor of c128 is 1.6e13 bytes, well inside 64 bits; products of absurd shapes
// are not, and a size that wrapped would read as small. Saturated sizes stay at the maximum.
inline std::uint64_t sat_add(std::uint64_t a, std::uint64_t b) {
  return a > kSaturated - b ? kSaturated : a + b;
}
inline std::uint64_t sat_mul(std::uint64_t a, std::uint64_t b) {
  if (a == 0 || b == 0) return 0;
  return a > kSaturated / b ? kSaturated : a * b;
}
// ceil(elements * bits / 8) without overflowing the intermediate product.
inline std::uint64_t bits_to_bytes(std::uint64_t elements, unsigned bits) {
  const std::uint64_t whole = sat_mul(elements / 8, bits);  // 8 elements: `bits` bytes
  const std::uint64_t rest = ((elements % 8) * bits + 7) / 8;
  return sat_add(whole, rest);
}

// Opcodes whose result is (part of) an operand's buffers, XLA's dataflow analysis: they define no
// value of their own (tuple defines only its index table, handled apart).
inline bool forwards_operand(Opcode op) {
  switch (op) {
    case Opcode::Bitcast:
    case Opcode::GetTupleElement:
    case Opcode::OptBarrier:
    case Opcode::Domain:
    case Opcode::AddDependency:
      return true;
    default:
      return false;
  }
}

// Every array (or token) leaf of a shape, depth first, with its tuple index path.
struct ShapeLeaf {
  const Shape* shape = nullptr;
  std::vector<std::int64_t> path;
};
inline void collect_leaves(const Shape& shape, std::vector<std::int64_t>& path,
                           std::vector<ShapeLeaf>& out) {
  if (!shape.is_tuple()) {
    out.push_back({&shape, path});
    return;
  }
  for (std::size_t i = 0; i < shape.elements.size(); ++i) {
    path.push_back(static_cast<std::int64_t>(i));
    collect_leaves(shape.elements[i], path, out);
    path.pop_back();
  }
}
inline std::vector<ShapeLeaf> leaves_of(const Shape& shape) {
  std::vector<ShapeLeaf> out;
  std::vector<std::int64_t> path;
  collect_leaves(shape, path, out);
  return out;
}
inline std::size_t leaf_count(const Shape& shape) {
  if (!shape.is_tuple()) return 1;
  std::size_t n = 0;
  for (const Shape& e : shape.elements) n += leaf_count(e);
  return n;
}

// A tuple index path as XLA prints it: "{0,1}".
inline std::string path_text(const std::vector<std::int64_t>& path) {
  std::string s = "{";
  for (std::size_t i = 0; i < path.size(); ++i) {
    if (i > 0) s += ',';
    s += std::to_string(path[i]);
  }
  return s + "}";
}
inline bool path_has_prefix(const std::vector<std::int64_t>& path, const std::vector<std::int64_t>& prefix) {
  return path.size() >= prefix.size() && std::equal(prefix.begin(), prefix.end(), path.begin());
}

// shape_bytes() of array shapes, remembered by type, layout and dimensions (all it reads): a module
// of millions of instructions has few distinct shapes, and sizing one takes a few allocations.
// Holds at most kMaxShapes shapes (then starts afresh), so a module of as many distinct ones stays
// in bounded memory.
class ShapeSizes {
 public:
  explicit ShapeSizes(const SizeOptions& sizes) : sizes_(sizes) {}

  struct Bytes {
    std::uint64_t padded = 0;
    std::uint64_t unpadded = 0;
  };
  Bytes of(const Shape& shape) {
    if (!shape.is_array()) {
      const ShapeBytes sb = shape_bytes(shape, sizes_);
      return {sb.padded, sb.unpadded};
    }
    const View view{shape.type, shape.layout.get(), shape.dims};
    if (const auto it = known_.find(view); it != known_.end()) return it->second;
    if (known_.size() >= kMaxShapes) known_.clear();
    const ShapeBytes sb = shape_bytes(shape, sizes_);
    const Bytes bytes{sb.padded, sb.unpadded};
    known_.emplace(Key{shape.type, shape.layout.get(), shape.dims}, bytes);
    return bytes;
  }

 private:
  static constexpr std::size_t kMaxShapes = std::size_t{1} << 16;
  // The layout by identity: the reader shares one Layout among equal layout texts, and the
  // module (which owns them) outlives the cache.
  struct Key {
    PrimitiveType type;
    const Layout* layout;
    std::vector<std::int64_t> dims;
  };
  struct View {
    PrimitiveType type;
    const Layout* layout;
    std::span<const std::int64_t> dims;
  };
  struct Hash {
    using is_transparent = void;
    static std::size_t of(PrimitiveType type, const Layout* layout, std::span<const std::int64_t> dims) {
      std::size_t h = std::hash<const void*>{}(layout) ^ (static_cast<std::size_t>(type) * 0x9e3779b97f4a7c15u);
      for (const std::int64_t d : dims) h = (h ^ std::hash<std::int64_t>{}(d)) * 0x100000001b3u;
      return h;
    }
    std::size_t operator()(const Key& k) const { return of(k.type, k.layout, k.dims); }
    std::size_t operator()(const View& v) const { return of(v.type, v.layout, v.dims); }
  };
  struct Equal {
    using is_transparent = void;
    static bool same(PrimitiveType ta, const Layout* la, std::span<const std::int64_t> da, PrimitiveType tb,
                     const Layout* lb, std::span<const std::int64_t> db) {
      return ta == tb && la == lb && std::equal(da.begin(), da.end(), db.begin(), db.end());
    }
    bool operator()(const Key& a, const Key& b) const { return same(a.type, a.layout, a.dims, b.type, b.layout, b.dims); }
    bool operator()(const View& a, const Key& b) const { return same(a.type, a.layout, a.dims, b.type, b.layout, b.dims); }
    bool operator()(const Key& a, const View& b) const { return same(a.type, a.layout, a.dims, b.type, b.layout, b.dims); }
  };

  SizeOptions sizes_;
  std::unordered_map<Key, Bytes, Hash, Equal> known_;
};

// The padded and unpadded peaks live_buffers(module, schedule, sizes) has, without making its
// buffers: the schedules not chosen need no more (liveness.cpp).
struct SchedulePeaks {
  std::uint64_t padded = 0;
  std::uint64_t unpadded = 0;
};
SchedulePeaks live_peaks(const Module& module, const Schedule& schedule, const SizeOptions& sizes);

}  // namespace tpuemu::hlo::detail
