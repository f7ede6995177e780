// SPDX-License-Identifier: Apache-2.0
// Allocation traces: a CSV of alloc/free events (format: docs/allocation.md), and their replay
// through any allocation policy, measured with the metrics of memory_space.h. The runtime writes
// them (tpuemu run --alloc-trace, tpuemu trace), `tpuemu replay` reads them.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "tpuemu/alloc/memory_space.h"

namespace tpuemu::alloc {

struct TraceEvent {
  std::uint64_t time = 0;
  bool alloc = true;           // false: free
  std::string id;
  std::uint64_t size = 0;      // alloc only
  std::uint64_t alignment = 1; // alloc only
  std::string space = "hbm";
  std::uint64_t padding = 0;   // bytes of `size` that are layout padding
  std::string owner;           // who allocated it (defaults to the id)
  // Where the runtime placed it (alloc only; absent when read from a CSV, which does not carry
  // placements: a replay decides them anew).
  std::optional<std::uint64_t> offset;
  std::size_t line = 0;        // in the file it came from (0: built in memory)
};

struct AllocTrace {
  std::string source;  // file name for messages
  std::vector<TraceEvent> events;
  // Spaces in order of first appearance.
  std::vector<std::string> spaces() const;
};

// Reads and checks a trace. Errors are one line "file:line:column: cause": malformed number,
// negative size, unknown event, missing column, time going backwards, free of an unknown id,
// alloc of an id that is still live.
AllocTrace read_alloc_trace(const std::filesystem::path& path);
AllocTrace parse_alloc_trace(const std::string& text, const std::string& source);
std::string format_alloc_trace(const AllocTrace& trace);

struct ReplayOptions {
  std::map<std::string, std::uint64_t> capacity;  // per space; "" = every other space
  std::vector<std::string> policies;              // allocator names
  std::uint64_t granularity = 256;
  bool keep_samples = false;
  bool keep_placements = false;
};

// Where a replay put one allocation: `event` indexes AllocTrace::events (an alloc event).
struct ReplayPlacement {
  std::size_t event = 0;
  std::uint64_t offset = 0;
};

struct ReplayRun {
  SpaceMetrics metrics;
  std::vector<SpaceSnapshot> samples;   // with keep_samples
  std::vector<ReplayPlacement> placements;  // with keep_placements, in event order; failed ones absent
  std::optional<std::string> first_failure;  // the OutOfMemory message of the first failed allocation
};

struct ReplayResult {
  std::string source;
  std::vector<ReplayRun> runs;  // space-major, then policy in the order asked
};

// Replays every space of the trace through every policy. A failed allocation is recorded (the
// buffer is skipped, its free ignored) and the replay goes on, so that policies can be compared
// at a capacity some of them cannot hold. Throws Error for a space without a capacity.
ReplayResult replay_alloc_trace(const AllocTrace& trace, const ReplayOptions& options);

// ReplayOptions::capacity from "BYTES" (every space) or "SPACE=BYTES" items (tpuemu replay
// --capacity, Python's replay(capacities=...)): each space at most once, every named space in the
// trace, no capacity 0. Throws Error with the cause (the caller names the place).
std::map<std::string, std::uint64_t> replay_capacities(const std::vector<std::string>& given, const AllocTrace& trace);

// ReplayOptions::policies, checked once for `tpuemu replay --allocator` and Python's replay(): at
// least one, each an allocator's name, none twice. The problem names the policy ("'bfc' is given
// twice", "'slab' is not one of bfc, ... (or all of them: all)": both front ends take "all" for
// every policy), or nullopt; the caller names the place.
std::optional<std::string> replay_policies_problem(std::span<const std::string> policies);
// ReplayOptions::granularity: a power of two in [1, 2^30]. The problem as a clause to follow the
// value ("is not a power of two"), or nullopt.
inline constexpr std::uint64_t kMaxReplayGranularity = std::uint64_t{1} << 30;
std::optional<std::string> replay_granularity_problem(std::uint64_t granularity);

// The smallest capacity (a multiple of `step`) at which `policy` replays every allocation of
// `space` without a failure, found by bisection between the peak live bytes and the sum of all
// allocations. Policies are not strictly monotonic in capacity, so this is the smallest capacity
// the bisection met that works, not a proof that no smaller one does.
std::uint64_t min_replay_capacity(const AllocTrace& trace, const std::string& space, const std::string& policy,
                                  std::uint64_t granularity = 256, std::uint64_t step = 4096);

// Metrics side by side, one column per policy, one block per space.
std::string format_replay(const ReplayResult& result);
nlohmann::json replay_to_json(const ReplayResult& result);
nlohmann::json metrics_to_json(const SpaceMetrics& metrics);
nlohmann::json snapshot_to_json(const SpaceSnapshot& snapshot);
// The time series: one row per event per (space, policy).
// The time series CSV of docs/allocation.md: its header, and the rows of one space and policy.
std::string samples_csv_header();
std::string samples_csv_rows(std::string_view space, std::string_view policy, std::span<const SpaceSnapshot> samples);
std::string replay_samples_csv(const ReplayResult& result);

}  // namespace tpuemu::alloc
