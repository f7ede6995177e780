// SPDX-License-Identifier: Apache-2.0
// Offline memory planner (docs/allocation.md): peak-live lower bound, greedy placements (XLA's
// global decreasing-size best fit on small problems, first fit and best fit in lifetime order
// forward and backward in time; the lowest wins per time-connected group), then an exact
// MiniMalloc-style search (planner_search.cpp) on every window (stacks and time-connected groups)
// still too high that the search could finish within the timeout.
#include "tpuemu/plan/planner.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iterator>
#include <limits>
#include <map>
#include <numeric>
#include <optional>
#include <queue>
#include <set>
#include <string>
#include <tuple>
#include <utility>

#include <fmt/format.h>

#include "planner_search.h"
#include "tpuemu/plan/peak_sweep.h"
#include "tpuemu/base/error.h"

namespace tpuemu::plan {
namespace {

using detail::add_sat;
using detail::align_up;
using detail::exceeds;
using detail::Wide;

void validate(std::span<const PlanBuffer> buffers) {
  for (const auto& b : buffers) {
    const std::string place = fmt::format("buffer '{}'", b.id);
    if (b.size == 0) throw Error(place, "size is zero");
    if (b.upper <= b.lower) throw Error(place, fmt::format("upper {} <= lower {}", b.upper, b.lower));
    if (b.alignment == 0 || (b.alignment & (b.alignment - 1)) != 0) {
      throw Error(place, fmt::format("alignment {} is not a power of two", b.alignment));
    }
  }
}

struct Peak {
  std::uint64_t bytes = 0;
  std::int64_t time = 0;
};

// Lifetimes are half-open [lower, upper) at any int64 times: ranked into dense positions (each
// distinct lower or upper one position), a buffer covers the positions rank(lower) ..
// rank(upper) - 1, which the one sweep (peak_sweep.h) counts. A peak beyond 2^64 - 1 is reported
// as 2^64 - 1, which no capacity exceeds (so it is infeasible).
Peak peak_of(std::span<const PlanBuffer> buffers) {
  std::vector<std::int64_t> times;
  times.reserve(2 * buffers.size());
  for (const auto& b : buffers) {
    times.push_back(b.lower);
    times.push_back(b.upper);
  }
  std::sort(times.begin(), times.end());
  times.erase(std::unique(times.begin(), times.end()), times.end());
  const auto rank = [&](std::int64_t t) {
    return static_cast<std::int64_t>(std::lower_bound(times.begin(), times.end(), t) - times.begin());
  };
  const Sweep s = sweep_live(
      static_cast<std::int64_t>(times.size()),
      [&](const auto& visit) {
        for (const auto& b : buffers) visit(rank(b.lower), rank(b.upper) - 1, b.size);
      },
      -1);
  return {.bytes = saturated(s.highest), .time = times.empty() ? 0 : times[static_cast<std::size_t>(s.at)]};
}

// The top of a placement in 128 bits: an offset saturated at kBeyond (an alignment or a top past
// 2^64 - 1) gives a top above every capacity, even 2^64 - 1. height_of() reports it saturated.
template <typename Indices>
Wide top_of(std::span<const PlanBuffer> buffers, std::span<const std::uint64_t> offsets, const Indices& indices) {
  Wide h = 0;
  for (const std::size_t i : indices) h = std::max(h, Wide{offsets[i]} + buffers[i].size);
  return h;
}
std::vector<std::size_t> all_indices(std::size_t n) {
  std::vector<std::size_t> all(n);
  std::iota(all.begin(), all.end(), std::size_t{0});
  return all;
}
Wide top_of(std::span<const PlanBuffer> buffers, std::span<const std::uint64_t> offsets) {
  return top_of(buffers, offsets, all_indices(buffers.size()));
}
std::uint64_t height_of(std::span<const PlanBuffer> buffers, std::span<const std::uint64_t> offsets) {
  return detail::saturate(top_of(buffers, offsets));
}

// Indices 0..n-1 ordered by `before`.
template <typename Less>
std::vector<std::size_t> sorted_indices(std::size_t n, Less before) {
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(), before);
  return order;
}

bool overlap_in_time(const PlanBuffer& a, const PlanBuffer& b) {
  return a.lower < b.upper && b.lower < a.upper;
}

// XLA heap simulator's global decreasing-size best fit: biggest first (ties: longest lifetime,
// then id), each into the smallest gap between the already placed buffers it overlaps in time
// that holds it, else on top of them. Each buffer is compared with every placed one: 4 096
// buffers take some 20 ms, 8 192 of a training step's nested window 0.4 s, its 26 000 about 5 s.
// So it runs on problems and windows of at most kBestFitLimit buffers; its first kGreedyAlways
// buffers always run (a problem this small gets the same placement whatever its timeout), then the
// clock is read every 256 buffers.
constexpr std::size_t kGreedyAlways = 4096;
constexpr std::size_t kBestFitLimit = 8192;

// Empty when the deadline passes first.
std::optional<std::vector<std::uint64_t>> greedy(std::span<const PlanBuffer> buffers,
                                                 std::chrono::steady_clock::time_point deadline,
                                                 const StopToken& stop) {
  const std::size_t n = buffers.size();
  const auto order = sorted_indices(n, [&](std::size_t x, std::size_t y) {
    const auto& a = buffers[x];
    const auto& b = buffers[y];
    if (a.size != b.size) return a.size > b.size;
    if (a.upper - a.lower != b.upper - b.lower) return a.upper - a.lower > b.upper - b.lower;
    if (a.id != b.id) return a.id < b.id;
    return x < y;
  });
  std::vector<std::uint64_t> offsets(n, 0);
  std::vector<std::size_t> placed;
  placed.reserve(n);
  std::vector<std::pair<std::uint64_t, std::uint64_t>> busy;  // [offset, end) of overlapping buffers
  for (const std::size_t i : order) {
    if (placed.size() % 256 == 255) stop.throw_if_requested("the planner's greedy pass");
    if (placed.size() >= kGreedyAlways && placed.size() % 256 == 0 && std::chrono::steady_clock::now() > deadline) {
      return std::nullopt;
    }
    const auto& b = buffers[i];
    busy.clear();
    for (const std::size_t j : placed) {
      if (overlap_in_time(b, buffers[j])) busy.emplace_back(offsets[j], add_sat(offsets[j], buffers[j].size));
    }
    std::sort(busy.begin(), busy.end());
    std::uint64_t cursor = 0;  // end of the busy space so far
    std::uint64_t best = 0, best_gap = std::numeric_limits<std::uint64_t>::max();
    bool fits = false;
    for (const auto& [start, end] : busy) {
      if (start > cursor) {
        const std::uint64_t at = align_up(cursor, b.alignment);
        if (!exceeds(at, b.size, start) && start - cursor < best_gap) {
          best_gap = start - cursor;
          best = at;
          fits = true;
        }
      }
      cursor = std::max(cursor, end);
    }
    offsets[i] = fits ? best : align_up(cursor, b.alignment);
    placed.push_back(i);
  }
  return offsets;
}

// The free address space of an online allocator with no capacity: the maximal free gaps between
// the live buffers, by offset and (bounded ones) by size, and the unbounded gap above them all
// (its end is kBeyond). An offset saturated at kBeyond is beyond every capacity and takes no space.
class FreeSpace {
 public:
  FreeSpace() { gaps_.emplace(0, detail::kBeyond); }

