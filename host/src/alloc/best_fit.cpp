// SPDX-License-Identifier: Apache-2.0
// Best fit (Knuth, TAOCP vol. 1, 2.5): the smallest free block that can hold the request, lowest
// address on ties, with immediate coalescing. Free blocks are indexed twice: by (size, offset) for
// the search and by offset to find the neighbours a freed block merges with.
#include <fmt/format.h>

#include "policies.h"
#include "tpuemu/base/error.h"

namespace tpuemu::alloc {

BestFitAllocator::BestFitAllocator(const AllocatorOptions& options)
    : capacity_(options.capacity),
      granularity_(options.granularity),
      by_offset_(&pool_),
      by_size_(&pool_) {
  add(0, capacity_);
}

void BestFitAllocator::add(std::uint64_t offset, std::uint64_t size) {
  by_offset_.emplace(offset, size);
  by_size_.emplace(size, offset);
}

void BestFitAllocator::remove(std::uint64_t offset, std::uint64_t size) {
  by_offset_.erase(offset);
  by_size_.erase({size, offset});
}

std::optional<Allocation> BestFitAllocator::allocate(std::uint64_t size, std::uint64_t alignment) {
  if (size == 0) size = 1;
  const std::uint64_t align = detail::checked_alignment(alignment, granularity_);
  const auto rounded = detail::round_up(size, granularity_);
  if (size > capacity_ || !rounded) return std::nullopt;

  // Blocks at least as large as the request, smallest first; with alignment padding a slightly
  // larger one may be needed, hence the walk.
  for (auto it = by_size_.lower_bound({*rounded, 0}); it != by_size_.end(); ++it) {
    const auto [block_size, block_offset] = *it;
    const auto pad = detail::fit(block_offset, block_size, *rounded, align);
    if (!pad) continue;
    remove(block_offset, block_size);
    if (*pad > 0) add(block_offset, *pad);
    const std::uint64_t start = block_offset + *pad;
    const std::uint64_t rest = block_size - *pad;
    std::uint64_t taken = rest;
    if (rest - *rounded >= granularity_) {
      taken = *rounded;
      add(start + taken, rest - taken);
    }
    return Allocation{start, taken, 0};
  }
  return std::nullopt;
}

void BestFitAllocator::deallocate(const Allocation& allocation) {
  const std::uint64_t end = allocation.offset + allocation.size;
  const auto next = by_offset_.lower_bound(allocation.offset);
  const auto prev = next == by_offset_.begin() ? by_offset_.end() : std::prev(next);
  if (allocation.size == 0 || end > capacity_ || end < allocation.offset ||
      (next != by_offset_.end() && next->first < end) ||
      (prev != by_offset_.end() && prev->first + prev->second > allocation.offset)) {
    throw Error(fmt::format("best-fit: deallocate of a block it does not hold (offset {}, size {})",
                            allocation.offset, allocation.size));
  }
  std::uint64_t start = allocation.offset, size = allocation.size;
  if (next != by_offset_.end() && next->first == end) {
    size += next->second;
    remove(next->first, next->second);
  }
  if (prev != by_offset_.end() && prev->first + prev->second == start) {
    start = prev->first;
    size += prev->second;
    remove(prev->first, prev->second);
  }
  add(start, size);
}

void BestFitAllocator::visit_free_blocks(const std::function<void(const FreeBlock&)>& visit) const {
  for (const auto& [offset, size] : by_offset_) visit(FreeBlock{offset, size});
}

NeededBlock BestFitAllocator::needed(std::uint64_t size, std::uint64_t /*alignment*/) const {
  return detail::granularity_needed(size, granularity_);
}

std::string BestFitAllocator::oversize_rule() const { return detail::granularity_oversize_rule(granularity_); }

}  // namespace tpuemu::alloc
