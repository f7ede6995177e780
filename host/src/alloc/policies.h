// SPDX-License-Identifier: Apache-2.0
// The allocation policies behind make_allocator (private to the library) and the little arithmetic
// they share. One policy per .cpp file; the published sources each follows: docs/allocation.md.
//
// Conventions every policy keeps, so tests can check them the same way for all:
//  - a request is rounded up to the granularity and the alignment is raised to at least the
//    granularity, so every offset handed out or held free is a multiple of the granularity;
//  - alignment above the granularity is met by splitting the leading padding off the found block
//    as a free block of its own (it is a non-zero multiple of the granularity, so worth keeping);
//  - a remainder smaller than the granularity (only possible at the end of a capacity that is not
//    a multiple of it) is never split off: it stays inside the allocation, so free blocks and live
//    blocks always tile [0, capacity) exactly.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <memory_resource>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "tpuemu/alloc/allocator.h"

namespace tpuemu::alloc {

namespace detail {

inline constexpr std::uint32_t kNone = UINT32_MAX;

// `size` rounded up to the power-of-two `granularity`; nullopt if that overflows.
inline std::optional<std::uint64_t> round_up(std::uint64_t size, std::uint64_t granularity) {
  const std::uint64_t rounded = (size + granularity - 1) & ~(granularity - 1);
  if (rounded < size) return std::nullopt;
  return rounded;
}

[[noreturn]] void throw_bad_alignment(std::uint64_t alignment);

// needed() of the policies that round a request to their granularity only (the alignment is met
// by padding in front, split off as a free block): the size rounded up, saturated at UINT64_MAX.
NeededBlock granularity_needed(std::uint64_t size, std::uint64_t granularity);
// oversize_rule() of the same policies: a remainder smaller than the granularity is not split off.
std::string granularity_oversize_rule(std::uint64_t granularity);

// `alignment` raised to the granularity; throws Error unless it is a power of two (0 is read as
// 1). Spelled without std::has_single_bit, which is a libgcc call without -mpopcnt: this runs on
// every allocation.
inline std::uint64_t checked_alignment(std::uint64_t alignment, std::uint64_t granularity) {
  if (alignment == 0) alignment = 1;
  if ((alignment & (alignment - 1)) != 0) throw_bad_alignment(alignment);
  return alignment < granularity ? granularity : alignment;
}

// Bytes to skip from `offset` to the next multiple of `alignment`, or nullopt when that multiple
// is not representable (only for absurd alignments near 2^64).
inline std::optional<std::uint64_t> padding_to(std::uint64_t offset, std::uint64_t alignment) {
  const std::uint64_t mask = alignment - 1;
  const std::uint64_t pad = (alignment - (offset & mask)) & mask;
  if (offset + pad < offset) return std::nullopt;
  return pad;
}

// Whether `rounded` bytes at `alignment` fit in the free extent [offset, offset + size); the
// padding in front when they do.
inline std::optional<std::uint64_t> fit(std::uint64_t offset, std::uint64_t size,
                                        std::uint64_t rounded, std::uint64_t alignment) {
  const auto pad = padding_to(offset, alignment);
  if (!pad || *pad > size || size - *pad < rounded) return std::nullopt;
  return pad;
}

// Node memory for the policies' ordered containers: nodes come from an arena and freed ones are
// recycled LIFO through intrusive lists, one per (size, alignment) seen (a container type has one
// node size, so there are one or two). std::pmr::unsynchronized_pool_resource does the same job
// but its deallocate searches for the owning chunk, which showed up as a tenth of BFC's time.
class NodeRecycler final : public std::pmr::memory_resource {
 private:
  struct FreeNode {
    FreeNode* next;
  };
  struct List {
    std::size_t bytes, alignment;
    FreeNode* head;
  };
  List& list_for(std::size_t bytes, std::size_t alignment) {
    for (List& list : lists_) {
      if (list.bytes == bytes && list.alignment == alignment) return list;
    }
    return lists_.emplace_back(List{bytes, alignment, nullptr});
  }
  void* do_allocate(std::size_t bytes, std::size_t alignment) override {
    List& list = list_for(bytes, alignment);
    if (FreeNode* node = list.head) {
      list.head = node->next;
      return node;
    }
    // Room for the link once the node is freed.
    return arena_.allocate(std::max(bytes, sizeof(FreeNode)),
                           std::max(alignment, alignof(FreeNode)));
  }
  void do_deallocate(void* p, std::size_t bytes, std::size_t alignment) override {
    List& list = list_for(bytes, alignment);
    list.head = std::construct_at(static_cast<FreeNode*>(p), FreeNode{list.head});
  }
  bool do_is_equal(const std::pmr::memory_resource& other) const noexcept override {
    return this == &other;
  }