  // The lowest aligned offset where `size` bytes fit.
  std::uint64_t first_fit(std::uint64_t size, std::uint64_t alignment) const {
    for (const auto& [start, end] : gaps_) {
      if (const auto at = fit(start, end, size, alignment)) return *at;
    }
    return detail::kBeyond;
  }
  // In the smallest bounded gap that holds the aligned buffer (ties: the lowest), else above
  // everything.
  std::uint64_t best_fit(std::uint64_t size, std::uint64_t alignment) const {
    for (auto it = by_size_.lower_bound({size, 0}); it != by_size_.end(); ++it) {
      if (const auto at = fit(it->second, it->second + it->first, size, alignment)) return *at;
    }
    if (gaps_.empty()) return detail::kBeyond;
    const auto& [start, end] = *gaps_.rbegin();
    return end == detail::kBeyond ? align_up(start, alignment) : detail::kBeyond;
  }
  void take(std::uint64_t offset, std::uint64_t size) {
    if (offset == detail::kBeyond) return;
    const auto it = std::prev(gaps_.upper_bound(offset));
    const auto [start, end] = *it;
    erase(it);
    if (start < offset) insert(start, offset);
    const std::uint64_t top = add_sat(offset, size);
    if (top < end) insert(top, end);
  }
  void give_back(std::uint64_t offset, std::uint64_t size) {
    if (offset == detail::kBeyond) return;
    std::uint64_t start = offset, end = add_sat(offset, size);
    auto next = gaps_.lower_bound(start);
    if (next != gaps_.end() && next->first == end) {
      end = next->second;
      next = erase(next);
    }
    if (next != gaps_.begin()) {
      const auto prev = std::prev(next);
      if (prev->second == start) {
        start = prev->first;
        erase(prev);
      }
    }
    insert(start, end);
  }

