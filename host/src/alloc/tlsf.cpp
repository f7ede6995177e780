// SPDX-License-Identifier: Apache-2.0
// Two-Level Segregated Fit (Masmano, Ripoll, Crespo, Real: "TLSF: a new dynamic memory allocator
// for real-time systems", ECRTS 2004). Free blocks live in segregated lists indexed by a first
// level (floor(log2(size))) and a second level (kSlCount linear subdivisions of that power of two);
// two bitmap levels find a non-empty list in O(1). Sizes are counted in granules, so the first
// kSlCount granule counts get one exact list each (first level 0) and classes only start to span
// several sizes above that.
//
// Good fit: the request is rounded up to the next class boundary before the lookup, so the head of
// any list found fits without walking it. Alignment above the granularity is folded into that
// rounding as the worst-case padding. The rounding can miss a block that would fit (one in the
// request's own class, or one that fits only because its padding happens to be small); when the
// O(1) lookup finds nothing, a walk over the lists from the request's own class upwards looks for
// such a block before reporting out-of-memory, so a near-full space still gets used.
#include <fmt/format.h>

#include "policies.h"
#include "tpuemu/base/error.h"

namespace tpuemu::alloc {

namespace {

// Good-fit targets above this many granules are never found by the O(1) lookup anyway (no block
// is that large); capping keeps the rounding arithmetic free of overflow.
constexpr std::uint64_t kMaxUnits = std::uint64_t{1} << 58;

}  // namespace

TlsfAllocator::TlsfAllocator(const AllocatorOptions& options)
    : capacity_(options.capacity),
      granularity_(options.granularity),
      granularity_log2_(std::countr_zero(options.granularity)) {
  for (auto& row : heads_) row.fill(detail::kNone);
  blocks_.push_back(Block{0, capacity_});
  insert_free(0);
}

std::uint32_t TlsfAllocator::new_block() {
  if (!spare_.empty()) {
    const std::uint32_t b = spare_.back();
    spare_.pop_back();
    return b;
  }
  blocks_.emplace_back();
  return static_cast<std::uint32_t>(blocks_.size() - 1);
}

void TlsfAllocator::insert_free(std::uint32_t b) {
  Block& block = blocks_[b];
  const Class c = class_of(block.size);
  std::uint32_t& head = heads_[c.fl][c.sl];
  block.free = true;
  block.fl = static_cast<std::uint8_t>(c.fl);
  block.sl = static_cast<std::uint8_t>(c.sl);
  block.prev_free = detail::kNone;
  block.next_free = head;
  if (head != detail::kNone) blocks_[head].prev_free = b;
  head = b;
  sl_bitmap_[c.fl] |= std::uint32_t{1} << c.sl;
  fl_bitmap_ |= std::uint64_t{1} << c.fl;
}

void TlsfAllocator::remove_free(std::uint32_t b) {
  Block& block = blocks_[b];
  const Class c{block.fl, block.sl};
  if (block.prev_free != detail::kNone) {
    blocks_[block.prev_free].next_free = block.next_free;
  } else {
    heads_[c.fl][c.sl] = block.next_free;
    if (block.next_free == detail::kNone) {
      sl_bitmap_[c.fl] &= ~(std::uint32_t{1} << c.sl);
      if (sl_bitmap_[c.fl] == 0) fl_bitmap_ &= ~(std::uint64_t{1} << c.fl);
    }
  }
  if (block.next_free != detail::kNone) blocks_[block.next_free].prev_free = block.prev_free;
  block.free = false;
}

std::uint32_t TlsfAllocator::split(std::uint32_t b, std::uint64_t first_size) {
  const std::uint32_t n = new_block();  // may reallocate blocks_: no references across it
  Block& block = blocks_[b];
  blocks_[n] = Block{block.offset + first_size, block.size - first_size, b, block.next_phys};
  if (block.next_phys != detail::kNone) blocks_[block.next_phys].prev_phys = n;
  block.next_phys = n;
  block.size = first_size;
  return n;
}

std::uint32_t TlsfAllocator::find_good_fit(std::uint64_t units) const {
  if (units >= kSlCount) units += (std::uint64_t{1} << (std::bit_width(units) - 1 - kSlLog2)) - 1;
  Class c = class_of_units(units);
  std::uint32_t sl_map = sl_bitmap_[c.fl] & (~std::uint32_t{0} << c.sl);
  if (sl_map == 0) {
    const std::uint64_t fl_map = c.fl + 1 < kFlCount ? fl_bitmap_ & (~std::uint64_t{0} << (c.fl + 1)) : 0;
    if (fl_map == 0) return detail::kNone;
    c.fl = std::countr_zero(fl_map);
    sl_map = sl_bitmap_[c.fl];
  }
  return heads_[c.fl][std::countr_zero(sl_map)];
}

std::uint32_t TlsfAllocator::find_any_fit(Class from, std::uint64_t rounded,
                                          std::uint64_t alignment) const {
  for (int fl = from.fl; fl < kFlCount; ++fl) {
    if ((fl_bitmap_ >> fl & 1) == 0) continue;
    std::uint32_t sl_map = sl_bitmap_[fl];
    if (fl == from.fl) sl_map &= ~std::uint32_t{0} << from.sl;
    for (; sl_map != 0; sl_map &= sl_map - 1) {
      for (std::uint32_t b = heads_[fl][std::countr_zero(sl_map)]; b != detail::kNone;
           b = blocks_[b].next_free) {
        if (detail::fit(blocks_[b].offset, blocks_[b].size, rounded, alignment)) return b;
      }
    }
  }
  return detail::kNone;
}

std::optional<Allocation> TlsfAllocator::allocate(std::uint64_t size, std::uint64_t alignment) {
  if (size == 0) size = 1;
  const std::uint64_t align = detail::checked_alignment(alignment, granularity_);
  const auto rounded = detail::round_up(size, granularity_);
  if (size > capacity_ || !rounded) return std::nullopt;

  const std::uint64_t units = *rounded >> granularity_log2_;
  const std::uint64_t worst_pad = (align - granularity_) >> granularity_log2_;
  std::uint32_t b = detail::kNone;
  if (units <= kMaxUnits && worst_pad <= kMaxUnits) b = find_good_fit(units + worst_pad);
  if (b == detail::kNone) b = find_any_fit(class_of_units(units), *rounded, align);
  if (b == detail::kNone) return std::nullopt;

  remove_free(b);
  const std::uint64_t pad = *detail::fit(blocks_[b].offset, blocks_[b].size, *rounded, align);
  if (pad > 0) {
    const std::uint32_t rest = split(b, pad);
    insert_free(b);
    b = rest;
  }
  if (blocks_[b].size - *rounded >= granularity_) insert_free(split(b, *rounded));
  const Block& block = blocks_[b];
  return Allocation{block.offset, block.size, b};
}

void TlsfAllocator::deallocate(const Allocation& allocation) {
  std::uint32_t b = static_cast<std::uint32_t>(allocation.handle);
  if (allocation.handle >= blocks_.size() || blocks_[b].free || blocks_[b].size == 0 ||
      blocks_[b].offset != allocation.offset || blocks_[b].size != allocation.size) {
    throw Error(fmt::format("tlsf: deallocate of a block it does not hold (offset {}, size {})",
                            allocation.offset, allocation.size));
  }
  if (const std::uint32_t n = blocks_[b].next_phys; n != detail::kNone && blocks_[n].free) {
    remove_free(n);
    blocks_[b].size += blocks_[n].size;
    blocks_[b].next_phys = blocks_[n].next_phys;
    if (blocks_[n].next_phys != detail::kNone) blocks_[blocks_[n].next_phys].prev_phys = b;
    blocks_[n] = Block{};
    spare_.push_back(n);
  }
  if (const std::uint32_t p = blocks_[b].prev_phys; p != detail::kNone && blocks_[p].free) {
    remove_free(p);
    blocks_[p].size += blocks_[b].size;
    blocks_[p].next_phys = blocks_[b].next_phys;
    if (blocks_[b].next_phys != detail::kNone) blocks_[blocks_[b].next_phys].prev_phys = p;
    blocks_[b] = Block{};
    spare_.push_back(b);
    b = p;
  }
  insert_free(b);
}

void TlsfAllocator::visit_free_blocks(const std::function<void(const FreeBlock&)>& visit) const {
  for (const Block& block : blocks_) {
    if (block.free) visit(FreeBlock{block.offset, block.size});
  }
}

NeededBlock TlsfAllocator::needed(std::uint64_t size, std::uint64_t /*alignment*/) const {
  return detail::granularity_needed(size, granularity_);
}

std::string TlsfAllocator::oversize_rule() const { return detail::granularity_oversize_rule(granularity_); }

}  // namespace tpuemu::alloc