  std::pmr::monotonic_buffer_resource arena_;
  std::vector<List> lists_;
};

}  // namespace detail

// TensorFlow/XLA-style best-fit with coalescing: chunks in an address-ordered list, free chunks in
// power-of-two size bins ordered by (size, offset).
class BfcAllocator final : public Allocator {
 public:
  explicit BfcAllocator(const AllocatorOptions& options);
  std::string_view name() const override { return "bfc"; }
  std::uint64_t capacity() const override { return capacity_; }
  std::optional<Allocation> allocate(std::uint64_t size, std::uint64_t alignment) override;
  void deallocate(const Allocation& allocation) override;
  NeededBlock needed(std::uint64_t size, std::uint64_t alignment) const override;
  std::string oversize_rule() const override;
  void visit_free_blocks(const std::function<void(const FreeBlock&)>& visit) const override;

 private:
  struct BinKey {
    std::uint64_t size, offset;
    std::uint32_t chunk;
    bool operator<(const BinKey& o) const {
      return size != o.size ? size < o.size : offset < o.offset;
    }
  };
  using Bin = std::pmr::set<BinKey>;
  struct Chunk {
    std::uint64_t offset = 0, size = 0;
    std::uint32_t prev = detail::kNone, next = detail::kNone;  // physical neighbours
    bool in_use = false;
    Bin::iterator in_bin{};  // while free: its entry, so leaving the bin needs no search
  };
  static constexpr int kBins = 64;

  std::uint32_t new_chunk();
  int bin_of(std::uint64_t size) const;
  void insert_free(std::uint32_t c);
  void remove_free(std::uint32_t c);
  std::uint32_t split(std::uint32_t c, std::uint64_t first_size);

  std::uint64_t capacity_, granularity_;
  std::vector<Chunk> chunks_;
  std::vector<std::uint32_t> spare_;  // chunk slots free for reuse
  detail::NodeRecycler pool_;
  std::vector<Bin> bins_;  // kBins of them, nodes from pool_
  std::uint64_t nonempty_ = 0;  // bit i: bins_[i] holds a chunk
};

// Address-ordered free list; the first block (lowest address) that fits.
class FirstFitAllocator final : public Allocator {
 public:
  explicit FirstFitAllocator(const AllocatorOptions& options);
  std::string_view name() const override { return "first-fit"; }
  std::uint64_t capacity() const override { return capacity_; }
  std::optional<Allocation> allocate(std::uint64_t size, std::uint64_t alignment) override;
  void deallocate(const Allocation& allocation) override;
  NeededBlock needed(std::uint64_t size, std::uint64_t alignment) const override;
  std::string oversize_rule() const override;
  void visit_free_blocks(const std::function<void(const FreeBlock&)>& visit) const override;

 private:
  std::uint64_t capacity_, granularity_;
  detail::NodeRecycler pool_;
  std::pmr::map<std::uint64_t, std::uint64_t> free_;  // offset -> size
};

// The smallest free block that fits, lowest address on ties.
class BestFitAllocator final : public Allocator {
 public:
  explicit BestFitAllocator(const AllocatorOptions& options);
  std::string_view name() const override { return "best-fit"; }
  std::uint64_t capacity() const override { return capacity_; }
  std::optional<Allocation> allocate(std::uint64_t size, std::uint64_t alignment) override;
  void deallocate(const Allocation& allocation) override;
  NeededBlock needed(std::uint64_t size, std::uint64_t alignment) const override;
  std::string oversize_rule() const override;
  void visit_free_blocks(const std::function<void(const FreeBlock&)>& visit) const override;