 private:
  static std::optional<std::uint64_t> fit(std::uint64_t start, std::uint64_t end, std::uint64_t size,
                                           std::uint64_t alignment) {
    const std::uint64_t at = align_up(start, alignment);
    if (end == detail::kBeyond) return at;  // the unbounded gap holds anything
    if (exceeds(at, size, end)) return std::nullopt;
    return at;
  }
  void insert(std::uint64_t start, std::uint64_t end) {
    gaps_.emplace(start, end);
    if (end != detail::kBeyond) by_size_.emplace(end - start, start);
  }
  std::map<std::uint64_t, std::uint64_t>::iterator erase(std::map<std::uint64_t, std::uint64_t>::iterator it) {
    if (it->second != detail::kBeyond) by_size_.erase({it->second - it->first, it->first});
    return gaps_.erase(it);
  }

  std::map<std::uint64_t, std::uint64_t> gaps_;                 // start -> end
  std::set<std::pair<std::uint64_t, std::uint64_t>> by_size_;  // (size, start) of bounded gaps
};

enum class Fit { First, Best };
enum class Direction { Forward, Backward };

// An online allocator with the lifetimes known: buffers by start time (ties: larger first, then the
// longer-lived first), each placed among the already placed buffers that overlap it in time, at
// the lowest aligned offset free (first fit) or in the smallest free gap that holds it (best fit).
// This is what a first-fit or best-fit allocator would do on the trace (an allocation never
// moves), so the planner never needs more than those online policies. Backward runs the same on
// the time-reversed problem (buffers by end time, latest first): where lifetimes nest, as a
// training step's activations do, the two directions meet different orders of births. n log n
// plus, per buffer, the free gaps scanned (first fit) or the gaps too small for the alignment
// (best fit).
std::vector<std::uint64_t> fit_by_lifetime(std::span<const PlanBuffer> buffers, Fit how, Direction direction) {
  const bool forward = direction == Direction::Forward;
  // Times as the pass sees them: birth and death, in the pass's order (the negation of an int64
  // is avoided: backward compares the original times the other way round).
  const auto born_before = [&](std::int64_t x, std::int64_t y) { return forward ? x < y : x > y; };
  const auto birth = [&](const PlanBuffer& b) { return forward ? b.lower : b.upper; };
  const auto death = [&](const PlanBuffer& b) { return forward ? b.upper : b.lower; };
  const std::size_t n = buffers.size();
  const auto order = sorted_indices(n, [&](std::size_t x, std::size_t y) {
    const auto& a = buffers[x];
    const auto& b = buffers[y];
    if (birth(a) != birth(b)) return born_before(birth(a), birth(b));
    if (a.size != b.size) return a.size > b.size;
    if (death(a) != death(b)) return born_before(death(b), death(a));
    return x < y;
  });
  std::vector<std::uint64_t> offsets(n, 0);
  FreeSpace space;
  // Placed buffers by death, the first to die on top: a buffer is freed once it no longer
  // overlaps the one being placed (lifetimes are half-open).
  const auto dies_later = [&](std::size_t x, std::size_t y) { return born_before(death(buffers[y]), death(buffers[x])); };
  std::priority_queue<std::size_t, std::vector<std::size_t>, decltype(dies_later)> live(dies_later);
  for (const std::size_t i : order) {
    const auto& b = buffers[i];
    while (!live.empty() && !born_before(birth(b), death(buffers[live.top()]))) {
      const std::size_t j = live.top();
      live.pop();
      space.give_back(offsets[j], buffers[j].size);
    }
    offsets[i] = how == Fit::First ? space.first_fit(b.size, b.alignment) : space.best_fit(b.size, b.alignment);
    space.take(offsets[i], b.size);
    live.push(i);
  }
  return offsets;
}

// Groups of `members` (indices into buffers) connected through overlapping lifetimes: independent
// sub-problems.
std::vector<std::vector<std::size_t>> time_groups(std::span<const PlanBuffer> buffers,
                                                  std::vector<std::size_t> members) {
  std::sort(members.begin(), members.end(), [&](std::size_t x, std::size_t y) {
    return std::pair(buffers[x].lower, x) < std::pair(buffers[y].lower, y);
  });
  std::vector<std::vector<std::size_t>> groups;
  std::int64_t end = 0;
  for (const std::size_t i : members) {
    if (groups.empty() || buffers[i].lower >= end) {
      groups.emplace_back();
      end = buffers[i].upper;
    }
    groups.back().push_back(i);
    end = std::max(end, buffers[i].upper);
  }
  return groups;
}
std::vector<std::vector<std::size_t>> time_groups(std::span<const PlanBuffer> buffers) {
  return time_groups(buffers, all_indices(buffers.size()));
}

// Windows (docs/allocation.md, "Windows"): in a time-connected group, a buffer live over the
// group's whole span overlaps every other buffer of the group in time, so in any placement its
// bytes are apart from all of theirs; moving such buffers to the bottom of the group, stacked,
// and every other buffer up by the spanning bytes that were above it keeps a placement valid and
// no higher. So the spanning buffers are stacked at the group's base and the rest, which then
// falls apart into smaller groups, is planned above the stack, recursively. On XLA programs the
// parameters and weights live throughout and connect every step; without them the problem is
// many small windows, each searched on its own.
struct Window {
  std::vector<std::size_t> members;
  std::uint64_t base = 0;
};
struct Decomposition {
  std::vector<std::pair<std::size_t, std::uint64_t>> stacked;  // buffer, offset
  std::vector<Window> windows;
};

// Each level costs a sort of its group; a nest of buffers each spanning one step more than the
// next would make that quadratic, so beyond kDecomposeWork buffer visits per buffer the groups
// left stay whole windows.
constexpr std::size_t kDecomposeWork = 32;

// A group is split only when its spanning sizes are all multiples of every alignment, so that
// the windows' bases need no rounding and a window proven infeasible proves the whole infeasible.
Decomposition decompose(std::span<const PlanBuffer> buffers) {
  std::uint64_t max_alignment = 1;
  for (const auto& b : buffers) max_alignment = std::max(max_alignment, b.alignment);
  Decomposition d;
  std::size_t budget = kDecomposeWork * std::max<std::size_t>(buffers.size(), 1);
  std::vector<Window> work;
  for (auto& group : time_groups(buffers)) work.push_back({std::move(group), 0});
  while (!work.empty()) {
    Window w = std::move(work.back());
    work.pop_back();
    std::int64_t lower = std::numeric_limits<std::int64_t>::max(), upper = std::numeric_limits<std::int64_t>::min();
    for (const std::size_t i : w.members) {
      lower = std::min(lower, buffers[i].lower);
      upper = std::max(upper, buffers[i].upper);
    }
    std::vector<std::size_t> spanning, rest;
    bool exact = true;
    for (const std::size_t i : w.members) {
      const auto& b = buffers[i];
      if (b.lower == lower && b.upper == upper) {
        spanning.push_back(i);
        exact = exact && b.size % max_alignment == 0;
      } else {
        rest.push_back(i);
      }
    }
    if (spanning.empty() || rest.empty() || !exact || budget < w.members.size()) {
      d.windows.push_back(std::move(w));  // stays whole
      continue;
    }
    budget -= w.members.size();
    std::uint64_t top = w.base;
    for (const std::size_t i : spanning) {
      d.stacked.emplace_back(i, top);
      top = add_sat(top, buffers[i].size);
    }
    for (auto& group : time_groups(buffers, std::move(rest))) work.push_back({std::move(group), top});
  }
  return d;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

std::uint64_t peak_live_bytes(std::span<const PlanBuffer> buffers) { return peak_of(buffers).bytes; }

std::optional<std::string> check_placement(std::span<const PlanBuffer> buffers,
                                           std::span<const std::uint64_t> offsets,
                                           std::uint64_t capacity) {
  if (offsets.size() != buffers.size()) {
    return fmt::format("{} offsets for {} buffers", offsets.size(), buffers.size());
  }
  for (std::size_t i = 0; i < buffers.size(); ++i) {
    const auto& b = buffers[i];
    if (b.alignment != 0 && offsets[i] % b.alignment != 0) {
      return fmt::format("buffer '{}' at offset {} is not aligned to {}", b.id, offsets[i], b.alignment);
    }
    if (offsets[i] > capacity || b.size > capacity - offsets[i]) {
      return fmt::format("buffer '{}' at offset {} of size {} ends beyond the capacity {}", b.id,
                         offsets[i], b.size, capacity);
    }
  }
  // Sweep over time with the live buffers ordered by offset: a new buffer can only collide with
  // its neighbours in that order (the live ones never overlap each other).
  std::vector<std::tuple<std::int64_t, bool, std::size_t>> events;  // ends first at equal times
  events.reserve(2 * buffers.size());
  for (std::size_t i = 0; i < buffers.size(); ++i) {
    events.emplace_back(buffers[i].lower, true, i);
    events.emplace_back(buffers[i].upper, false, i);
  }
  std::sort(events.begin(), events.end());
  std::map<std::uint64_t, std::size_t> live;  // offset -> buffer
  const auto describe = [&](std::size_t i) {
    const auto& b = buffers[i];
    return fmt::format("'{}' (time [{}, {}), bytes [{}, {}))", b.id, b.lower, b.upper, offsets[i],
                       offsets[i] + b.size);
  };
  for (const auto& [time, start, i] : events) {
    if (!start) {
      live.erase(offsets[i]);
      continue;
    }
    const std::uint64_t lo = offsets[i], hi = offsets[i] + buffers[i].size;
    auto next = live.lower_bound(lo);
    if (next != live.end() && next->first < hi) {
      return fmt::format("buffers {} and {} overlap", describe(next->second), describe(i));
    }
    if (next != live.begin()) {
      const auto prev = std::prev(next);
      if (prev->first + buffers[prev->second].size > lo) {
        return fmt::format("buffers {} and {} overlap", describe(prev->second), describe(i));
      }
    }
    live.emplace(lo, i);
  }
  return std::nullopt;
}

namespace {

// Per group of `groups`, `other`'s offsets where its placement of the group is lower.
void keep_lower_per_group(std::span<const PlanBuffer> buffers, const std::vector<std::vector<std::size_t>>& groups,
                          std::vector<std::uint64_t>& offsets, const std::vector<std::uint64_t>& other) {
  for (const auto& group : groups) {
    if (top_of(buffers, other, group) < top_of(buffers, offsets, group)) {
      for (const std::size_t i : group) offsets[i] = other[i];
    }
  }
}

// The greedy placement: up to five greedy passes, and per time-connected group (independent: no
// pass compares buffers that don't overlap in time) the lowest. First fit and best fit in lifetime
// order, forward and backward in time, take n log n and always run. On at most `best_fit_limit`
// buffers the size-ordered best fit runs first (while the timeout allows) and stands alone when it
// fits the capacity.
std::vector<std::uint64_t> greedy_placement(std::span<const PlanBuffer> buffers,
                                            const std::vector<std::vector<std::size_t>>& groups,
                                            std::uint64_t capacity, std::size_t best_fit_limit,
                                            std::chrono::steady_clock::time_point deadline, const StopToken& stop) {
  std::optional<std::vector<std::uint64_t>> by_size;
  if (buffers.size() <= best_fit_limit) {
    by_size = greedy(buffers, deadline, stop);
    if (by_size && top_of(buffers, *by_size) <= capacity) return std::move(*by_size);
  }
  stop.throw_if_requested("the planner's greedy pass");
  std::vector<std::uint64_t> online = fit_by_lifetime(buffers, Fit::First, Direction::Forward);
  keep_lower_per_group(buffers, groups, online, fit_by_lifetime(buffers, Fit::Best, Direction::Forward));
  keep_lower_per_group(buffers, groups, online, fit_by_lifetime(buffers, Fit::First, Direction::Backward));
  keep_lower_per_group(buffers, groups, online, fit_by_lifetime(buffers, Fit::Best, Direction::Backward));
  if (!by_size) return online;
  keep_lower_per_group(buffers, groups, *by_size, online);
  return std::move(*by_size);
}

// The exact search places every buffer of a window at least once, and each of its nodes looks at
// every (buffer, section) pair of the window (the look-ahead bounds): measured on a training
// step's nested windows (bench_hlo's BM_TrainingStepHlo) at 2 to 3 ns a pair on windows of 1 000
// to 2 000 buffers and 6 to 7 ns at 3 000 to 26 000. So a window where buffers x pairs x 2 ns
// exceeds the timeout cannot be searched to its end in time: it is not searched, its greedy
// placement stands. Without this an attempt spent its whole timeout on such a window (the
// training step's window of 26 000 buffers: seconds per node).
constexpr double kSearchSecondsPerPair = 2e-9;

// The least time a search of `members` could take, by the measure above.
double least_search_seconds(std::span<const PlanBuffer> buffers, const std::vector<std::size_t>& members) {
  std::vector<std::int64_t> ends;
  ends.reserve(2 * members.size());
  for (const std::size_t i : members) {
    ends.push_back(buffers[i].lower);
    ends.push_back(buffers[i].upper);
  }
  std::sort(ends.begin(), ends.end());
  ends.erase(std::unique(ends.begin(), ends.end()), ends.end());
  const auto section = [&](std::int64_t t) { return std::lower_bound(ends.begin(), ends.end(), t) - ends.begin(); };
  double pairs = 0;
  for (const std::size_t i : members) pairs += static_cast<double>(section(buffers[i].upper) - section(buffers[i].lower));
  return static_cast<double>(members.size()) * pairs * kSearchSecondsPerPair;
}

PlanResult plan_in_canonical_order(std::span<const PlanBuffer> buffers, const PlanOptions& options,
                                   std::chrono::steady_clock::time_point start) {
  PlanResult r;
  const Peak peak = peak_of(buffers);
  r.peak_live_bytes = peak.bytes;
  const std::uint64_t capacity = options.capacity;
  if (peak.bytes > capacity || peak.bytes == UINT64_MAX) {
    r.status = PlanStatus::Infeasible;
    r.reason = peak.bytes == UINT64_MAX
                   ? fmt::format("peak live bytes at time {} exceed 2^64 - 1 and so the capacity {}", peak.time, capacity)
                   : fmt::format("peak live bytes {} at time {} exceed the capacity {}", peak.bytes, peak.time, capacity);
    r.seconds = seconds_since(start);
    return r;
  }

  // The timeout bounds everything from here: the size-ordered greedy pass as well as the search.
  const double timeout = std::clamp(std::isnan(options.timeout_seconds) ? 0.0 : options.timeout_seconds,
                                    0.0, 1e7);
  const auto deadline =
      start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(timeout));

  // Beyond kGreedyAlways buffers the size-ordered best fit runs per window (below), where it compares
  // far fewer pairs.
  r.offsets = greedy_placement(buffers, time_groups(buffers), capacity, kGreedyAlways, deadline, options.stop);
  r.greedy_height = height_of(buffers, r.offsets);
  r.height = r.greedy_height;
  const auto finish_solved = [&] {
    if (const auto problem = check_placement(buffers, r.offsets, capacity)) {
      throw Error(fmt::format("planner bug: invalid placement: {}", *problem));
    }
    r.status = PlanStatus::Solved;
    r.height = height_of(buffers, r.offsets);
    r.seconds = seconds_since(start);
    return r;
  };
  if (top_of(buffers, r.offsets) <= capacity) {
    r.solved_by_greedy = true;
    return finish_solved();
  }

  // Exact search, window by window (decompose()). Without stacks the windows are the
  // time-connected groups, and a group the greedy pass already fits keeps its placement (greedy
  // only ever compares buffers that overlap in time, so it is the same per group). With stacks
  // every window is placed above its base: by its own greedy pass where that fits, else searched.
  bool timed_out = timeout == 0;  // no time for a search: the greedy placement is the best effort
  const std::vector<std::uint64_t> greedy_offsets = r.offsets;
  const Decomposition d = decompose(buffers);
  const bool stacks = !d.stacked.empty();
  for (const auto& [i, offset] : d.stacked) r.offsets[i] = offset;
  std::vector<PlanBuffer> window_buffers;
  std::vector<detail::SearchBuffer> search_buffers;
  // The window's own greedy placement above its base (first fit alone when `quick`); its top.
  const auto place_greedily = [&](const Window& w, std::uint64_t room, bool quick) {
    window_buffers.clear();
    for (const std::size_t i : w.members) window_buffers.push_back(buffers[i]);
    const std::vector<std::uint64_t> local =
        quick ? fit_by_lifetime(window_buffers, Fit::First, Direction::Forward)
              : greedy_placement(window_buffers, {all_indices(window_buffers.size())}, room, kBestFitLimit,
                                 deadline, options.stop);
    for (std::size_t k = 0; k < w.members.size(); ++k) r.offsets[w.members[k]] = add_sat(w.base, local[k]);
    return Wide{w.base} + top_of(window_buffers, local);
  };
  const auto infeasible = [&](std::string reason) {
    r.status = PlanStatus::Infeasible;
    r.reason = std::move(reason);
    r.offsets.clear();
    r.height = 0;
    r.seconds = seconds_since(start);
    return r;
  };
  // Windows too large for the search keep their greedy placement. What they need bounds what this
  // planner reaches at any capacity, so the other windows are searched with that much room.
  // A window gets a greedy pass of its own above its base, except a group of a small problem without
  // stacks: the whole greedy pass was the same on it.
  const bool own_greedy = stacks || buffers.size() > kGreedyAlways;
  Wide unsearched_top = 0;
  std::vector<bool> searchable(d.windows.size(), true);
  for (std::size_t k = 0; k < d.windows.size() && !timed_out; ++k) {
    const Window& w = d.windows[k];
    if (w.base > capacity) break;  // infeasible: reported below
    if (least_search_seconds(buffers, w.members) <= timeout) continue;
    searchable[k] = false;
    r.unsearched_buffers += w.members.size();
    unsearched_top = std::max(unsearched_top, own_greedy ? place_greedily(w, capacity - w.base, false)
                                                         : top_of(buffers, r.offsets, w.members));
  }
  r.unsearched_height = detail::saturate(unsearched_top);
  const std::uint64_t reach = std::max(capacity, r.unsearched_height);
  std::size_t next = 0;
  for (; next < d.windows.size() && !timed_out; ++next) {
    const Window& w = d.windows[next];
    if (w.base > capacity) {
      return infeasible(fmt::format("the buffers live throughout their time span need {} bytes of the capacity {}",
                                    w.base, capacity));
    }
    if (!searchable[next]) continue;
    if (!stacks && top_of(buffers, r.offsets, w.members) <= reach) continue;
    const std::uint64_t room = reach - w.base;
    if (own_greedy && place_greedily(w, room, false) <= reach) continue;
    search_buffers.clear();
    for (const std::size_t i : w.members) {
      const auto& b = buffers[i];
      search_buffers.push_back({b.lower, b.upper, b.size, b.alignment});
    }
    const detail::SearchResult s = detail::search_placement(search_buffers, room, deadline,
                                                            {.supported_raise = options.supported_raise,
                                                             .dominance = options.dominance,
                                                             .staircase = options.staircase,
                                                             .portfolio = options.portfolio},
                                                            options.stop);
    r.search_nodes += s.nodes;
    // No placement within reach - base >= capacity - base: a proof for the capacity too.
    if (s.outcome == detail::SearchOutcome::Exhausted) return infeasible("exhaustive search found no placement");
    if (s.outcome == detail::SearchOutcome::Timeout) {
      timed_out = true;
      break;
    }
    for (std::size_t k = 0; k < w.members.size(); ++k) r.offsets[w.members[k]] = add_sat(w.base, s.offsets[k]);
  }
  const bool beyond_search = r.unsearched_height > capacity;
  if (!timed_out && !beyond_search) return finish_solved();
  if (stacks) {
    // The windows not reached get first fit above their bases; the whole greedy placement stands
    // where it is lower.
    for (; next < d.windows.size(); ++next) {
      if (searchable[next]) (void)place_greedily(d.windows[next], 0, true);
    }
    if (top_of(buffers, greedy_offsets) < top_of(buffers, r.offsets)) r.offsets = greedy_offsets;
  }
  r.status = PlanStatus::Timeout;
  r.height = height_of(buffers, r.offsets);
  r.seconds = seconds_since(start);
  const std::string needs =
      r.height == detail::kBeyond ? std::string("more than 2^64 - 1") : std::to_string(r.height);
  r.reason = fmt::format("no placement within capacity found in {:g} s; best placement needs {} bytes", timeout, needs);
  if (beyond_search) {
    r.reason += fmt::format(" ({} buffers are in windows too large for an exact search in that time; placed "
                            "greedily, they need {} bytes)",
                            r.unsearched_buffers, r.unsearched_height);
  }
  return r;
}

}  // namespace

// Order independence: the buffers are planned sorted by content (lifetime, size, alignment; the
// id only orders buffers identical in all of those, which the search cannot tell apart), so the
// result, the time and the node count do not depend on the input's row order.
PlanResult plan_buffers(std::span<const PlanBuffer> buffers, const PlanOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  validate(buffers);
  const auto canonical = sorted_indices(buffers.size(), [&](std::size_t x, std::size_t y) {
    const PlanBuffer& a = buffers[x];
    const PlanBuffer& b = buffers[y];
    return std::tie(a.lower, a.upper, a.size, a.alignment, a.id) < std::tie(b.lower, b.upper, b.size, b.alignment, b.id);
  });
  std::vector<PlanBuffer> sorted;
  sorted.reserve(buffers.size());
  for (const std::size_t i : canonical) sorted.push_back(buffers[i]);
  PlanResult r = plan_in_canonical_order(sorted, options, start);
  if (!r.offsets.empty()) {
    std::vector<std::uint64_t> offsets(buffers.size());
    for (std::size_t k = 0; k < canonical.size(); ++k) offsets[canonical[k]] = r.offsets[k];
    r.offsets = std::move(offsets);
  }
  return r;
}

nlohmann::json plan_result_to_json(const PlanResult& r) {
  const char* status = r.status == PlanStatus::Solved ? "solved" : r.status == PlanStatus::Timeout ? "timeout" : "infeasible";
  nlohmann::json j = {{"peak_live_bytes", r.peak_live_bytes}, {"greedy_height", r.greedy_height},
                      {"status", status}, {"solved_by_greedy", r.solved_by_greedy},
                      {"height", r.height}, {"search_nodes", r.search_nodes}, {"seconds", r.seconds}};
  if (!r.reason.empty()) j["reason"] = r.reason;
  if (r.unsearched_buffers != 0) {
    j["unsearched_buffers"] = r.unsearched_buffers;
    j["unsearched_height"] = r.unsearched_height;
  }
  return j;
}

}  // namespace tpuemu::plan
