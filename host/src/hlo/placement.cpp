// SPDX-License-Identifier: Apache-2.0
// The placement policies other than "xla" (placement_xla.cpp): tpuemu's offline planner and the
// runtime policies of the alloc layer, the metrics every policy is reported with, and the
// dispatch by name. Definitions: docs/hlo.md, "Buffer assignment".
#include "tpuemu/hlo/placement.h"

#include <algorithm>
#include <bit>
#include <chrono>
#include <limits>

#include <fmt/format.h>

#include "placement_detail.h"
#include "tpuemu/alloc/allocator.h"
#include "tpuemu/alloc/memory_space.h"
#include "tpuemu/base/error.h"
#include "tpuemu/plan/planner.h"

namespace tpuemu::hlo {

namespace detail {

void check_buffers(const BufferSet& set) {
  for (const LiveBuffer& b : set.buffers) {
    if (b.start < 0 || b.end < b.start || b.end >= set.positions) {
      throw Error(fmt::format("buffer '{}': live range [{}, {}] is not inside positions [0, {})", b.name,
                              b.start, b.end, set.positions));
    }
    if (b.unpadded > b.bytes) {
      throw Error(fmt::format("buffer '{}': {} unpadded bytes exceed its {} stored bytes", b.name,
                              b.unpadded, b.bytes));
    }
  }
}

std::uint64_t heap_of(const BufferSet& set, const std::vector<std::uint64_t>& offsets) {
  std::uint64_t heap = 0;
  for (std::size_t i = 0; i < set.buffers.size() && i < offsets.size(); ++i) {
    if (set.buffers[i].bytes != 0) heap = std::max(heap, offsets[i] + set.buffers[i].bytes);
  }
  return heap;
}

void fill_metrics(const BufferSet& set, Placement& p) {
  const PeakLive peak = peak_live(set);
  p.peak_live_bytes = peak.bytes;
  p.peak_live_unpadded = peak.unpadded;
  // Live at every position: what no placement can reuse (XProf's "indefinite" allocations).
  p.whole_program_bytes = 0;
  for (const LiveBuffer& b : set.buffers) {
    if (b.whole_program || (b.start == 0 && b.end == set.positions - 1)) p.whole_program_bytes += b.bytes;
  }
  // Padding as XProf's memory viewer counts it: at the first position where the padded live bytes
  // reach their peak, those bytes minus the same buffers' unpadded bytes.
  p.padding_bytes = peak.bytes - std::min(peak.unpadded_at_peak, peak.bytes);
  // XProf's memory viewer: (heap - peak live) / (heap - bytes live for the whole program). A failed
  // runtime placement's heap (its high-water mark) can be below the peak: no fragmentation then.
  const std::uint64_t floor = std::max(p.peak_live_bytes, p.whole_program_bytes);
  p.fragmentation = p.heap_bytes > floor && p.heap_bytes > p.whole_program_bytes
                        ? static_cast<double>(p.heap_bytes - p.peak_live_bytes) /
                              static_cast<double>(p.heap_bytes - p.whole_program_bytes)
                        : 0.0;
}

}  // namespace detail

Placement place_planner(const BufferSet& set, const PlacementOptions& options) {
  detail::check_buffers(set);
  // The planner's lifetimes are half-open [lower, upper): a buffer live through position `end`
  // is dead from end + 1. It rejects 0-byte buffers; they sit at offset 0 as in XLA.
  std::vector<plan::PlanBuffer> plan;
  std::vector<std::size_t> index;  // plan row -> buffer
  const std::uint64_t alignment = std::max<std::uint64_t>(options.alignment, 1);
  for (std::size_t i = 0; i < set.buffers.size(); ++i) {
    const LiveBuffer& b = set.buffers[i];
    if (b.bytes == 0) continue;
    plan.push_back({b.name, b.start, b.end + 1, b.bytes, alignment});
    index.push_back(i);
  }
  Placement p;
  p.policy = "planner";
  p.offsets.assign(set.buffers.size(), 0);
  if (plan.empty()) {
    detail::fill_metrics(set, p);
    return p;
  }
  const auto began = std::chrono::steady_clock::now();
  const auto remaining = [&] {
    return options.planner_timeout_seconds -
           std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  };
  const auto attempt = [&](std::uint64_t capacity, double seconds) {
    return plan::plan_buffers(plan, {.capacity = capacity, .timeout_seconds = std::max(seconds, 0.0), .stop = options.stop});
  };
  const auto take = [&](const plan::PlanResult& r) {
    if (r.offsets.size() != plan.size()) return false;
    for (std::size_t k = 0; k < plan.size(); ++k) p.offsets[index[k]] = r.offsets[k];
    return true;
  };
  std::uint64_t nodes = 0;
  std::string how;
  if (options.capacity) {
    // A capacity to meet: one run, its outcome as the planner gives it.
    const plan::PlanResult r = attempt(*options.capacity, remaining());
    nodes = r.search_nodes;
    if (r.status == plan::PlanStatus::Infeasible) p.failure = r.reason;
    p.timed_out = r.status == plan::PlanStatus::Timeout;
    if (!take(r)) p.offsets.clear();
    how = fmt::format("capacity {} bytes{}", *options.capacity, r.reason.empty() ? std::string() : fmt::format("; {}", r.reason));
  } else {
    // The smallest heap the planner reaches within its timeout (docs/hlo.md, "planner"): bisection
    // between the peak live bytes (no placement needs less) and the lowest heap placed so far,
    // each run given half the time left. Solved runs lower the top; proven-infeasible ones raise
    // the bottom, and so do runs that time out (unproven: the bisection goes on above them) and
    // the windows too large for the search (what they need is the least this planner reaches).
    // It stops when the gap is below 1/1024 of the heap. XLA's placement stands where the planner
    // found none as low; it is computed only when the planner's heap is above the peak.
    const std::uint64_t peak = peak_live_bytes(set);
    std::uint64_t lo = peak, hi = 0;  // hi: the heap of the placement taken (when `have`)
    bool have = false;
    std::uint64_t target = lo, unsearched = 0;
    int runs = 0;
    for (;;) {
      const plan::PlanResult r = attempt(target, remaining() / 2);
      ++runs;
      nodes += r.search_nodes;
      if (r.status == plan::PlanStatus::Infeasible) {
        lo = std::max(lo, target + 1);
      } else {
        // Solved, or the best placement of a run that missed its target: valid either way.
        if (r.offsets.size() == plan.size() && (!have || r.height < hi) && take(r)) {
          hi = r.height;
          have = true;
        }
        if (r.status == plan::PlanStatus::Timeout) {
          lo = std::max({lo, target + 1, r.unsearched_height});
          unsearched = std::max(unsearched, r.unsearched_buffers);
          // A search that ran out of time, unless the windows beyond the search set the height.
          if (r.height > r.unsearched_height) p.timed_out = true;
        }
      }
      if (have && (hi <= lo || hi - lo <= hi / 1024)) break;
      if (remaining() <= 0) {
        p.timed_out = true;
        break;
      }
      // Without a placement yet, the greedy height is one the next run places.
      target = have ? lo + (hi - lo) / 2 : std::max(lo, r.greedy_height);
    }
    how = fmt::format("lowest heap searched from the peak {} bytes in {} run{}", peak, runs, runs == 1 ? "" : "s");
    if (unsearched != 0) how += fmt::format("; {} buffers in windows too large for the search placed greedily", unsearched);
    if (p.timed_out) how += "; the timeout ended the search";
    // XLA gives arguments, constants and outputs allocations of their own and packs the rest, the
    // temporaries, into one block above them (assignment_xla.cpp): its heap is at least their
    // bytes plus the temporaries' peak. At or below that, its placement cannot be lower, and its
    // heap simulation (seconds on a large training step) is not needed.
    const auto xla_lower_bound = [&] {
      std::uint64_t own = 0;
      std::vector<plan::PlanBuffer> temporaries;
      for (std::size_t k = 0; k < plan.size(); ++k) {
        const LiveBuffer& b = set.buffers[index[k]];
        if (b.kind == BufferKind::Parameter || b.kind == BufferKind::Constant || b.kind == BufferKind::Output ||
            b.shares_argument) {
          own += b.bytes;
        } else {
          temporaries.push_back(plan[k]);
        }
      }
      return own + plan::peak_live_bytes(temporaries);
    };
    if (!have || (hi > peak && hi > xla_lower_bound())) {
      const Placement xla = assign_xla(set, options);
      if (!have || xla.heap_bytes < hi) {
        p.offsets = xla.offsets;  // nothing as low found: XLA's placement stands
        how += fmt::format(", XLA's placement kept ({} bytes)", xla.heap_bytes);
      }
    }
  }
  p.detail = fmt::format("{}, {} search nodes", how, nodes);
  p.heap_bytes = p.offsets.empty() ? 0 : detail::heap_of(set, p.offsets);
  detail::fill_metrics(set, p);
  return p;
}

Placement place_runtime(std::string_view policy, const BufferSet& set, const PlacementOptions& options) {
  detail::check_buffers(set);
  const std::uint64_t alignment = std::max<std::uint64_t>(options.alignment, 1);
  std::uint64_t capacity = 0;
  if (options.capacity) {
    capacity = *options.capacity;
  } else {
    // Without a capacity, one no run can exhaust: every policy here puts a block it cannot fit in
    // a hole at the lowest free address above the highest block, so its high-water mark is at
    // most the sum of the rounded sizes; twice that, rounded to a power of two, leaves the buddy
    // policy whole top-level blocks. The heap reported is the high-water mark, never this.
    const auto probe = alloc::make_allocator(policy, {.capacity = std::uint64_t{1} << 62,
                                                      .granularity = options.granularity});
    std::uint64_t sum = 0;
    for (const LiveBuffer& b : set.buffers) {
      if (b.bytes == 0) continue;
      const std::uint64_t need = probe->needed(b.bytes, alignment).size;
      if (need > (std::uint64_t{1} << 61) - sum) {
        throw Error(fmt::format("buffer '{}': the buffers need more than 2^61 bytes", b.name));
      }
      sum += need + alignment - 1;
    }
    capacity = std::bit_ceil(std::max<std::uint64_t>(2 * sum, options.granularity));
  }
  alloc::MemorySpace space("HBM",
                           alloc::make_allocator(policy, {.capacity = capacity, .granularity = options.granularity}));

  // Events in schedule order: at each position, first the buffers whose last position was the
  // previous one are freed, then the buffers starting here are allocated, both in BufferSet order.
  // A buffer never shares a position with one that died before it, as XLA's inclusive ranges say.
  std::vector<std::vector<std::size_t>> starts(static_cast<std::size_t>(std::max<std::int64_t>(set.positions, 0)));
  std::vector<std::vector<std::size_t>> ends(starts.size());
  for (std::size_t i = 0; i < set.buffers.size(); ++i) {
    const LiveBuffer& b = set.buffers[i];
    if (b.bytes == 0) continue;
    starts[static_cast<std::size_t>(b.start)].push_back(i);
    ends[static_cast<std::size_t>(b.end)].push_back(i);
  }
  Placement p;
  p.policy = std::string(policy);
  p.offsets.assign(set.buffers.size(), 0);
  std::vector<alloc::BufferId> ids(set.buffers.size(), 0);
  for (std::size_t at = 0; at < starts.size() && !p.failure; ++at) {
    if (at % 4096 == 0) options.stop.throw_if_requested(fmt::format("the {} placement", policy));
    if (at > 0) {
      for (const std::size_t i : ends[at - 1]) space.free(ids[i], at);
    }
    for (const std::size_t i : starts[at]) {
      const LiveBuffer& b = set.buffers[i];
      std::optional<alloc::OutOfMemory> oom;
      const auto placed = space.try_allocate(
          {.size = b.bytes, .alignment = alignment, .owner = b.name, .padding = b.bytes - b.unpadded}, at, &oom);
      if (!placed) {
        p.failure = oom->what();
        break;
      }
      ids[i] = placed->id;
      p.offsets[i] = placed->offset;
    }
  }
  const alloc::SpaceMetrics m = space.metrics();
  p.heap_bytes = m.peak_footprint_bytes;
  if (p.failure) p.offsets.clear();
  p.detail = fmt::format("capacity {} bytes, peak reserved {} bytes", capacity, m.peak_in_use_bytes);
  detail::fill_metrics(set, p);
  return p;
}

std::vector<std::string> placement_policy_names() {
  std::vector<std::string> names{"xla", "planner"};
  for (const std::string& name : alloc::allocator_names()) names.push_back(name);
  return names;
}

Placement place(std::string_view policy, const BufferSet& set, const PlacementOptions& options) {
  if (policy == "xla") return assign_xla(set, options);
  if (policy == "planner") return place_planner(set, options);
  const auto& runtime = alloc::allocator_names();
  if (std::find(runtime.begin(), runtime.end(), policy) == runtime.end()) {
    const auto names = placement_policy_names();
    throw Error(fmt::format("unknown allocator '{}' (known: {}, all)", policy, fmt::join(names, ", ")));
  }
  return place_runtime(policy, set, options);
}

}  // namespace tpuemu::hlo
