// SPDX-License-Identifier: Apache-2.0
// Planner instances shared by tests/unit/test_planner.cpp and bench/bench_planner.cpp: a full
// rectangle time [0, T) x memory [0, C) cut into buffers by random guillotine cuts. Every time
// step is then exactly full (peak live == capacity everywhere), so a placement within C exists
// (the cut pattern) but leaves no slack: decreasing-size best fit overshoots C by ~20-40% on them
// (docs/allocation.md), while the exact search has to rebuild the packing.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "tpuemu/plan/planner.h"

namespace tpuemu::plan::testing {

struct PlanInstance {
  std::vector<PlanBuffer> buffers;
  std::uint64_t capacity = 0;
  std::vector<std::uint64_t> known_offsets;  // the cut pattern, one per buffer (a valid placement)
};

// The default shape is that of the "challenging" benchmarks published with MiniMalloc
// (github.com/google/minimalloc, benchmarks/challenging: a 2^20-step horizon and a 1-MiB
// capacity in 1-KiB units). coarse_grid() cuts a 2n x 2n grid instead: many buffers then share
// their endpoints, which makes far harder instances for the search (docs/allocation.md).
struct GuillotineShape {
  std::int64_t time_steps = std::int64_t{1} << 20;  // T; 0: 2 * count
  std::uint64_t memory_units = 1024;                 // C / unit; 0: 2 * count
  std::uint64_t unit = 1024;                         // bytes; sizes are multiples of it
  double time_cut_bias = 2.0;        // P(time cut) = w^b / (w^b + h^b), w, h relative to T, C
};

inline GuillotineShape coarse_grid() { return {.time_steps = 0, .memory_units = 0, .unit = 64}; }

// `count` buffers, order shuffled, ids "b0".."b<count-1>" in the shuffled order.
inline PlanInstance guillotine_instance(std::size_t count, std::uint64_t seed, GuillotineShape shape = {}) {
  struct Rect {
    std::int64_t t0, t1;
    std::uint64_t m0, m1;
  };
  const std::int64_t T = shape.time_steps != 0 ? shape.time_steps : static_cast<std::int64_t>(2 * count);
  const std::uint64_t M = shape.memory_units != 0 ? shape.memory_units : 2 * count;
  std::mt19937_64 rng(seed);
  std::vector<Rect> rects{{0, T, 0, M}};
  const auto uniform = [&](std::uint64_t lo, std::uint64_t hi) {  // [lo, hi]
    return std::uniform_int_distribution<std::uint64_t>(lo, hi)(rng);
  };
  while (rects.size() < count) {
    // Split a rectangle picked with probability proportional to its (relative) area.
    std::vector<double> weights;
    weights.reserve(rects.size());
    bool any = false;
    for (const auto& r : rects) {
      const bool splittable = r.t1 - r.t0 >= 2 || r.m1 - r.m0 >= 2;
      any = any || splittable;
      weights.push_back(splittable ? static_cast<double>(r.t1 - r.t0) * static_cast<double>(r.m1 - r.m0) : 0.0);
    }
    if (!any) break;
    std::discrete_distribution<std::size_t> pick(weights.begin(), weights.end());
    const std::size_t i = pick(rng);
    Rect r = rects[i];
    const double w = static_cast<double>(r.t1 - r.t0) / static_cast<double>(T);
    const double h = static_cast<double>(r.m1 - r.m0) / static_cast<double>(M);
    const double pw = std::pow(w, shape.time_cut_bias), ph = std::pow(h, shape.time_cut_bias);
    bool time_cut = std::uniform_real_distribution<double>(0, 1)(rng) < pw / (pw + ph);
    if (r.t1 - r.t0 < 2) time_cut = false;
    if (r.m1 - r.m0 < 2) time_cut = true;
    if (time_cut) {
      const auto at = static_cast<std::int64_t>(uniform(static_cast<std::uint64_t>(r.t0 + 1),
                                                        static_cast<std::uint64_t>(r.t1 - 1)));
      rects[i] = {r.t0, at, r.m0, r.m1};
      rects.push_back({at, r.t1, r.m0, r.m1});
    } else {
      const std::uint64_t at = uniform(r.m0 + 1, r.m1 - 1);
      rects[i] = {r.t0, r.t1, r.m0, at};
      rects.push_back({r.t0, r.t1, at, r.m1});
    }
  }
  std::shuffle(rects.begin(), rects.end(), rng);
  PlanInstance inst;
  inst.capacity = M * shape.unit;
  for (std::size_t i = 0; i < rects.size(); ++i) {
    const auto& r = rects[i];
    inst.buffers.push_back({.id = fmt::format("b{}", i), .lower = r.t0, .upper = r.t1,
                            .size = (r.m1 - r.m0) * shape.unit});
    inst.known_offsets.push_back(r.m0 * shape.unit);
  }
  return inst;
}

}  // namespace tpuemu::plan::testing
