// SPDX-License-Identifier: Apache-2.0
#include "tpuemu/alloc/memory_space.h"

#include <algorithm>
#include <bit>
#include <cctype>
#include <utility>

#include <fmt/format.h>

namespace tpuemu::alloc {

// ---------------------------------------------------------------------------------------------
// FreeExtents
// ---------------------------------------------------------------------------------------------

FreeExtents::FreeExtents(std::uint64_t capacity) : capacity_(capacity), free_bytes_(0) {
  if (capacity > 0) add(0, capacity);
}

void FreeExtents::add(std::uint64_t offset, std::uint64_t size) {
  extents_.emplace(offset, size);
  ++size_counts_[size];
  free_bytes_ += size;
  sum_of_squares_ += static_cast<SquareSum>(size) * size;
}

void FreeExtents::remove(std::map<std::uint64_t, std::uint64_t>::iterator it) {
  const std::uint64_t size = it->second;
  auto count = size_counts_.find(size);
  if (--count->second == 0) size_counts_.erase(count);
  free_bytes_ -= size;
  sum_of_squares_ -= static_cast<SquareSum>(size) * size;
  extents_.erase(it);
}

void FreeExtents::reserve(std::uint64_t offset, std::uint64_t size) {
  auto it = extents_.upper_bound(offset);
  const bool inside = it != extents_.begin() && size > 0 && offset + size <= capacity_ &&
                      offset + size <= std::prev(it)->first + std::prev(it)->second;
  if (!inside) {
    throw Error(fmt::format("block [0x{:x}, 0x{:x}) is not free: it overlaps a live block or lies "
                            "outside the capacity 0x{:x}", offset, offset + size, capacity_));
  }
  --it;
  const std::uint64_t start = it->first, end = it->first + it->second;
  remove(it);
  if (start < offset) add(start, offset - start);
  if (offset + size < end) add(offset + size, end - offset - size);
}

void FreeExtents::release(std::uint64_t offset, std::uint64_t size) {
  std::uint64_t start = offset, end = offset + size;
  auto next = extents_.lower_bound(offset);
  if (next != extents_.end() && next->first < end) {
    throw Error(fmt::format("block [0x{:x}, 0x{:x}) released twice", offset, end));
  }
  if (next != extents_.end() && next->first == end) {
    end += next->second;
    remove(next);
  }
  auto prev = extents_.lower_bound(offset);
  if (prev != extents_.begin()) {
    --prev;
    if (prev->first + prev->second > start) {
      throw Error(fmt::format("block [0x{:x}, 0x{:x}) released twice", offset, offset + size));
    }
    if (prev->first + prev->second == start) {
      start = prev->first;
      remove(prev);
    }
  }
  add(start, end - start);
}

std::uint64_t FreeExtents::largest() const {
  return size_counts_.empty() ? 0 : size_counts_.rbegin()->first;
}

std::uint64_t FreeExtents::footprint() const {
  if (extents_.empty()) return capacity_;
  const auto& [offset, size] = *extents_.rbegin();
  return offset + size == capacity_ ? offset : capacity_;
}

double FreeExtents::gap_square_ratio() const {
  if (free_bytes_ == 0) return 0;
  const long double total = static_cast<long double>(free_bytes_);
  return static_cast<double>(static_cast<long double>(sum_of_squares_) / (total * total));
}

// ---------------------------------------------------------------------------------------------
// MemorySpace
// ---------------------------------------------------------------------------------------------

OutOfMemory::OutOfMemory(std::string message, std::uint64_t requested, std::uint64_t needed,
                         bool fits_without_fragmentation)
    : Error(message), requested_(requested), needed_(needed), fits_without_fragmentation_(fits_without_fragmentation) {}

MemorySpace::MemorySpace(std::string space, std::unique_ptr<Allocator> policy, bool keep_samples)
    : space_(std::move(space)),
      policy_(std::move(policy)),
      extents_(policy_->capacity()),
      keep_samples_(keep_samples) {
  totals_.space = space_;
  totals_.policy = std::string(policy_->name());
  totals_.capacity = policy_->capacity();
}

SpaceSnapshot MemorySpace::snapshot(std::uint64_t time) const {
  SpaceSnapshot s;
  s.time = time;
  s.live_bytes = live_bytes_;
  s.in_use_bytes = in_use_bytes_;
  s.footprint_bytes = extents_.footprint();
  s.free_bytes = extents_.free_bytes();
  s.free_blocks = extents_.count();
  s.largest_free_block = extents_.largest();
  s.external_fragmentation =
      s.free_bytes == 0 ? 0.0 : 1.0 - static_cast<double>(s.largest_free_block) / static_cast<double>(s.free_bytes);
  s.gap_square_ratio = extents_.gap_square_ratio();
  s.internal_waste_bytes = in_use_bytes_ - live_bytes_ + padding_bytes_;
  return s;
}

void MemorySpace::record(std::uint64_t time) {
  const SpaceSnapshot s = snapshot(time);
  totals_.peak_live_bytes = std::max(totals_.peak_live_bytes, s.live_bytes);
  totals_.peak_in_use_bytes = std::max(totals_.peak_in_use_bytes, s.in_use_bytes);
  totals_.peak_footprint_bytes = std::max(totals_.peak_footprint_bytes, s.footprint_bytes);
  totals_.peak_internal_waste_bytes = std::max(totals_.peak_internal_waste_bytes, s.internal_waste_bytes);
  totals_.max_free_blocks = std::max(totals_.max_free_blocks, s.free_blocks);
  totals_.max_external_fragmentation = std::max(totals_.max_external_fragmentation, s.external_fragmentation);
  sum_external_fragmentation_ += s.external_fragmentation;
  sum_gap_square_ratio_ += s.gap_square_ratio;
  ++events_;
  if (keep_samples_) samples_.push_back(s);
}

SpaceMetrics MemorySpace::metrics() const {
  SpaceMetrics m = totals_;
  const auto ratio = [](std::uint64_t a, std::uint64_t b) {
    return b == 0 ? 0.0 : static_cast<double>(a) / static_cast<double>(b);
  };
  m.peak_in_use_over_peak_live = ratio(m.peak_in_use_bytes, m.peak_live_bytes);
  m.peak_footprint_over_peak_live = ratio(m.peak_footprint_bytes, m.peak_live_bytes);
  if (events_ > 0) {
    m.mean_external_fragmentation = sum_external_fragmentation_ / static_cast<double>(events_);
    m.mean_gap_square_ratio = sum_gap_square_ratio_ / static_cast<double>(events_);
  }
  m.now = snapshot(samples_.empty() ? 0 : samples_.back().time);
  return m;
}

// The request as asked, what the policy must find free (its rounding and why), the free space
// and how it is cut up, and the live buffers with what each asked where the policy handed out more
// (bfc's unsplit chunks), so a failure at the reported peak is explained by the rounding and the
// waste rather than by "fragmentation". Fitting "without fragmentation" compares the rounded size.
OutOfMemory MemorySpace::out_of_memory(const BufferRequest& request, std::uint64_t time) const {
  const SpaceSnapshot s = snapshot(time);
  const NeededBlock need = policy_->needed(request.size, request.alignment);
  const bool would_fit = need.size <= s.free_bytes;
  std::vector<const LiveBuffer*> largest;
  bool oversize = false;  // a live block larger than its own rounded request
  for (const auto& [id, buffer] : live_) {
    largest.push_back(&buffer);
    oversize = oversize || buffer.block.size > policy_->needed(buffer.request.size, buffer.request.alignment).size;
  }
  const std::size_t shown = std::min<std::size_t>(3, largest.size());
  std::partial_sort(largest.begin(), largest.begin() + static_cast<std::ptrdiff_t>(shown), largest.end(),
                    [](const LiveBuffer* a, const LiveBuffer* b) { return a->block.size > b->block.size; });
  std::string owners;
  for (std::size_t i = 0; i < shown; ++i) {
    const LiveBuffer& b = *largest[i];
    owners += fmt::format("{}'{}' {} at 0x{:x}{}", i ? ", " : "", b.request.owner, format_bytes(b.block.size),
                          b.block.offset,
                          b.block.size == b.request.size ? std::string()
                                                         : fmt::format(" ({} asked)", format_bytes(b.request.size)));
  }
  const std::string needs =
      need.size == request.size
          ? std::string()
          : fmt::format("; {} needs {} ({})", policy_->name(),
                        need.size == UINT64_MAX ? std::string("more than 2^64 - 1 bytes") : format_bytes(need.size),
                        need.why);
  const std::uint64_t waste = in_use_bytes_ - live_bytes_;
  const std::string rule = oversize ? policy_->oversize_rule() : std::string();
  const std::string held =
      waste == 0 ? std::string()
                 : fmt::format("; live buffers hold {} for {} asked{}", format_bytes(in_use_bytes_),
                               format_bytes(live_bytes_), rule.empty() ? std::string() : " (" + rule + ")");
  std::string message = fmt::format(
      "out of {} memory ({}, capacity {}): '{}' asks for {} (alignment {}){} at time {}; free {} in {} "
      "block(s), largest free block {}, external fragmentation {:.1f}% -> {}{}; largest live buffers: {}",
      space_, policy_->name(), format_bytes(capacity()), request.owner, format_bytes(request.size),
      request.alignment, needs, time, format_bytes(s.free_bytes), s.free_blocks, format_bytes(s.largest_free_block),
      100.0 * s.external_fragmentation,
      would_fit ? "it would fit without fragmentation" : "it would not fit even without fragmentation", held,
      owners.empty() ? "none" : owners);
  return OutOfMemory(std::move(message), request.size, need.size, would_fit);
}

std::optional<PlacedBuffer> MemorySpace::try_allocate(const BufferRequest& request, std::uint64_t time,
                                                      std::optional<OutOfMemory>* failure) {
  if (request.size == 0) throw Error(fmt::format("{}: '{}' asks for 0 bytes", space_, request.owner));
  if (!std::has_single_bit(request.alignment)) {
    throw Error(fmt::format("{}: '{}' asks for alignment {}, which is not a power of two", space_,
                            request.owner, request.alignment));
  }
  if (request.padding > request.size) {
    throw Error(fmt::format("{}: '{}' has {} bytes of padding in {} bytes", space_, request.owner,
                            request.padding, request.size));
  }
  const std::optional<Allocation> block = policy_->allocate(request.size, request.alignment);
  if (!block) {
    ++totals_.failed_allocations;
    if (failure) failure->emplace(out_of_memory(request, time));
    return std::nullopt;
  }
  if (block->size < request.size || block->offset % request.alignment != 0) {
    throw Error(fmt::format("{} policy {} returned [0x{:x}, +{}) for {} bytes aligned to {}", space_,
                            policy_->name(), block->offset, block->size, request.size, request.alignment));
  }
  extents_.reserve(block->offset, block->size);
  const BufferId id = next_id_++;
  live_.emplace(id, LiveBuffer{*block, request});
  live_bytes_ += request.size;
  in_use_bytes_ += block->size;
  padding_bytes_ += request.padding;
  ++totals_.allocations;
  record(time);
  return PlacedBuffer{id, block->offset, block->size};
}

PlacedBuffer MemorySpace::allocate(const BufferRequest& request, std::uint64_t time) {
  std::optional<OutOfMemory> failure;
  if (auto placed = try_allocate(request, time, &failure)) return *placed;
  throw *failure;
}

void MemorySpace::free(BufferId id, std::uint64_t time) {
  const auto it = live_.find(id);
  if (it == live_.end()) throw Error(fmt::format("{}: free of buffer {}, which is not live", space_, id));
  const LiveBuffer& buffer = it->second;
  policy_->deallocate(buffer.block);
  extents_.release(buffer.block.offset, buffer.block.size);
  live_bytes_ -= buffer.request.size;
  in_use_bytes_ -= buffer.block.size;
  padding_bytes_ -= buffer.request.padding;
  live_.erase(it);
  ++totals_.frees;
  record(time);
}

// ---------------------------------------------------------------------------------------------
// Sizes
// ---------------------------------------------------------------------------------------------

std::string format_bytes(std::uint64_t bytes) {
  constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  if (bytes < 1024) return fmt::format("{} B", bytes);
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024 && unit < 4) {
    value /= 1024;
    ++unit;
  }
  return fmt::format("{:.{}f} {}", value, value < 10 ? 2 : value < 100 ? 1 : 0, kUnits[unit]);
}

