// SPDX-License-Identifier: Apache-2.0
// The "xla" placement policy: XLA's heap simulator as buffer assignment runs it
// (ChooseBestHeapAlgorithm over two GlobalDecreasingSizeBestFitHeap orders, the smaller heap kept).
// The rules, each with the part of XLA's heap_simulator.cc it follows, are in docs/hlo.md,
// "Buffer assignment"; this file is an independent implementation of them.
#include <algorithm>
#include <bit>
#include <cstdint>
#include <limits>
#include <numeric>
#include <vector>

#include <fmt/format.h>

#include "placement_detail.h"
#include "tpuemu/hlo/placement.h"

namespace tpuemu::hlo {
namespace {

struct Chunk {
  std::uint64_t offset = 0;
  std::uint64_t size = 0;
};

// The chunks already placed, by live range, answering "which chunks are live at some time in
// [s, e]" without scanning every placed buffer (a 40 000-instruction module places tens of
// thousands). A static binary partition of the time axis: a range is kept at the deepest node whose
// midpoint it straddles (a leaf when it is one position), so a query only walks nodes whose time
// span meets [s, e] and that hold something.
class PlacedByTime {
 public:
  explicit PlacedByTime(std::int64_t positions)
      : leaves_(std::bit_ceil(static_cast<std::uint64_t>(std::max<std::int64_t>(positions, 1)))),
        nodes_(2 * leaves_), held_below_(2 * leaves_, 0) {}

  void add(std::int64_t start, std::int64_t end, Chunk chunk) {
    std::size_t node = 1;
    std::int64_t lo = 0, hi = static_cast<std::int64_t>(leaves_) - 1;
    for (;;) {
      ++held_below_[node];
      if (lo == hi) break;
      const std::int64_t mid = lo + (hi - lo) / 2;
      if (end <= mid) {
        node = 2 * node, hi = mid;
      } else if (start > mid) {
        node = 2 * node + 1, lo = mid + 1;
      } else {
        break;
      }
    }
    nodes_[node].push_back(Entry{start, end, chunk});
  }

  // Appends every chunk whose range meets [start, end] (both inclusive).
  void overlapping(std::int64_t start, std::int64_t end, std::vector<Chunk>& out) const {
    visit(1, 0, static_cast<std::int64_t>(leaves_) - 1, start, end, out);
  }

 private:
  struct Entry {
    std::int64_t start, end;
    Chunk chunk;
  };

  void visit(std::size_t node, std::int64_t lo, std::int64_t hi, std::int64_t start, std::int64_t end,
             std::vector<Chunk>& out) const {
    if (held_below_[node] == 0) return;
    for (const Entry& e : nodes_[node]) {
      if (e.start <= end && e.end >= start) out.push_back(e.chunk);
    }
    if (lo == hi) return;
    const std::int64_t mid = lo + (hi - lo) / 2;
    if (start <= mid) visit(2 * node, lo, mid, start, end, out);
    if (end > mid) visit(2 * node + 1, mid + 1, hi, start, end, out);
  }

  std::size_t leaves_;
  std::vector<std::vector<Entry>> nodes_;
  std::vector<std::uint64_t> held_below_;  // entries in the node and its subtree
};

std::uint64_t align_up(std::uint64_t value, std::uint64_t alignment) {
  if (alignment <= 1) return value;
  const std::uint64_t rem = value % alignment;
  return rem == 0 ? value : value + (alignment - rem);
}

struct HeapRun {
  std::vector<std::uint64_t> offsets;
  std::uint64_t heap = 0;
};

// One GlobalDecreasingSizeBestFitHeap run: buffers in `order`, each at the best-fitting free chunk
// among the chunks live at some time of its range (docs/hlo.md, "Buffer assignment").
HeapRun run_heap(const BufferSet& set, const std::vector<std::size_t>& order, std::uint64_t alignment,
                 const StopToken& stop) {
  HeapRun run;
  run.offsets.assign(set.buffers.size(), 0);
  PlacedByTime placed(set.positions);
  std::vector<Chunk> used;
  std::size_t done = 0;
  for (const std::size_t i : order) {
    if (++done % 1024 == 0) stop.throw_if_requested("the xla heap simulation");
    const LiveBuffer& b = set.buffers[i];
    if (b.bytes == 0) continue;  // XLA: a 0-byte buffer sits at offset 0 and takes no space
    used.clear();
    placed.overlapping(b.start, b.end, used);
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
    run.offsets[i] = best_offset;
    run.heap = std::max(run.heap, best_offset + b.bytes);
    placed.add(b.start, b.end, Chunk{best_offset, b.bytes});
  }
  return run;
}

}  // namespace

Placement place_xla(const BufferSet& set, const PlacementOptions& options) {
  detail::check_buffers(set);
  const auto& buffers = set.buffers;
  std::vector<std::size_t> spatial(buffers.size());
  std::iota(spatial.begin(), spatial.end(), std::size_t{0});
  std::vector<std::size_t> temporal = spatial;
  // Ties end on the buffer's id: its index in the BufferSet, which the liveness analysis numbers
  // in definition order as XLA numbers its values.
  const auto duration = [&](std::size_t i) { return buffers[i].end - buffers[i].start; };
  std::sort(spatial.begin(), spatial.end(), [&](std::size_t x, std::size_t y) {
    if (buffers[x].bytes != buffers[y].bytes) return buffers[x].bytes > buffers[y].bytes;
    if (duration(x) != duration(y)) return duration(x) > duration(y);
    return x < y;
  });
  std::sort(temporal.begin(), temporal.end(), [&](std::size_t x, std::size_t y) {
    if (duration(x) != duration(y)) return duration(x) > duration(y);
    if (buffers[x].bytes != buffers[y].bytes) return buffers[x].bytes > buffers[y].bytes;
    return x < y;
  });
  const std::uint64_t alignment = std::max<std::uint64_t>(options.alignment, 1);
  HeapRun by_space = run_heap(set, spatial, alignment, options.stop);
  HeapRun by_time = run_heap(set, temporal, alignment, options.stop);

  Placement p;
  p.policy = "xla";
  // ChooseBestHeapAlgorithm keeps the first of the smallest: spatial on a tie.
  const bool spatial_wins = by_space.heap <= by_time.heap;
  p.detail = spatial_wins ? fmt::format("spatial order (temporal {} bytes)", by_time.heap)
                          : fmt::format("temporal order (spatial {} bytes)", by_space.heap);
  HeapRun& chosen = spatial_wins ? by_space : by_time;
  p.offsets = std::move(chosen.offsets);
  p.heap_bytes = chosen.heap;
  detail::fill_metrics(set, p);
  return p;
}

}  // namespace tpuemu::hlo
