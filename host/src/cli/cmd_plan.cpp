// SPDX-License-Identifier: Apache-2.0
// `tpuemu plan FILE.csv --capacity N`: the offline memory planner (docs/allocation.md).
#include <charconv>
#include <cstdio>
#include <optional>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "outputs.h"
#include "tpuemu/alloc/alloc_trace.h"
#include "tpuemu/alloc/memory_space.h"
#include "tpuemu/base/atomic_file.h"
#include "tpuemu/base/error.h"
#include "tpuemu/plan/plan_input.h"
#include "tpuemu/plan/planner.h"
#include "tpuemu/plan/trace_buffers.h"

namespace tpuemu::cli {
namespace {

struct PlanArgs {
  CommonOptions common;
  std::string input;
  std::string space;  // set: the input is an allocation trace and this space's buffers are planned
  std::string capacity;
  double timeout = 10;
};

// FILE.planned.csv next to a regular input; anything else (a pipe, /dev/stdin) needs -o.
std::string default_output(const std::string& input) {
  if (!is_regular_or_absent(input)) {
    throw UsageError("plan", fmt::format("{} is not a regular file, so no output name can be made from it: "
                                         "name the output with -o FILE (or -o - for stdout)", input));
  }
  const std::filesystem::path p(input);
  std::filesystem::path out = p;
  out.replace_filename(p.stem().string() + ".planned.csv");
  return out.string();
}

// --timeout: the planner's own rule (plan::timeout_problem), which Python's plan() applies too.
CLI::Validator plan_timeout() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        double seconds = 0;
        const char* end = text.data() + text.size();
        const auto [ptr, ec] = std::from_chars(text.data(), end, seconds);
        if (text.empty() || ec != std::errc() || ptr != end)
          return fmt::format("'{}' is not a number", text);
        if (const auto problem = plan::timeout_problem(seconds))
          return fmt::format("'{}' {}", text, *problem);
        return {};
      },
      "SECONDS");
}

double pct(std::uint64_t x, std::uint64_t of) { return of == 0 ? 0.0 : 100.0 * static_cast<double>(x) / static_cast<double>(of); }

int run_plan(const PlanArgs& a) {
  CommandOutputs out(a.common);
  const std::uint64_t capacity = alloc::parse_bytes(a.capacity);  // validated by the option
  const std::string output = a.common.out.empty() ? default_output(a.input) : a.common.out;
  // A plan CSV may be planned in place (its rows come back with an offset column, docs/allocation.md);
  // an allocation trace (--space) is another format and never replaced by a plan.
  if (!a.space.empty()) out.input(a.input, "the allocation trace");
  out.check(output, "-o");
  const auto buffers = a.space.empty() ? plan::read_plan_csv(a.input)
                                       : plan::plan_buffers_from_trace(alloc::read_alloc_trace(a.input), a.space);
  if (buffers.empty()) throw Error(a.input, a.space.empty() ? "no buffers" : fmt::format("no buffers in space '{}'", a.space));
  plan::PlanOptions options;
  options.capacity = capacity;
  options.timeout_seconds = a.timeout;
  options.stop = out.stop_token();
  const plan::PlanResult r = plan::plan_buffers(buffers, options);
  const bool write = r.status != plan::PlanStatus::Infeasible;
  if (write) out.file(output, plan::plan_csv_text(buffers, r.offsets));

  if (a.common.json) {
    nlohmann::json j = plan::plan_result_to_json(r);
    j["file"] = a.input;
    j["buffers"] = buffers.size();
    j["capacity"] = capacity;
    if (write) j["output"] = output;
    out.print(json_text(j));
  } else {
    std::string text;
    text += fmt::format("{}: {} buffers\n", a.input, buffers.size());
    text += fmt::format("  peak live bytes   {} ({:.1f}% of the capacity {})\n", r.peak_live_bytes,
                             pct(r.peak_live_bytes, capacity), capacity);
    if (r.status != plan::PlanStatus::Infeasible || r.greedy_height != 0) {
      text += fmt::format("  greedy height     {} ({:.1f}% of the capacity)\n", r.greedy_height,
                               pct(r.greedy_height, capacity));
    }
    if (r.status == plan::PlanStatus::Solved) {
      if (r.solved_by_greedy) text += "  result            solved by greedy (decreasing size, best fit)\n";
      else text += fmt::format("  result            solved by search in {:.3f} s ({} nodes)\n", r.seconds, r.search_nodes);
      text += fmt::format("  height            {} ({:.1f}% of the capacity)\n", r.height, pct(r.height, capacity));
    } else if (r.status == plan::PlanStatus::Timeout) {
      text += fmt::format("  result            timeout after {} search nodes; best placement {} bytes\n",
                               r.search_nodes, r.height);
    } else {
      text += "  result            infeasible\n";
    }
    if (write) text += fmt::format("  wrote             {}\n", output);
    out.print(text);
  }
  out.commit();
  if (r.status == plan::PlanStatus::Infeasible) throw Error(a.input, fmt::format("infeasible: {}", r.reason));
  if (r.status == plan::PlanStatus::Timeout) {
    std::fprintf(stderr, "tpuemu: %s: %s (written to %s)\n", a.input.c_str(), r.reason.c_str(), output.c_str());
    return kExitTimeout;
  }
  return 0;
}

}  // namespace

Subcommand add_plan_command(CLI::App& app) {
  auto args = std::make_shared<PlanArgs>();
  auto* cmd = app.add_subcommand("plan", "Offline memory planning: fixed offsets for buffers with known lifetimes (MiniMalloc CSV)");
  cmd->add_option("file", args->input, "CSV: id,lower,upper,size[,alignment]")->required()->check(input_file());
  cmd->add_option("--capacity", args->capacity, "Memory size in bytes: 1048576, 64KiB, 16MiB, 1GiB")
      ->required()
      ->check(byte_count());
  cmd->add_option("--space", args->space,
                  "Plan an allocation trace (docs/allocation.md) instead: the buffers of this space, "
                  "lifetimes in event order");
  cmd->add_option("--timeout", args->timeout, "Seconds of exact search before giving up (exit 4); 0: greedy only")
      ->check(plan_timeout());
  add_common_options(cmd, args->common, "Print the result as JSON",
                     "Output CSV with an offset column (default: FILE.planned.csv; - for stdout)");
  return {cmd, [args] { return run_plan(*args); }, &args->common};
}

}  // namespace tpuemu::cli