std::pair<std::string, std::string> format_bytes_apart(std::uint64_t a, std::uint64_t b) {
  std::string ta = format_bytes(a), tb = format_bytes(b);
  if (a != b && ta == tb) {
    ta += fmt::format(" ({} B)", a);
    tb += fmt::format(" ({} B)", b);
  }
  return {ta, tb};
}

std::uint64_t parse_bytes(const std::string& text) {
  std::size_t i = 0;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
  if (i == 0) throw Error(fmt::format("'{}' is not a size in bytes (e.g. 4096, 64KiB, 16MiB, 1GiB)", text));
  std::string unit = text.substr(i);
  unit.erase(std::remove(unit.begin(), unit.end(), ' '), unit.end());
  for (char& c : unit) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  // Binary units (K, KiB, ...) are powers of 1024; the SI ones (KB, MB, ...) powers of 1000.
  struct Unit {
    const char* name;
    std::uint64_t scale;
  };
  static constexpr Unit kUnits[] = {{"", 1}, {"b", 1}, {"k", 1ull << 10}, {"kib", 1ull << 10}, {"m", 1ull << 20},
                                    {"mib", 1ull << 20}, {"g", 1ull << 30}, {"gib", 1ull << 30}, {"t", 1ull << 40},
                                    {"tib", 1ull << 40}, {"kb", 1000}, {"mb", 1000'000}, {"gb", 1000'000'000},
                                    {"tb", 1000'000'000'000}};
  const auto unit_it = std::find_if(std::begin(kUnits), std::end(kUnits), [&](const Unit& u) { return unit == u.name; });
  if (unit_it == std::end(kUnits)) {
    throw Error(fmt::format("'{}': unknown size unit '{}' (B, KiB, MiB, GiB, TiB, KB, MB, GB, TB)", text, text.substr(i)));
  }
  std::uint64_t value = 0;
  for (std::size_t j = 0; j < i; ++j) {
    if (value > (~std::uint64_t{0} - 9) / 10) throw Error(fmt::format("'{}' is too large", text));
    value = value * 10 + static_cast<std::uint64_t>(text[j] - '0');
  }
  if (value > ~std::uint64_t{0} / unit_it->scale) throw Error(fmt::format("'{}' is too large", text));
  return value * unit_it->scale;
}

}  // namespace tpuemu::alloc
