// SPDX-License-Identifier: Apache-2.0
// The "xla" placement policy: XLA's heap simulator as buffer assignment runs it
// (ChooseBestHeapAlgorithm over two GlobalDecreasingSizeBestFitHeap orders, the smaller heap kept).
// The rules, each with the part of XLA's heap_simulator.cc it follows, are in docs/hlo.md,
// "Buffer assignment"; this file is an independent implementation of them.
#include <algorithm>
#include <bit>
#include <cstdint>
#include <functional>
#include <limits>
#include <numeric>
#include <span>
#include <vector>

#include <fmt/format.h>

#include "heap_simulator.h"
#include "placement_detail.h"
#include "tpuemu/base/error.h"
#include "tpuemu/hlo/placement.h"

namespace tpuemu::hlo {
namespace {

struct Chunk {
  std::uint64_t offset = 0;
  std::uint64_t size = 0;
};

// The buffers already placed, by live range, answering "which chunks are live at some time in
// [s, e]" without scanning every placed buffer (a module of millions of instructions places
// millions). A static binary partition of the time axis in buckets of kBucket positions: a range
// is kept at the deepest node whose midpoint it straddles (a leaf when it lies in one bucket), so a
// query only walks nodes whose time span meets [s, e] and that hold something. Every range is
// known before the first is placed, so each node's entries have their slots in one flat array,
// counted once and reused by every order.
class PlacedByTime {
 public:
  PlacedByTime(const BufferSet& set, std::span<const std::uint32_t> members)
      : set_(set), members_(members), leaves_(leaves_for(set.positions)), begin_(2 * leaves_ + 1, 0),
        filled_(2 * leaves_, 0), held_below_(2 * leaves_, 0), entries_(members.size()) {
    for (const std::uint32_t i : members) {
      const LiveBuffer& b = set.buffers[i];
      if (b.bytes != 0) ++begin_[node_of(b.start, b.end, nullptr) + 1];
    }
    for (std::size_t node = 1; node < begin_.size(); ++node) begin_[node] += begin_[node - 1];
  }

  // Forgets every buffer placed, for the next order.
  void clear() {
    std::fill(filled_.begin(), filled_.end(), 0);
    std::fill(held_below_.begin(), held_below_.end(), 0);
  }

  // members[k], placed; its chunk's offset is offsets[k].
  void add(std::uint32_t k) {
    const LiveBuffer& b = set_.buffers[members_[k]];
    const std::size_t node = node_of(b.start, b.end, &held_below_);
    entries_[begin_[node] + filled_[node]++] =
        Entry{static_cast<std::int32_t>(b.start), static_cast<std::int32_t>(b.end), k};
  }

  // Appends the chunk of every placed buffer whose range meets [start, end] (both inclusive).
  void overlapping(std::int64_t start, std::int64_t end, const std::vector<std::uint64_t>& offsets,
                   std::vector<Chunk>& out) const {
    visit(1, 0, leaves_ - 1, start, end, offsets, out);
  }

 private:
  static constexpr std::int64_t kBucket = 8;
  static std::uint64_t leaves_for(std::int64_t positions) {
    if (positions > std::numeric_limits<std::int32_t>::max())
      throw Error(fmt::format("the xla heap simulation: {} positions, more than 2^31-1", positions));
    const auto buckets = static_cast<std::uint64_t>((std::max<std::int64_t>(positions, 1) + kBucket - 1) / kBucket);
    return std::bit_ceil(buckets);
  }
  struct Entry {
    std::int32_t start, end;
    std::uint32_t member;  // k: members[k] is the buffer, offsets[k] its offset
  };

