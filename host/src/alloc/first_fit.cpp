// SPDX-License-Identifier: Apache-2.0
// First fit (Knuth, TAOCP vol. 1, 2.5): free blocks kept in address order, the lowest-addressed
// block that can hold the request is used, and a freed block merges with free neighbours at once.
// The scan is linear in the number of free blocks; first fit trades that for its tendency to keep
// the high addresses unfragmented.
#include <fmt/format.h>

#include "policies.h"
#include "tpuemu/base/error.h"

namespace tpuemu::alloc {

FirstFitAllocator::FirstFitAllocator(const AllocatorOptions& options)
    : capacity_(options.capacity), granularity_(options.granularity), free_(&pool_) {
  free_.emplace(0, capacity_);
}

std::optional<Allocation> FirstFitAllocator::allocate(std::uint64_t size,
                                                      std::uint64_t alignment) {
  if (size == 0) size = 1;
  const std::uint64_t align = detail::checked_alignment(alignment, granularity_);
  const auto rounded = detail::round_up(size, granularity_);
  if (size > capacity_ || !rounded) return std::nullopt;

  for (auto it = free_.begin(); it != free_.end(); ++it) {
    const auto pad = detail::fit(it->first, it->second, *rounded, align);
    if (!pad) continue;
    const std::uint64_t start = it->first + *pad;
    const std::uint64_t rest = it->second - *pad;
    auto hint = free_.erase(it);
    if (*pad > 0) free_.emplace_hint(hint, start - *pad, *pad);
    std::uint64_t taken = rest;
    if (rest - *rounded >= granularity_) {
      taken = *rounded;
      free_.emplace_hint(hint, start + taken, rest - taken);
    }
    return Allocation{start, taken, 0};
  }
  return std::nullopt;
}

void FirstFitAllocator::deallocate(const Allocation& allocation) {
  const std::uint64_t end = allocation.offset + allocation.size;
  auto next = free_.lower_bound(allocation.offset);
  auto prev = next == free_.begin() ? free_.end() : std::prev(next);
  if (allocation.size == 0 || end > capacity_ || end < allocation.offset ||
      (next != free_.end() && next->first < end) ||
      (prev != free_.end() && prev->first + prev->second > allocation.offset)) {
    throw Error(fmt::format("first-fit: deallocate of a block it does not hold (offset {}, size {})",
                            allocation.offset, allocation.size));
  }
  std::uint64_t start = allocation.offset, size = allocation.size;
  if (next != free_.end() && next->first == end) {
    size += next->second;
    next = free_.erase(next);
  }
  if (prev != free_.end() && prev->first + prev->second == start) {
    prev->second += size;
    return;
  }
  free_.emplace_hint(next, start, size);
}

void FirstFitAllocator::visit_free_blocks(const std::function<void(const FreeBlock&)>& visit) const {
  for (const auto& [offset, size] : free_) visit(FreeBlock{offset, size});
}

NeededBlock FirstFitAllocator::needed(std::uint64_t size, std::uint64_t /*alignment*/) const {
  return detail::granularity_needed(size, granularity_);
}

std::string FirstFitAllocator::oversize_rule() const { return detail::granularity_oversize_rule(granularity_); }

}  // namespace tpuemu::alloc
