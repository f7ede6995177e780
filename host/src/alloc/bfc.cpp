// SPDX-License-Identifier: Apache-2.0
// BFC ("best-fit with coalescing"), after TensorFlow's BFCAllocator as XLA uses it for device
// memory: chunks cover the capacity in an address-ordered doubly linked list (indices into a pool,
// so a handle is a chunk index and deallocate needs no search), free chunks sit in power-of-two
// size bins ordered by (size, offset), and a freed chunk merges with free neighbours at once.
#include <fmt/format.h>

#include "policies.h"
#include "tpuemu/alloc/memory_space.h"
#include "tpuemu/base/error.h"

namespace tpuemu::alloc {

namespace {

// TF's split rule: a chunk is split only if it is at least twice the request, or if handing it out
// whole would waste at least this much. Anything else goes out whole and the difference is
// internal fragmentation (Allocation::size is the whole chunk). TF's reasoning: splitting off a
// remainder smaller than the request mostly creates chunks too small to reuse, and a whole chunk
// merges back cleanly when freed. The price is waste of up to half a chunk for mid-sized requests.
constexpr std::uint64_t kMaxInternalFragmentation = std::uint64_t{128} << 20;

}  // namespace

BfcAllocator::BfcAllocator(const AllocatorOptions& options)
    : capacity_(options.capacity), granularity_(options.granularity) {
  bins_.reserve(kBins);
  for (int i = 0; i < kBins; ++i) bins_.emplace_back(&pool_);
  chunks_.push_back(Chunk{0, capacity_, detail::kNone, detail::kNone, false, {}});
  insert_free(0);
}

int BfcAllocator::bin_of(std::uint64_t size) const {
  // Bin i holds [granularity * 2^i, granularity * 2^(i+1)).
  const std::uint64_t units = size / granularity_;
  return units == 0 ? 0 : static_cast<int>(std::bit_width(units)) - 1;
}

std::uint32_t BfcAllocator::new_chunk() {
  if (!spare_.empty()) {
    const std::uint32_t c = spare_.back();
    spare_.pop_back();
    return c;
  }
  chunks_.emplace_back();
  return static_cast<std::uint32_t>(chunks_.size() - 1);
}

void BfcAllocator::insert_free(std::uint32_t c) {
  Chunk& chunk = chunks_[c];
  const int b = bin_of(chunk.size);
  chunk.in_bin = bins_[b].insert(BinKey{chunk.size, chunk.offset, c}).first;
  nonempty_ |= std::uint64_t{1} << b;
}

void BfcAllocator::remove_free(std::uint32_t c) {
  const Chunk& chunk = chunks_[c];
  const int b = bin_of(chunk.size);
  bins_[b].erase(chunk.in_bin);
  if (bins_[b].empty()) nonempty_ &= ~(std::uint64_t{1} << b);
}

std::uint32_t BfcAllocator::split(std::uint32_t c, std::uint64_t first_size) {
  const std::uint32_t n = new_chunk();  // may reallocate chunks_: no references across it
  Chunk& chunk = chunks_[c];
  Chunk& rest = chunks_[n];
  rest = Chunk{chunk.offset + first_size, chunk.size - first_size, c, chunk.next, false, {}};
  if (chunk.next != detail::kNone) chunks_[chunk.next].prev = n;
  chunk.next = n;
  chunk.size = first_size;
  return n;
}

std::optional<Allocation> BfcAllocator::allocate(std::uint64_t size, std::uint64_t alignment) {
  if (size == 0) size = 1;
  const std::uint64_t align = detail::checked_alignment(alignment, granularity_);
  const auto rounded = detail::round_up(size, granularity_);
  if (size > capacity_ || !rounded) return std::nullopt;

  // Best fit: within a bin the order is (size, offset), so the first chunk that fits is the
  // smallest (lowest address on ties); every chunk of a higher bin is larger than any of this one.
  std::uint32_t found = detail::kNone;
  std::uint64_t pad = 0;
  std::uint64_t candidates = nonempty_ & (~std::uint64_t{0} << bin_of(*rounded));
  while (candidates != 0 && found == detail::kNone) {
    const auto& bin = bins_[std::countr_zero(candidates)];
    candidates &= candidates - 1;
    for (auto it = bin.lower_bound(BinKey{*rounded, 0, 0}); it != bin.end(); ++it) {
      if (const auto p = detail::fit(it->offset, it->size, *rounded, align)) {
        found = it->chunk;
        pad = *p;
        break;
      }
    }
  }
  if (found == detail::kNone) return std::nullopt;

  remove_free(found);
  if (pad > 0) {
    const std::uint32_t rest = split(found, pad);
    insert_free(found);
    found = rest;
  }
  const std::uint64_t have = chunks_[found].size;
  if (have / 2 >= *rounded || have - *rounded >= kMaxInternalFragmentation) {
    insert_free(split(found, *rounded));
  }
  Chunk& chunk = chunks_[found];
  chunk.in_use = true;
  return Allocation{chunk.offset, chunk.size, found};
}

void BfcAllocator::deallocate(const Allocation& allocation) {
  std::uint32_t c = static_cast<std::uint32_t>(allocation.handle);
  if (allocation.handle >= chunks_.size() || !chunks_[c].in_use ||
      chunks_[c].offset != allocation.offset || chunks_[c].size != allocation.size) {
    throw Error(fmt::format("bfc: deallocate of a block it does not hold (offset {}, size {})",
                            allocation.offset, allocation.size));
  }
  chunks_[c].in_use = false;
  if (const std::uint32_t n = chunks_[c].next; n != detail::kNone && !chunks_[n].in_use) {
    remove_free(n);
    chunks_[c].size += chunks_[n].size;
    chunks_[c].next = chunks_[n].next;
    if (chunks_[n].next != detail::kNone) chunks_[chunks_[n].next].prev = c;
    chunks_[n] = Chunk{};
    spare_.push_back(n);
  }
  if (const std::uint32_t p = chunks_[c].prev; p != detail::kNone && !chunks_[p].in_use) {
    remove_free(p);
    chunks_[p].size += chunks_[c].size;
    chunks_[p].next = chunks_[c].next;
    if (chunks_[c].next != detail::kNone) chunks_[chunks_[c].next].prev = p;
    chunks_[c] = Chunk{};
    spare_.push_back(c);
    c = p;
  }
  insert_free(c);
}

void BfcAllocator::visit_free_blocks(const std::function<void(const FreeBlock&)>& visit) const {
  for (const auto& bin : bins_) {
    for (const BinKey& key : bin) visit(FreeBlock{key.offset, key.size});
  }
}

NeededBlock BfcAllocator::needed(std::uint64_t size, std::uint64_t /*alignment*/) const {
  return detail::granularity_needed(size, granularity_);
}

std::string BfcAllocator::oversize_rule() const {
  return fmt::format("bfc hands a free chunk out whole unless it is at least twice the request or the rest is at "
                     "least {}",
                     format_bytes(kMaxInternalFragmentation));
}

}  // namespace tpuemu::alloc
