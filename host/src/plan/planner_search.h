// Private to the planner (planner.cpp, planner_search.cpp): the exact branch-and-bound search of
// docs/planner.md, run on one time-connected group of buffers.
#pragma once

#include <chrono>
#include <cstdint>
#include <span>
#include <vector>

namespace tpuemu::alloc::detail {

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

SearchResult search_placement(std::span<const SearchBuffer> buffers, std::uint64_t capacity,
                              std::chrono::steady_clock::time_point deadline, SearchRules rules = {});

inline std::uint64_t align_up(std::uint64_t value, std::uint64_t alignment) {
  return (value + alignment - 1) & ~(alignment - 1);
}

}  // namespace tpuemu::alloc::detail