  // The node that keeps [start, end]; `held` (when given) counts it on every node of the way.
  std::size_t node_of(std::int64_t start, std::int64_t end, std::vector<std::uint32_t>* held) const {
    const std::uint64_t first = static_cast<std::uint64_t>(start / kBucket), last = static_cast<std::uint64_t>(end / kBucket);
    std::size_t node = 1;
    std::uint64_t lo = 0, hi = leaves_ - 1;
    for (;;) {
      if (held != nullptr) ++(*held)[node];
      if (lo == hi) return node;
      const std::uint64_t mid = lo + (hi - lo) / 2;
      if (last <= mid) {
        node = 2 * node, hi = mid;
      } else if (first > mid) {
        node = 2 * node + 1, lo = mid + 1;
      } else {
        return node;
      }
    }
  }

  void visit(std::size_t node, std::uint64_t lo, std::uint64_t hi, std::int64_t start, std::int64_t end,
             const std::vector<std::uint64_t>& offsets, std::vector<Chunk>& out) const {
    if (held_below_[node] == 0) return;
    for (std::uint32_t e = begin_[node], stop = begin_[node] + filled_[node]; e < stop; ++e) {
      const Entry& entry = entries_[e];
      if (entry.start <= end && entry.end >= start)
        out.push_back({offsets[entry.member], set_.buffers[members_[entry.member]].bytes});
    }
    if (lo == hi) return;
    const std::uint64_t mid = lo + (hi - lo) / 2;
    if (static_cast<std::uint64_t>(start / kBucket) <= mid) visit(2 * node, lo, mid, start, end, offsets, out);
    if (static_cast<std::uint64_t>(end / kBucket) > mid) visit(2 * node + 1, mid + 1, hi, start, end, offsets, out);
  }

