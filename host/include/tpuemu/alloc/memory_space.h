// SPDX-License-Identifier: Apache-2.0
// One memory space (HBM, VMEM) managed by one allocation policy, and the fragmentation metrics
// every policy is measured by. The metrics are computed here from the blocks a policy hands out,
// never from the policy's own bookkeeping, so that they mean the same for every policy: a free
// block is a maximal run of addresses no live allocation reserved. Definitions: docs/allocation.md.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "tpuemu/alloc/allocator.h"
#include "tpuemu/base/error.h"

namespace tpuemu::alloc {

// The state of a space at one moment.
struct SpaceSnapshot {
  std::uint64_t time = 0;
  std::uint64_t live_bytes = 0;       // sum of requested sizes of live buffers
  std::uint64_t in_use_bytes = 0;     // sum of blocks reserved for them (rounding and alignment included)
  std::uint64_t footprint_bytes = 0;  // end of the highest reserved block: the capacity this needed
  std::uint64_t free_bytes = 0;       // capacity - in_use
  std::uint64_t free_blocks = 0;      // maximal free extents
  std::uint64_t largest_free_block = 0;
  double external_fragmentation = 0;  // 1 - largest_free_block / free_bytes (0 when nothing is free)
  double gap_square_ratio = 0;        // sum(gap^2) / free_bytes^2: 1 = one free block, 1/n = n equal gaps
  std::uint64_t internal_waste_bytes = 0;  // (in_use - live) + layout padding inside live requests
};

// Whole-run figures of a space: peaks and the fragmentation seen over time.
struct SpaceMetrics {
  std::string space, policy;
  std::uint64_t capacity = 0;
  std::uint64_t allocations = 0, frees = 0, failed_allocations = 0;
  std::uint64_t peak_live_bytes = 0, peak_in_use_bytes = 0, peak_footprint_bytes = 0;
  std::uint64_t peak_internal_waste_bytes = 0;
  std::uint64_t max_free_blocks = 0;
  double peak_in_use_over_peak_live = 0;     // >= 1: what rounding and alignment cost at the peak
  double peak_footprint_over_peak_live = 0;  // >= 1: the capacity this policy needs per live byte
  double mean_external_fragmentation = 0, max_external_fragmentation = 0;  // over events
  double mean_gap_square_ratio = 0;
  SpaceSnapshot now;  // at the end
};

// One line, everything a user needs to see why an allocation failed.
class OutOfMemory : public Error {
 public:
  OutOfMemory(std::string message, std::uint64_t requested, std::uint64_t needed, bool fits_without_fragmentation);
  std::uint64_t requested() const { return requested_; }  // as asked
  std::uint64_t needed() const { return needed_; }        // as the policy rounds it (Allocator::needed)
  // The rounded request is no larger than the free bytes: only fragmentation made it fail.
  bool fits_without_fragmentation() const { return fits_without_fragmentation_; }

 private:
  std::uint64_t requested_, needed_;
  bool fits_without_fragmentation_;
};

// Exact sums of squared sizes (2^40-byte spaces square to 2^80); a GCC/Clang extension.
__extension__ using SquareSum = unsigned __int128;

// Maximal free extents of [0, capacity), kept incrementally as blocks are reserved and released.
class FreeExtents {
 public:
  explicit FreeExtents(std::uint64_t capacity);
  // Throws Error when [offset, offset + size) is not entirely free: the policy handed out a block
  // that overlaps another (a policy bug, reported rather than corrupting the metrics).
  void reserve(std::uint64_t offset, std::uint64_t size);
  void release(std::uint64_t offset, std::uint64_t size);

  std::uint64_t capacity() const { return capacity_; }
  std::uint64_t free_bytes() const { return free_bytes_; }
  std::uint64_t count() const { return extents_.size(); }
  std::uint64_t largest() const;
  std::uint64_t footprint() const;  // end of the highest reserved byte
  double gap_square_ratio() const;
  const std::map<std::uint64_t, std::uint64_t>& extents() const { return extents_; }  // offset -> size

 private:
  void add(std::uint64_t offset, std::uint64_t size);
  void remove(std::map<std::uint64_t, std::uint64_t>::iterator it);

  std::uint64_t capacity_;
  std::uint64_t free_bytes_;
  std::map<std::uint64_t, std::uint64_t> extents_;
  std::map<std::uint64_t, std::uint64_t> size_counts_;  // extent size -> how many
  SquareSum sum_of_squares_ = 0;
};

struct BufferRequest {
  std::uint64_t size = 0;        // bytes, > 0
  std::uint64_t alignment = 1;   // power of two
  std::string owner;             // who asked: "layer 2 weights", "trace id 17"
  std::uint64_t padding = 0;     // bytes of `size` that are layout padding (counted as internal waste)
};

using BufferId = std::uint64_t;

struct PlacedBuffer {
  BufferId id = 0;
  std::uint64_t offset = 0;
  std::uint64_t reserved = 0;
};

class MemorySpace {
 public:
  // `space` names it in messages ("HBM", "VMEM"). `keep_samples`: record a snapshot per event.
  MemorySpace(std::string space, std::unique_ptr<Allocator> policy, bool keep_samples = false);

  // Throws OutOfMemory (counted as a failed allocation), or Error for a bad request.
  PlacedBuffer allocate(const BufferRequest& request, std::uint64_t time = 0);
  // As allocate, but a failure returns the OutOfMemory instead of throwing it.
  std::optional<PlacedBuffer> try_allocate(const BufferRequest& request, std::uint64_t time,
                                           std::optional<OutOfMemory>* failure);
  // Throws Error for an id that is not live.
  void free(BufferId id, std::uint64_t time = 0);

  const std::string& space() const { return space_; }
  std::string_view policy() const { return policy_->name(); }
  std::uint64_t capacity() const { return extents_.capacity(); }
  SpaceSnapshot snapshot(std::uint64_t time = 0) const;
  SpaceMetrics metrics() const;
  const std::vector<SpaceSnapshot>& samples() const { return samples_; }
  const FreeExtents& free_extents() const { return extents_; }
  const Allocator& allocator() const { return *policy_; }
  std::size_t live_count() const { return live_.size(); }

 private:
  struct LiveBuffer {
    Allocation block;
    BufferRequest request;
  };
  OutOfMemory out_of_memory(const BufferRequest& request, std::uint64_t time) const;
  void record(std::uint64_t time);

  std::string space_;
  std::unique_ptr<Allocator> policy_;
  FreeExtents extents_;
  std::unordered_map<BufferId, LiveBuffer> live_;
  BufferId next_id_ = 1;
  bool keep_samples_;
  std::vector<SpaceSnapshot> samples_;

  std::uint64_t live_bytes_ = 0, in_use_bytes_ = 0, padding_bytes_ = 0;
  SpaceMetrics totals_;
  double sum_external_fragmentation_ = 0, sum_gap_square_ratio_ = 0;
  std::uint64_t events_ = 0;
};

// "1.5 MiB", "256 B": sizes in messages and tables.
std::string format_bytes(std::uint64_t bytes);
// Two sizes one sentence compares ("Used A of B"): each as format_bytes, and when the two print
// the same but differ, each followed by its exact count ("4.00 KiB (4097 B)", "4.00 KiB (4096 B)"),
// so that a sentence never reads as a size exceeding itself.
std::pair<std::string, std::string> format_bytes_apart(std::uint64_t a, std::uint64_t b);
// "4096", "64KiB", "16 MiB", "1G", "2GiB" -> bytes; throws Error naming the text.
std::uint64_t parse_bytes(const std::string& text);

}  // namespace tpuemu::alloc