 private:
  void add(std::uint64_t offset, std::uint64_t size);
  void remove(std::uint64_t offset, std::uint64_t size);

  std::uint64_t capacity_, granularity_;
  detail::NodeRecycler pool_;
  std::pmr::map<std::uint64_t, std::uint64_t> by_offset_;                  // offset -> size
  std::pmr::set<std::pair<std::uint64_t, std::uint64_t>> by_size_;         // (size, offset)
};

// Binary buddy system over the maximal aligned power-of-two blocks that cover the capacity.
class BuddyAllocator final : public Allocator {
 public:
  explicit BuddyAllocator(const AllocatorOptions& options);
  std::string_view name() const override { return "buddy"; }
  std::uint64_t capacity() const override { return capacity_; }
  std::optional<Allocation> allocate(std::uint64_t size, std::uint64_t alignment) override;
  void deallocate(const Allocation& allocation) override;
  NeededBlock needed(std::uint64_t size, std::uint64_t alignment) const override;
  std::string oversize_rule() const override;
  void visit_free_blocks(const std::function<void(const FreeBlock&)>& visit) const override;

 private:
  static constexpr int kOrders = 64;
  int top_order_at(std::uint64_t offset) const;

  std::uint64_t capacity_, granularity_;
  int granularity_log2_;
  std::uint64_t usable_;  // capacity rounded down to the granularity; the rest is never handed out
  std::vector<std::pair<std::uint64_t, int>> tops_;  // (offset, order) of the top-level blocks
  detail::NodeRecycler pool_;
  std::vector<std::pmr::set<std::uint64_t>> free_;  // per order: offsets of free blocks
  std::uint64_t nonempty_ = 0;                      // bit k: free_[k] is not empty
};

// Two-Level Segregated Fit (Masmano, Ripoll, Crespo, Real 2004).
class TlsfAllocator final : public Allocator {
 public:
  explicit TlsfAllocator(const AllocatorOptions& options);
  std::string_view name() const override { return "tlsf"; }
  std::uint64_t capacity() const override { return capacity_; }
  std::optional<Allocation> allocate(std::uint64_t size, std::uint64_t alignment) override;
  void deallocate(const Allocation& allocation) override;
  NeededBlock needed(std::uint64_t size, std::uint64_t alignment) const override;
  std::string oversize_rule() const override;
  void visit_free_blocks(const std::function<void(const FreeBlock&)>& visit) const override;

  static constexpr int kSlLog2 = 5;  // 32 second-level lists per first level
  static constexpr int kSlCount = 1 << kSlLog2;
  static constexpr int kFlCount = 64;

 private:
  struct Block {
    std::uint64_t offset = 0, size = 0;
    std::uint32_t prev_phys = detail::kNone, next_phys = detail::kNone;
    std::uint32_t prev_free = detail::kNone, next_free = detail::kNone;
    bool free = false;
    std::uint8_t fl = 0, sl = 0;  // while free: the list it is in
  };
  struct Class {
    int fl, sl;
  };

  static Class class_of_units(std::uint64_t units) {
    if (units < kSlCount) return {0, static_cast<int>(units)};
    const int msb = static_cast<int>(std::bit_width(units)) - 1;
    return {msb - kSlLog2 + 1, static_cast<int>(units >> (msb - kSlLog2)) - kSlCount};
  }
  Class class_of(std::uint64_t size) const { return class_of_units(size >> granularity_log2_); }
  std::uint32_t new_block();
  void insert_free(std::uint32_t b);
  void remove_free(std::uint32_t b);
  std::uint32_t split(std::uint32_t b, std::uint64_t first_size);
  std::uint32_t find_good_fit(std::uint64_t units) const;
  std::uint32_t find_any_fit(Class from, std::uint64_t rounded, std::uint64_t alignment) const;

  std::uint64_t capacity_, granularity_;
  int granularity_log2_;
  std::vector<Block> blocks_;
  std::vector<std::uint32_t> spare_;
  std::uint64_t fl_bitmap_ = 0;
  std::array<std::uint32_t, kFlCount> sl_bitmap_{};
  std::array<std::array<std::uint32_t, kSlCount>, kFlCount> heads_;
};

}  // namespace tpuemu::alloc
