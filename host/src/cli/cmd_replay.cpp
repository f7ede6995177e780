// SPDX-License-Identifier: Apache-2.0
// tpuemu replay: an allocation trace through one or every allocation policy, metrics side by side.
#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "commands.h"
#include "outputs.h"
#include "tpuemu/alloc/alloc_trace.h"
#include "tpuemu/base/error.h"

namespace tpuemu::cli {

namespace {

struct ReplayArgs {
  CommonOptions common;
  std::string trace_file;
  std::vector<std::string> capacities;  // "N" or "space=N"
  std::string allocator = std::string(alloc::kDefaultAllocator);
  std::uint64_t granularity = 256;
};

int run_replay(const ReplayArgs& a) {
  CommandOutputs out(a.common);
  out.input(a.trace_file, "the trace");
  out.check(a.common.out, "-o");
  alloc::ReplayOptions options;
  // --allocator and --granularity were checked when parsed (names, no duplicate, a power of two).
  options.policies = a.allocator == "all" ? alloc::allocator_names() : split_list(a.allocator);
  options.granularity = a.granularity;
  options.keep_samples = !a.common.out.empty();
  const alloc::AllocTrace trace = alloc::read_alloc_trace(a.trace_file);
  try {
    options.capacity = alloc::replay_capacities(a.capacities, trace);
  } catch (const Error& e) {
    throw UsageError("--capacity", e.what());
  }
  const alloc::ReplayResult result = alloc::replay_alloc_trace(trace, options);
  if (!a.common.out.empty()) out.file(a.common.out, alloc::replay_samples_csv(result));
  out.print(a.common.json ? json_text(alloc::replay_to_json(result)) : alloc::format_replay(result));
  out.commit();  // the comparison is complete even when a policy ran out of memory (below)
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
  cmd->add_option("trace", args->trace_file, "Allocation trace, docs/allocation.md (examples/traces/*.csv)")
      ->required()
      ->check(input_file());
  cmd->add_option("--capacity", args->capacities,
                  "Bytes per memory space: N for every space, or SPACE=N (repeatable); suffixes KiB, MiB, GiB")
      ->required();
  // The replay's own rules (alloc::replay_*_problem), which Python's replay() applies too; the
  // list's syntax (no empty item) is the CLI's.
  const CLI::Validator any([](std::string&) { return std::string(); }, "");
  cmd->add_option("--allocator", args->allocator, "Policies, comma-separated (bfc, first-fit, best-fit, buddy, tlsf), or all")
      ->check(CLI::Validator(
          [items = list_of(any, ListItems::MayRepeat)](std::string& text) {
            if (text == "all") return std::string();
            if (std::string problem = items(text); !problem.empty()) return problem;
            return alloc::replay_policies_problem(split_list(text)).value_or("");
          },
          "LIST"));
  cmd->add_option("--granularity", args->granularity, "Smallest block a policy hands out (power of two)")
      ->check(CLI::Validator(
          [range = unsigned_in(1, alloc::kMaxReplayGranularity)](std::string& text) {
            if (std::string problem = range(text); !problem.empty()) return problem;
            const auto problem = alloc::replay_granularity_problem(std::stoull(text));
            return problem ? fmt::format("{} {}", text, *problem) : std::string();
          },
          "N"));
  add_common_options(cmd, args->common, "Print the metrics as JSON",
                     "Write the time series (one row per event and policy) as CSV (- for stdout)");
  return {cmd, [args] { return run_replay(*args); }, &args->common};
}

}  // namespace tpuemu::cli
