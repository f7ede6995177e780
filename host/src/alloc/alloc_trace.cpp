// SPDX-License-Identifier: Apache-2.0
#include "tpuemu/alloc/alloc_trace.h"

#include <algorithm>
#include <bit>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "tpuemu/alloc/csv_reader.h"
#include "tpuemu/alloc/memory_space.h"
#include "tpuemu/base/error.h"
#include "tpuemu/base/text.h"

namespace tpuemu::alloc {
namespace {
AllocTrace read_events(CsvReader csv);
}  // namespace

std::vector<std::string> AllocTrace::spaces() const {
  std::vector<std::string> names;
  for (const TraceEvent& e : events) {
    if (std::find(names.begin(), names.end(), e.space) == names.end()) names.push_back(e.space);
  }
  return names;
}

AllocTrace parse_alloc_trace(const std::string& text, const std::string& source) {
  return read_events(CsvReader(text, source));
}

namespace {

AllocTrace read_events(CsvReader csv) {
  csv.require_columns({"time", "event", "id"});
  AllocTrace trace;
  trace.source = csv.source();
  // space + id -> its alloc: the line, and the event, which a free's optional fields must repeat.
  std::unordered_map<std::string, TraceEvent> live;
  std::uint64_t last_time = 0;
  while (csv.next_row()) {
    TraceEvent e;
    e.line = csv.line();
    e.time = csv.unsigned_field("time");
    if (e.time < last_time) {
      throw csv.error_at("time", fmt::format("time {} goes backwards (previous event at {})", e.time, last_time));
    }
    last_time = e.time;
    const std::string event = csv.field("event");
    if (event == "alloc") e.alloc = true;
    else if (event == "free") e.alloc = false;
    else throw csv.error_at("event", fmt::format("unknown event '{}' (alloc or free)", event));
    e.id = csv.field("id");
    if (e.id.empty()) throw csv.error_at("id", "empty id");
    e.space = csv.field_or("space", "hbm");
    if (e.space.empty()) e.space = "hbm";
    const std::string key = e.space + '\n' + e.id;
    if (e.alloc) {
      if (!csv.has_value("size")) throw csv.error_at("size", fmt::format("alloc of '{}' without a size", e.id));
      e.size = csv.unsigned_field("size");
      if (e.size == 0) throw csv.error_at("size", fmt::format("alloc of '{}' with size 0", e.id));
      e.alignment = csv.has_value("alignment") ? csv.unsigned_field("alignment") : 1;
      if (!std::has_single_bit(e.alignment)) {
        throw csv.error_at("alignment", fmt::format("alignment {} is not a power of two", e.alignment));
      }
      e.padding = csv.has_value("padding") ? csv.unsigned_field("padding") : 0;
      if (e.padding > e.size) {
        throw csv.error_at("padding", fmt::format("padding {} is larger than the size {}", e.padding, e.size));
      }
      e.owner = csv.field_or("owner", "");
      if (e.owner.empty()) e.owner = e.id;
      if (const auto it = live.find(key); it != live.end()) {
        throw csv.error_at("id", fmt::format("alloc of '{}', which is still live (allocated on line {})", e.id,
                                             it->second.line));
      }
      live.emplace(key, e);
    } else {
      const auto it = live.find(key);
      if (it == live.end()) throw csv.error_at("id", fmt::format("free of unknown id '{}' in space {}", e.id, e.space));
      // A free may leave size, alignment, padding and owner empty or repeat its alloc's; a
      // different value would be ignored by the replay, so it is refused instead.
      const TraceEvent& a = it->second;
      const auto same = [&](std::string_view column, std::uint64_t allocated) {
        if (!csv.has_value(column)) return;
        const std::uint64_t given = csv.unsigned_field(column);
        if (given != allocated) {
          throw csv.error_at(column, fmt::format("free of '{}' with {} {}, but it was allocated with {} {} on line {}",
                                                 e.id, column, given, column, allocated, a.line));
        }
      };
      same("size", a.size);
      same("alignment", a.alignment);
      same("padding", a.padding);
      if (const std::string owner = csv.field_or("owner", ""); !owner.empty() && owner != a.owner) {
        throw csv.error_at("owner", fmt::format("free of '{}' by owner '{}', but it was allocated by '{}' on line {}",
                                                e.id, owner, a.owner, a.line));
      }
      live.erase(it);
    }
    trace.events.push_back(std::move(e));
  }
  return trace;
}

}  // namespace

AllocTrace read_alloc_trace(const std::filesystem::path& path) {
  return read_events(CsvReader::from_file(path));
}

std::string format_alloc_trace(const AllocTrace& trace) {
  std::string out = "time,event,id,size,alignment,space,padding,owner\n";
  for (const TraceEvent& e : trace.events) {
    std::string owner = e.owner;
    std::replace(owner.begin(), owner.end(), ',', ';');
    if (e.alloc) {
      out += fmt::format("{},alloc,{},{},{},{},{},{}\n", e.time, e.id, e.size, e.alignment, e.space, e.padding, owner);
    } else {
      out += fmt::format("{},free,{},,,{},,\n", e.time, e.id, e.space);
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Replay
// ---------------------------------------------------------------------------------------------

namespace {

std::uint64_t capacity_of(const ReplayOptions& options, const std::string& space) {
  if (const auto it = options.capacity.find(space); it != options.capacity.end()) return it->second;
  if (const auto it = options.capacity.find(""); it != options.capacity.end()) return it->second;
  throw Error(fmt::format("replay: no capacity for memory space '{}' (--capacity {}=BYTES)", space, space));
}

ReplayRun replay_one(const AllocTrace& trace, const std::string& space, const std::string& policy,
                     const ReplayOptions& options) {
  MemorySpace memory(space, make_allocator(policy, {capacity_of(options, space), options.granularity}),
                     options.keep_samples);
  std::unordered_map<std::string, BufferId> live;
  ReplayRun run;
  for (std::size_t i = 0; i < trace.events.size(); ++i) {
    const TraceEvent& e = trace.events[i];
    if (e.space != space) continue;
    if (e.alloc) {
      std::optional<OutOfMemory> failure;
      const auto placed = memory.try_allocate({e.size, e.alignment, e.owner, e.padding}, e.time, &failure);
      if (placed) {
        live.emplace(e.id, placed->id);
        if (options.keep_placements) run.placements.push_back({i, placed->offset});
      } else if (!run.first_failure) {
        // A trace built in memory (the runner's) has no lines to point at.
        run.first_failure = e.line != 0 ? fmt::format("{}:{}: {}", trace.source, e.line, failure->what())
                                        : fmt::format("{}: {}", trace.source, failure->what());
      }
    } else if (const auto it = live.find(e.id); it != live.end()) {
      memory.free(it->second, e.time);
      live.erase(it);
    }
  }
  run.metrics = memory.metrics();
  run.samples = memory.samples();
  return run;
}

bool replays_without_failure(const AllocTrace& trace, const std::string& space, const std::string& policy,
                             std::uint64_t capacity, std::uint64_t granularity) {
  ReplayOptions options;
  options.capacity[space] = capacity;
  options.policies = {policy};
  options.granularity = granularity;
  return replay_one(trace, space, policy, options).metrics.failed_allocations == 0;
}

std::string percent(double fraction) { return fmt::format("{:.1f}%", 100.0 * fraction); }

}  // namespace

ReplayResult replay_alloc_trace(const AllocTrace& trace, const ReplayOptions& options) {
  ReplayResult result;
  result.source = trace.source;
  const auto spaces = trace.spaces();
  for (const std::string& space : spaces) capacity_of(options, space);  // fail before any work
  for (const std::string& space : spaces) {
    for (const std::string& policy : options.policies) {
      result.runs.push_back(replay_one(trace, space, policy, options));
    }
  }
  return result;
}

std::optional<std::string> replay_policies_problem(std::span<const std::string> policies) {
  if (policies.empty()) return "no policy";
  const std::vector<std::string>& names = allocator_names();
  for (auto it = policies.begin(); it != policies.end(); ++it) {
    if (std::find(names.begin(), names.end(), *it) == names.end())
      return fmt::format("'{}' is not one of {} (or all of them: all)", *it,
                         fmt::join(names, ", "));
    if (std::find(policies.begin(), it, *it) != it) return fmt::format("'{}' is given twice", *it);
  }
  return std::nullopt;
}

std::optional<std::string> replay_granularity_problem(std::uint64_t granularity) {
  if (!std::has_single_bit(granularity)) return "is not a power of two";
  if (granularity > kMaxReplayGranularity) return "is more than 2^30";
  return std::nullopt;
}

std::map<std::string, std::uint64_t> replay_capacities(const std::vector<std::string>& given, const AllocTrace& trace) {
  std::map<std::string, std::uint64_t> out;
  const std::vector<std::string> spaces = trace.spaces();
  for (const std::string& c : given) {
    const auto eq = c.find('=');
    const std::string space = eq == std::string::npos ? "" : c.substr(0, eq);
    const std::string bytes = eq == std::string::npos ? c : c.substr(eq + 1);
    if (eq != std::string::npos && space.empty()) throw Error(fmt::format("'{}' names no space (SPACE=BYTES)", c));
    if (out.contains(space)) {
      throw Error(space.empty() ? std::string("the capacity of every space is given twice")
                                : fmt::format("space '{}' is given twice", space));
    }
    if (!space.empty() && std::find(spaces.begin(), spaces.end(), space) == spaces.end()) {
      throw Error(fmt::format("the trace {} has no space '{}' (its spaces: {})", trace.source, space,
                              fmt::join(spaces, ", ")));
    }
    out[space] = parse_bytes(bytes);
    if (out[space] == 0) throw Error(fmt::format("'{}': a capacity must be larger than 0", c));
  }
  return out;
}

std::uint64_t min_replay_capacity(const AllocTrace& trace, const std::string& space, const std::string& policy,
                                  std::uint64_t granularity, std::uint64_t step) {
  std::uint64_t total = 0;
  for (const TraceEvent& e : trace.events) {
    if (e.space == space && e.alloc) total += e.size + e.alignment;
  }
  ReplayOptions probe;
  probe.capacity[space] = total * 4 + granularity;  // room for any rounding
  probe.policies = {policy};
  probe.granularity = granularity;
  const std::uint64_t peak = replay_one(trace, space, policy, probe).metrics.peak_live_bytes;
  auto round_up = [&](std::uint64_t v) { return (v + step - 1) / step * step; };
  std::uint64_t low = std::max<std::uint64_t>(round_up(peak), step), high = round_up(total * 4 + granularity);
  if (replays_without_failure(trace, space, policy, low, granularity)) return low;
  while (high - low > step) {  // low fails, high works
    const std::uint64_t mid = round_up(low + (high - low) / 2);
    if (mid == high) break;
    if (replays_without_failure(trace, space, policy, mid, granularity)) high = mid;
    else low = mid;
  }
  return high;
}

std::string format_replay(const ReplayResult& result) {
  std::string out;
  std::size_t i = 0;
  while (i < result.runs.size()) {
    std::size_t j = i;
    while (j < result.runs.size() && result.runs[j].metrics.space == result.runs[i].metrics.space) ++j;
    const SpaceMetrics& first = result.runs[i].metrics;
    out += fmt::format("{} space '{}', capacity {} ({} bytes)\n", printable(result.source), printable(first.space),
                       format_bytes(first.capacity), first.capacity);
    // One column per policy; text_table widens a column for a value wider than 13 characters.
    std::vector<std::vector<std::string>> rows;
    auto row = [&](std::string_view label, auto value_of) {
      std::vector<std::string>& cells = rows.emplace_back(1, std::string(label));
      for (std::size_t k = i; k < j; ++k) cells.push_back(value_of(result.runs[k].metrics));
    };
    row("policy", [](const SpaceMetrics& m) { return m.policy; });
    row("allocations", [](const SpaceMetrics& m) { return std::to_string(m.allocations); });
    row("failed allocations", [](const SpaceMetrics& m) { return std::to_string(m.failed_allocations); });
    row("peak live", [](const SpaceMetrics& m) { return format_bytes(m.peak_live_bytes); });
    row("peak in use (reserved)", [](const SpaceMetrics& m) { return format_bytes(m.peak_in_use_bytes); });
    row("peak footprint (highest address)", [](const SpaceMetrics& m) { return format_bytes(m.peak_footprint_bytes); });
    row("peak in use / peak live", [](const SpaceMetrics& m) { return fmt::format("{:.3f}", m.peak_in_use_over_peak_live); });
    row("peak footprint / peak live", [](const SpaceMetrics& m) { return fmt::format("{:.3f}", m.peak_footprint_over_peak_live); });
    row("peak internal waste", [](const SpaceMetrics& m) { return format_bytes(m.peak_internal_waste_bytes); });
    row("ext. fragmentation mean", [](const SpaceMetrics& m) { return percent(m.mean_external_fragmentation); });
    row("ext. fragmentation max", [](const SpaceMetrics& m) { return percent(m.max_external_fragmentation); });
    row("sum gap^2 / free^2 mean", [](const SpaceMetrics& m) { return fmt::format("{:.3f}", m.mean_gap_square_ratio); });
    row("free blocks max", [](const SpaceMetrics& m) { return std::to_string(m.max_free_blocks); });
    row("at end: in use", [](const SpaceMetrics& m) { return format_bytes(m.now.in_use_bytes); });
    row("at end: free blocks", [](const SpaceMetrics& m) { return std::to_string(m.now.free_blocks); });
    row("at end: largest free block", [](const SpaceMetrics& m) { return format_bytes(m.now.largest_free_block); });
    const TextColumn columns[] = {{34, false, 0}, {13, true, 1}};
    out += text_table(columns, rows, "  ");
    for (std::size_t k = i; k < j; ++k) {
      if (result.runs[k].first_failure) {
        out += fmt::format("  {} first failure: {}\n", result.runs[k].metrics.policy, printable(*result.runs[k].first_failure));
      }
    }
    i = j;
  }
  return out;
}

nlohmann::json snapshot_to_json(const SpaceSnapshot& s) {
  return {{"time", s.time},
          {"live_bytes", s.live_bytes},
          {"in_use_bytes", s.in_use_bytes},
          {"footprint_bytes", s.footprint_bytes},
          {"free_bytes", s.free_bytes},
          {"free_blocks", s.free_blocks},
          {"largest_free_block", s.largest_free_block},
          {"external_fragmentation", s.external_fragmentation},
          {"gap_square_ratio", s.gap_square_ratio},
          {"internal_waste_bytes", s.internal_waste_bytes}};
}

nlohmann::json metrics_to_json(const SpaceMetrics& m) {
  return {{"space", m.space},
          {"policy", m.policy},
          {"capacity", m.capacity},
          {"allocations", m.allocations},
          {"frees", m.frees},
          {"failed_allocations", m.failed_allocations},
          {"peak_live_bytes", m.peak_live_bytes},
          {"peak_in_use_bytes", m.peak_in_use_bytes},
          {"peak_footprint_bytes", m.peak_footprint_bytes},
          {"peak_internal_waste_bytes", m.peak_internal_waste_bytes},
          {"peak_in_use_over_peak_live", m.peak_in_use_over_peak_live},
          {"peak_footprint_over_peak_live", m.peak_footprint_over_peak_live},
          {"mean_external_fragmentation", m.mean_external_fragmentation},
          {"max_external_fragmentation", m.max_external_fragmentation},
          {"mean_gap_square_ratio", m.mean_gap_square_ratio},
          {"max_free_blocks", m.max_free_blocks},
          {"at_end", snapshot_to_json(m.now)}};
}

nlohmann::json replay_to_json(const ReplayResult& result) {
  nlohmann::json runs = nlohmann::json::array();
  for (const ReplayRun& run : result.runs) {
    nlohmann::json j = metrics_to_json(run.metrics);
    if (run.first_failure) j["first_failure"] = *run.first_failure;
    runs.push_back(std::move(j));
  }
  return {{"trace", result.source}, {"runs", runs}};
}

std::string samples_csv_header() {
  return "space,policy,event,time,live_bytes,in_use_bytes,footprint_bytes,free_bytes,free_blocks,"
         "largest_free_block,external_fragmentation,gap_square_ratio,internal_waste_bytes\n";
}

std::string samples_csv_rows(std::string_view space, std::string_view policy, std::span<const SpaceSnapshot> samples) {
  std::string out;
  std::size_t event = 0;
  for (const SpaceSnapshot& s : samples) {
    out += fmt::format("{},{},{},{},{},{},{},{},{},{},{:.6f},{:.6f},{}\n", space, policy, event++, s.time,
                       s.live_bytes, s.in_use_bytes, s.footprint_bytes, s.free_bytes, s.free_blocks,
                       s.largest_free_block, s.external_fragmentation, s.gap_square_ratio, s.internal_waste_bytes);
  }
  return out;
}

std::string replay_samples_csv(const ReplayResult& result) {
  std::string out = samples_csv_header();
  for (const ReplayRun& run : result.runs) out += samples_csv_rows(run.metrics.space, run.metrics.policy, run.samples);
  return out;
}

}  // namespace tpuemu::alloc
