// tpuemu replay: an allocation trace through one or every allocation policy, metrics side by side.
#include <algorithm>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "commands.h"
#include "tpuemu/alloc/alloc_trace.h"
#include "tpuemu/base/atomic_file.h"
#include "tpuemu/base/error.h"

namespace tpuemu::cli {

namespace {

struct ReplayArgs {
  std::string trace_file;
  std::vector<std::string> capacities;  // "N" or "space=N"
  std::string allocator = std::string(alloc::kDefaultAllocator);
  std::uint64_t granularity = 256;
  std::string out_file;
  bool json = false;
};

int run_replay(const ReplayArgs& a) {
  alloc::ReplayOptions options;
  for (const std::string& c : a.capacities) {
    const auto eq = c.find('=');
    const std::string space = eq == std::string::npos ? "" : c.substr(0, eq);
    options.capacity[space] = alloc::parse_bytes(eq == std::string::npos ? c : c.substr(eq + 1));
  }
  if (a.allocator == "all") {
    options.policies = alloc::allocator_names();
  } else {
    for (std::size_t start = 0; start <= a.allocator.size();) {
      const std::size_t comma = std::min(a.allocator.find(',', start), a.allocator.size());
      options.policies.push_back(a.allocator.substr(start, comma - start));
      alloc::make_allocator(options.policies.back(), {1u << 20, a.granularity});  // unknown names fail before reading
      start = comma + 1;
    }
  }
  options.granularity = a.granularity;
  options.keep_samples = !a.out_file.empty();
  const alloc::AllocTrace trace = alloc::read_alloc_trace(a.trace_file);
  const alloc::ReplayResult result = alloc::replay_alloc_trace(trace, options);
  if (!a.out_file.empty()) write_file_atomically(a.out_file, alloc::replay_samples_csv(result));
  if (a.json) std::cout << alloc::replay_to_json(result).dump(2) << '\n';
  else std::cout << alloc::format_replay(result);
  // Out of memory is an error even though the comparison is complete: the first failure, one line.
  std::size_t failing = 0;
  const alloc::ReplayRun* first = nullptr;
  for (const auto& run : result.runs) {
    if (run.first_failure) {
      ++failing;
      if (!first) first = &run;
    }
  }
  if (first) {
    throw Error(fmt::format("{}{}", *first->first_failure,
                            failing > 1 ? fmt::format(" (and {} more replay{} failed: see the table)", failing - 1, failing > 2 ? "s" : "") : ""));
  }
  return 0;
}

}  // namespace

Subcommand add_replay_command(CLI::App& app) {
  auto args = std::make_shared<ReplayArgs>();
  auto* cmd = app.add_subcommand("replay", "Replay an allocation trace (CSV) through allocation policies and compare fragmentation");
  cmd->add_option("trace", args->trace_file, "Allocation trace, docs/alloc-trace.md (examples/traces/*.csv)")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--capacity", args->capacities,
                  "Bytes per memory space: N for every space, or SPACE=N (repeatable); suffixes KiB, MiB, GiB")
      ->required();
  cmd->add_option("--allocator", args->allocator, "Policies, comma-separated (bfc, first-fit, best-fit, buddy, tlsf), or all");
  cmd->add_option("--granularity", args->granularity, "Smallest block a policy hands out (power of two)");
  cmd->add_option("--out", args->out_file, "Write the time series (one row per event and policy) as CSV");
  cmd->add_flag("--json", args->json, "Print the metrics as JSON");
  return {cmd, [args] { return run_replay(*args); }};
}

}  // namespace tpuemu::cli
