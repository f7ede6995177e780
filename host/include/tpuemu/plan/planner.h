// SPDX-License-Identifier: Apache-2.0
// Offline memory planning: buffers with known lifetimes and sizes get fixed offsets inside a fixed
// capacity, so that no two buffers live at the same time overlap in address. The input is the CSV
// of Google's MiniMalloc (id,lower,upper,size[,alignment]; lifetimes half-open [lower, upper));
// the output is the same rows with an `offset` column. Algorithm and figures: docs/allocation.md.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "tpuemu/base/stop.h"

namespace tpuemu::plan {

struct PlanBuffer {
  std::string id;
  std::int64_t lower = 0;  // first time step alive
  std::int64_t upper = 0;  // first time step dead (> lower)
  std::uint64_t size = 0;  // bytes (> 0)
  std::uint64_t alignment = 1;  // offset must be a multiple of it (power of two)
};

struct PlanOptions {
  std::uint64_t capacity = 0;
  // Of the greedy passes and the search together (docs/allocation.md, "Algorithm").
  double timeout_seconds = 10;
  // The search's raise child goes to the next height a buffer can rest at (docs/allocation.md
  // "Raising to a supported height"); off: one gcd of the sizes up, as before (for measurement).
  bool supported_raise = true;
  // A state where an unplaced buffer fits wholly in space a raise left empty is dead
  // (docs/allocation.md "Dominance"); off only for measurement.
  bool dominance = true;
  // In every section, the buffers whose lowest offset is at least t must fit above t, for every t
  // (docs/allocation.md "Staircase bound"); off only for measurement.
  bool staircase = true;
  // Restarts cycle through three candidate orders (docs/allocation.md "A portfolio of preorders
  // across restarts"); off: every restart uses the first, for measurement.
  bool portfolio = true;
  // Asked throughout the search: a stop ends plan_buffers with Interrupted (a user's Ctrl-C).
  StopToken stop;
};

enum class PlanStatus {
  Solved,      // every buffer placed within the capacity
  Infeasible,  // proven impossible (peak live bytes above the capacity, or the search exhausted)
  Timeout,     // no placement found in time; `offsets` is the best placement found (may exceed capacity)
};

struct PlanResult {
  PlanStatus status = PlanStatus::Infeasible;
  std::vector<std::uint64_t> offsets;  // one per input buffer, in input order (empty if none)
  std::uint64_t peak_live_bytes = 0;   // max over time of the live bytes: a lower bound on any placement
  std::uint64_t height = 0;            // max offset + size of `offsets`
  std::uint64_t greedy_height = 0;     // what the greedy pass alone needed
  bool solved_by_greedy = false;
  std::uint64_t search_nodes = 0;
  // Windows too large for the exact search keep their greedy placement (docs/allocation.md,
  // "Windows"): their buffers and the top of that placement (0 when the greedy placement of the
  // whole fit at once). A capacity below that top ends in Timeout without waiting for the deadline.
  std::uint64_t unsearched_buffers = 0;
  std::uint64_t unsearched_height = 0;
  double seconds = 0;
  std::string reason;  // one line: why infeasible / what timed out
};

// Throws Error for invalid buffers (size 0, upper <= lower, alignment not a power of two),
// naming the buffer id.
PlanResult plan_buffers(std::span<const PlanBuffer> buffers, const PlanOptions& options);

// The result's figures as `tpuemu plan --json` prints them: status ("solved", "timeout",
// "infeasible"), peak live bytes, greedy height, whether greedy solved it, height, search nodes,
// seconds, the reason when there is one, and the unsearched buffers and height when there are
// any. The caller adds where the buffers came from and went.
nlohmann::json plan_result_to_json(const PlanResult& result);

// Max over time of the total size of live buffers.
std::uint64_t peak_live_bytes(std::span<const PlanBuffer> buffers);

// nullopt when the placement is valid (within capacity, aligned, no two buffers overlapping in
// both time and address); otherwise a one-line description naming the two buffer ids.
std::optional<std::string> check_placement(std::span<const PlanBuffer> buffers,
                                           std::span<const std::uint64_t> offsets,
                                           std::uint64_t capacity);

// MiniMalloc CSV. Errors are "file:line:column: cause" (malformed number, negative size,
// upper <= lower, missing column, duplicate id).
std::vector<PlanBuffer> read_plan_csv(const std::filesystem::path& path);
// The same from text already read; `source` names it in errors.
std::vector<PlanBuffer> parse_plan_csv(std::string text, std::string source);
// The input rows plus an `offset` column: as text, and written atomically.
std::string plan_csv_text(std::span<const PlanBuffer> buffers, std::span<const std::uint64_t> offsets);
void write_plan_csv(const std::filesystem::path& path, std::span<const PlanBuffer> buffers,
                    std::span<const std::uint64_t> offsets);

}  // namespace tpuemu::plan