  const BufferSet& set_;
  std::span<const std::uint32_t> members_;
  std::uint64_t leaves_;
  std::vector<std::uint32_t> begin_;       // node n's entries: entries_[begin_[n], begin_[n] + filled_[n])
  std::vector<std::uint32_t> filled_;
  std::vector<std::uint32_t> held_below_;  // entries in the node and its subtree
  std::vector<Entry> entries_;
};

std::uint64_t align_up(std::uint64_t value, std::uint64_t alignment) {
  if (alignment <= 1) return value;
  const std::uint64_t rem = value % alignment;
  return rem == 0 ? value : value + (alignment - rem);
}

struct HeapRun {
  std::vector<std::uint64_t> offsets;  // per member
  std::uint64_t heap = 0;
};

// One GlobalDecreasingSizeBestFitHeap run: members[order[0]], members[order[1]], ..., each at the
// best-fitting free chunk among the chunks live at some time of its range (docs/hlo.md, "Buffer
// assignment").
HeapRun run_heap(const BufferSet& set, std::span<const std::uint32_t> members, const std::vector<std::uint32_t>& order,
                 std::uint64_t alignment, PlacedByTime& placed, const StopToken& stop) {
  HeapRun run;
  run.offsets.assign(members.size(), 0);
  placed.clear();
  std::vector<Chunk> used;
  std::size_t done = 0;
  for (const std::uint32_t member : order) {
    if (++done % 1024 == 0) stop.throw_if_requested("the xla heap simulation");
    const LiveBuffer& b = set.buffers[members[member]];
    if (b.bytes == 0) continue;  // XLA: a 0-byte buffer sits at offset 0 and takes no space
    used.clear();
    placed.overlapping(b.start, b.end, run.offsets, used);
    std::sort(used.begin(), used.end(), [](const Chunk& x, const Chunk& y) { return x.offset < y.offset; });
    // Free chunks: the gaps between the merged used extents, each starting at the aligned end of
    // the extent below it, then the unbounded chunk above them all. Best fit: the smallest free
    // chunk whose aligned start still holds the buffer; equal sizes go to the lower offset; the
    // unbounded chunk only when no gap holds it.
    std::uint64_t best_offset = 0, best_size = std::numeric_limits<std::uint64_t>::max();
    bool found = false;
    std::uint64_t free_start = 0;
    const auto consider = [&](std::uint64_t from, std::uint64_t to) {
      const std::uint64_t at = align_up(from, alignment);
      if (at > to || to - at < b.bytes) return;
      if (!found || to - from < best_size) {
        found = true;
        best_size = to - from;
        best_offset = at;
      }
    };
    std::size_t k = 0;
    while (k < used.size()) {
      const std::uint64_t extent_start = used[k].offset;
      std::uint64_t extent_end = used[k].offset + used[k].size;
      for (++k; k < used.size() && used[k].offset < extent_end; ++k) {
        extent_end = std::max(extent_end, used[k].offset + used[k].size);
      }
      if (extent_start > free_start) consider(free_start, extent_start);
      free_start = std::max(free_start, align_up(extent_end, alignment));
    }
    if (!found) best_offset = align_up(free_start, alignment);
    run.offsets[member] = best_offset;
    run.heap = std::max(run.heap, best_offset + b.bytes);
    placed.add(member);
  }
  return run;
}

}  // namespace

namespace detail {

HeapSimulation simulate_heap(const BufferSet& set, std::span<const std::uint32_t> members, std::uint64_t alignment,
                             const StopToken& stop) {
  const auto& buffers = set.buffers;
  // The orders, as positions in `members`: ties end on the buffer's id, its index in the
  // BufferSet, which the liveness analysis numbers in definition order as XLA numbers its values.
  std::vector<std::uint32_t> order(members.size());
  std::iota(order.begin(), order.end(), std::uint32_t{0});
  const auto bytes = [&](std::uint32_t k) { return buffers[members[k]].bytes; };
  const auto duration = [&](std::uint32_t k) { return buffers[members[k]].end - buffers[members[k]].start; };
  PlacedByTime placed(set, members);
  std::sort(order.begin(), order.end(), [&](std::uint32_t x, std::uint32_t y) {
    if (bytes(x) != bytes(y)) return bytes(x) > bytes(y);
    if (duration(x) != duration(y)) return duration(x) > duration(y);
    return x < y;
  });
  HeapRun by_space = run_heap(set, members, order, alignment, placed, stop);
  std::sort(order.begin(), order.end(), [&](std::uint32_t x, std::uint32_t y) {
    if (duration(x) != duration(y)) return duration(x) > duration(y);
    if (bytes(x) != bytes(y)) return bytes(x) > bytes(y);
    return x < y;
  });
  HeapRun by_time = run_heap(set, members, order, alignment, placed, stop);

  // ChooseBestHeapAlgorithm keeps the first of the smallest: spatial on a tie.
  const bool spatial_wins = by_space.heap <= by_time.heap;
  HeapSimulation out;
  out.detail = spatial_wins ? fmt::format("spatial order (temporal {} bytes)", by_time.heap)
                            : fmt::format("temporal order (spatial {} bytes)", by_space.heap);
  HeapRun& chosen = spatial_wins ? by_space : by_time;
  out.offsets = std::move(chosen.offsets);
  out.heap = chosen.heap;
  return out;
}

std::vector<std::uint32_t> heap_members(const BufferSet& set, const std::function<bool(const LiveBuffer&)>& wanted) {
  if (set.buffers.size() > std::numeric_limits<std::uint32_t>::max())
    throw Error(fmt::format("the xla heap simulation: {} buffers, more than 2^32-1", set.buffers.size()));
  std::vector<std::uint32_t> members;
  if (!wanted) members.reserve(set.buffers.size());
  for (std::size_t i = 0; i < set.buffers.size(); ++i)
    if (!wanted || wanted(set.buffers[i])) members.push_back(static_cast<std::uint32_t>(i));
  return members;
}

}  // namespace detail

Placement place_xla(const BufferSet& set, const PlacementOptions& options) {
  detail::check_buffers(set);
  const std::vector<std::uint32_t> all = detail::heap_members(set);
  detail::HeapSimulation heap =
      detail::simulate_heap(set, all, std::max<std::uint64_t>(options.alignment, 1), options.stop);
  Placement p;
  p.policy = "xla";
  p.detail = std::move(heap.detail);
  p.offsets = std::move(heap.offsets);
  p.heap_bytes = heap.heap;
  detail::fill_metrics(set, p);
  return p;
}

}  // namespace tpuemu::hlo
