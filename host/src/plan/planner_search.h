// SPDX-License-Identifier: Apache-2.0
// Private to the planner (planner.cpp, planner_search.cpp): the exact branch-and-bound search of
// docs/allocation.md, run on one time-connected group of buffers.
#pragma once

#include <chrono>
#include <cstdint>
#include <span>
#include <vector>

#include "tpuemu/base/stop.h"

namespace tpuemu::plan::detail {

struct SearchBuffer {
  std::int64_t lower = 0, upper = 0;  // half-open, lower < upper
  std::uint64_t size = 0;             // > 0
  std::uint64_t alignment = 1;        // power of two
};

enum class SearchOutcome {
  Found,      // `offsets` places every buffer within the capacity
  Exhausted,  // proven: no placement within the capacity exists
  Timeout,    // the deadline passed first
};

struct SearchResult {
  SearchOutcome outcome = SearchOutcome::Exhausted;
  std::vector<std::uint64_t> offsets;  // one per buffer when Found
  std::uint64_t nodes = 0;             // placements and raises tried
};

struct SearchRules {
  bool supported_raise = true;  // PlanOptions::supported_raise
  bool dominance = true;        // PlanOptions::dominance
  bool staircase = true;        // PlanOptions::staircase
  bool portfolio = true;        // PlanOptions::portfolio
};

// Throws Interrupted as soon as `stop` asks (checked at every node).
SearchResult search_placement(std::span<const SearchBuffer> buffers, std::uint64_t capacity,
                              std::chrono::steady_clock::time_point deadline, SearchRules rules = {},
                              const StopToken& stop = StopToken{});

// Offsets, floors and tops are uint64 and a capacity may be as large as 2^64 - 1, so the sums
// and roundings of the planner are taken in 128 bits and a result beyond 2^64 - 1 saturates to
// kBeyond: an offset there (with a size >= 1) ends beyond every capacity, so it is never placed
// and never mistaken for a low one (an alignment of 2^63 above 2^63 must not wrap to 0).
inline constexpr std::uint64_t kBeyond = UINT64_MAX;
__extension__ typedef unsigned __int128 Wide;  // __extension__: no -Wpedantic warning

inline std::uint64_t saturate(Wide value) {
  return value > kBeyond ? kBeyond : static_cast<std::uint64_t>(value);
}
// value rounded up to a multiple of the power of two `alignment`, or kBeyond when that is not
// representable.
inline std::uint64_t align_up(std::uint64_t value, std::uint64_t alignment) {
  const Wide a = alignment;
  return saturate((Wide{value} + a - 1) & ~(a - 1));
}
// a + b, or kBeyond when that is not representable.
inline std::uint64_t add_sat(std::uint64_t a, std::uint64_t b) { return saturate(Wide{a} + b); }
// Whether a + b (+ c) exceeds `limit`, without wrapping.
inline bool exceeds(std::uint64_t a, std::uint64_t b, std::uint64_t limit) { return Wide{a} + b > limit; }
inline bool exceeds(std::uint64_t a, std::uint64_t b, std::uint64_t c, std::uint64_t limit) {
  return Wide{a} + b + c > limit;
}

}  // namespace tpuemu::plan::detail
