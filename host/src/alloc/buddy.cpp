// SPDX-License-Identifier: Apache-2.0
// Binary buddy system (Knowlton 1965; Knuth, TAOCP vol. 1, 2.5): every block is a power-of-two
// multiple of the granularity and aligned to its own size, so a block's buddy is found by flipping
// one address bit and a freed block merges with its buddy, recursively, in O(log capacity).
//
// A capacity that is not a power of two is covered by its binary decomposition: the largest
// power-of-two block at 0, the largest that fits after it, and so on. Each of these top-level
// blocks is aligned to its size (all later ones are smaller), and merging stops at them. A tail
// smaller than the granularity cannot form a block; it is reported free but never handed out.
#include <algorithm>

#include <fmt/format.h>

#include "policies.h"
#include "tpuemu/alloc/memory_space.h"
#include "tpuemu/base/error.h"

namespace tpuemu::alloc {

BuddyAllocator::BuddyAllocator(const AllocatorOptions& options)
    : capacity_(options.capacity),
      granularity_(options.granularity),
      granularity_log2_(std::countr_zero(options.granularity)),
      usable_(options.capacity & ~(options.granularity - 1)) {
  free_.reserve(kOrders);
  for (int k = 0; k < kOrders; ++k) free_.emplace_back(&pool_);
  std::uint64_t offset = 0;
  for (std::uint64_t rest = usable_; rest != 0;) {
    const std::uint64_t block = std::bit_floor(rest);
    const int order = std::countr_zero(block) - granularity_log2_;
    tops_.emplace_back(offset, order);
    free_[order].insert(offset);
    nonempty_ |= std::uint64_t{1} << order;
    offset += block;
    rest -= block;
  }
}

int BuddyAllocator::top_order_at(std::uint64_t offset) const {
  auto it = std::upper_bound(tops_.begin(), tops_.end(), offset,
                             [](std::uint64_t o, const auto& top) { return o < top.first; });
  return std::prev(it)->second;
}

std::optional<Allocation> BuddyAllocator::allocate(std::uint64_t size, std::uint64_t alignment) {
  if (size == 0) size = 1;
  const std::uint64_t align = detail::checked_alignment(alignment, granularity_);
  if (tops_.empty()) return std::nullopt;
  // The first top-level block is the largest; checking against it keeps bit_ceil in range.
  const std::uint64_t need = std::max(size, align);
  if (need > (granularity_ << tops_.front().second)) return std::nullopt;
  const int order = std::countr_zero(std::bit_ceil(need)) - granularity_log2_;

  const std::uint64_t candidates = nonempty_ & (~std::uint64_t{0} << order);
  if (candidates == 0) return std::nullopt;
  // The smallest free block that can be split down to the request, lowest address first, keeps
  // large blocks whole for large requests.
  int k = std::countr_zero(candidates);
  const std::uint64_t offset = *free_[k].begin();
  free_[k].erase(free_[k].begin());
  if (free_[k].empty()) nonempty_ &= ~(std::uint64_t{1} << k);
  while (k > order) {
    --k;
    free_[k].insert(offset + (granularity_ << k));
    nonempty_ |= std::uint64_t{1} << k;
  }
  return Allocation{offset, granularity_ << order, static_cast<std::uint64_t>(order)};
}

void BuddyAllocator::deallocate(const Allocation& allocation) {
  std::uint64_t offset = allocation.offset;
  const std::uint64_t size = allocation.size;
  const bool shaped = size >= granularity_ && std::has_single_bit(size) &&
                      offset % size == 0 && offset < usable_ && size <= usable_ - offset;
  int k = shaped ? std::countr_zero(size) - granularity_log2_ : 0;
  const int top = shaped ? top_order_at(offset) : 0;
  // A block that is free itself or inside a free ancestor was not handed out (a double free).
  bool held = shaped && k <= top;
  for (int j = k; held && j <= top; ++j) {
    held = !free_[j].contains(offset & ~((granularity_ << j) - 1));
  }
  if (!held) {
    throw Error(fmt::format("buddy: deallocate of a block it does not hold (offset {}, size {})",
                            allocation.offset, allocation.size));
  }
  for (; k < top; ++k) {
    const auto buddy = free_[k].find(offset ^ (granularity_ << k));
    if (buddy == free_[k].end()) break;
    offset = std::min(offset, *buddy);
    free_[k].erase(buddy);
    if (free_[k].empty()) nonempty_ &= ~(std::uint64_t{1} << k);
  }
  free_[k].insert(offset);
  nonempty_ |= std::uint64_t{1} << k;
}

void BuddyAllocator::visit_free_blocks(const std::function<void(const FreeBlock&)>& visit) const {
  for (int k = 0; k < kOrders; ++k) {
    for (const std::uint64_t offset : free_[k]) visit(FreeBlock{offset, granularity_ << k});
  }
  if (usable_ < capacity_) visit(FreeBlock{usable_, capacity_ - usable_});
}

NeededBlock BuddyAllocator::needed(std::uint64_t size, std::uint64_t alignment) const {
  if (size == 0) size = 1;
  const std::uint64_t align = detail::checked_alignment(alignment, granularity_);
  const std::uint64_t at_least = std::max(size, align);
  const std::uint64_t need = at_least > (std::uint64_t{1} << 63) ? UINT64_MAX : std::bit_ceil(at_least);
  if (need == size) return {size, {}};
  constexpr std::string_view kRule = "buddy blocks are powers of two aligned to their size";
  std::string why;
  if (align > size && alignment > granularity_) {
    why = fmt::format("the request raised to its alignment {}: {}", alignment, kRule);
  } else if (align > size) {
    why = fmt::format("the request rounded up to the granularity {}: {}", format_bytes(granularity_), kRule);
  } else {
    why = fmt::format("the request rounded up to a power of two: {}", kRule);
  }
  return {need, std::move(why)};
}

std::string BuddyAllocator::oversize_rule() const { return {}; }

}  // namespace tpuemu::alloc
