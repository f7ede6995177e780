// SPDX-License-Identifier: Apache-2.0
// tpuemu trace: the allocation trace of a model served with varying batch sizes
// (docs/allocation.md); examples/traces/*.csv are made with it. Given a JAX/XLA program (HLO
// text), the trace of a loop calling it step after step (docs/hlo.md, "The runtime across steps").
#include <algorithm>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "commands.h"
#include "hlo_run.h"
#include "outputs.h"
#include "tpuemu/alloc/alloc_trace.h"
#include "tpuemu/base/error.h"
#include "tpuemu/base/json.h"
#include "tpuemu/base/text.h"
#include "tpuemu/compile/workload.h"
#include "tpuemu/config/config.h"
#include "tpuemu/hlo/step_trace.h"
#include "tpuemu/run/serving_trace.h"

namespace tpuemu::cli {

namespace {

struct TraceArgs {
  CommonOptions common;
  const CLI::App* command = nullptr;  // to see which options were given
  std::string workload_file;
  std::string batches;  // "1,8,32", checked when parsed
  std::size_t requests = 0;
  std::size_t in_flight = 2;
  std::string preset = "default";
  std::uint64_t steps = 0;  // HLO programs
  std::string also;         // HLO programs: a second program, steps alternating
};

bool given(const TraceArgs& a, const char* option) { return a.command->get_option(option)->count() > 0; }

void write_trace(const TraceArgs& a, CommandOutputs& out, const alloc::AllocTrace& trace, nlohmann::json summary) {
  if (a.common.json) {
    // stdout stays JSON: a summary; the trace itself (CSV) goes to -o
    if (a.common.out.empty() || a.common.out == "-")
      throw UsageError("trace --json", "the trace is CSV: name its file with -o FILE; stdout gets a JSON summary");
    out.file(a.common.out, alloc::format_alloc_trace(trace));
    summary["events"] = trace.events.size();
    summary["spaces"] = trace.spaces();
    summary["output"] = a.common.out;
    out.print(json_text(summary));
  } else if (a.common.out.empty() || a.common.out == "-") {
    out.print(alloc::format_alloc_trace(trace));
  } else {
    out.file(a.common.out, alloc::format_alloc_trace(trace));
  }
  out.commit();
}

// A JAX loop calling one program (or two, alternating) --steps times.
int run_hlo_trace(const TraceArgs& a, const WorkloadInput& program) {
  for (const char* option : {"--batches", "--requests", "--in-flight"}) {
    if (given(a, option))
      throw UsageError(option, "applies to a workload served in requests, not to an HLO program (give --steps N)");
  }
  if (!given(a, "--steps")) throw UsageError("--steps", "an HLO program's trace needs the number of steps: --steps N");
  if (a.also == "-" && a.workload_file == "-")
    throw UsageError("--also -", "standard input is the program already; name the second one's file");
  std::optional<WorkloadInput> also;
  if (!a.also.empty()) {
    also = read_workload_input(a.also);
    if (!also->hlo)
      throw UsageError("--also", fmt::format("'{}' is not HLO text (a *.hlo file, or text starting "
                                             "with HloModule)",
                                             printable(a.also)));
  }
  CommandOutputs out(a.common);
  out.input(a.workload_file, "the HLO program");
  if (!a.also.empty()) out.input(a.also, "the --also program");
  const bool preset_given = given(a, "--preset");
  if (preset_given && std::filesystem::is_regular_file(a.preset)) out.input(a.preset, "the --preset file");
  if (a.common.out != "-") out.check(a.common.out, "-o");
  hlo::SizeOptions sizes;
  sizes.lanes = load_preset(preset_given ? a.preset : "tpu-v4-like").dim;  // as tpuemu analyze PROGRAM.hlo
  const StopToken stop = out.stop_token();
  std::vector<hlo::StepProgram> programs{hlo::step_program(program.hlo_module(), sizes, "", stop)};
  if (also) programs.push_back(hlo::step_program(also->hlo_module(), sizes, "", stop));
  nlohmann::json summary = {{"program", a.workload_file}, {"steps", a.steps}};
  if (!a.also.empty()) summary["also"] = a.also;
  nlohmann::json list = nlohmann::json::array();
  for (const hlo::StepProgram& p : programs) {
    list.push_back({{"name", p.name}, {"resident_buffers", p.resident.size()}, {"outputs", p.outputs.size()},
                    {"temporaries_bytes", p.temporaries}});
  }
  summary["programs"] = list;
  write_trace(a, out, hlo::step_trace(programs, a.steps, a.workload_file, stop), summary);
  return 0;
}

int run_trace(const TraceArgs& a) {
  // Read once (standard input or a pipe works) and known by its content, then handed to the
  // reader of its kind.
  const WorkloadInput input = read_workload_input(a.workload_file);
  if (input.hlo) return run_hlo_trace(a, input);
  for (const char* option : {"--steps", "--also"}) {
    if (given(a, option))
      throw UsageError(option, "applies to an HLO program's steps, not to a workload served in requests (docs/hlo.md)");
  }
  if (!given(a, "--batches")) throw UsageError("--batches", "a workload's trace needs the batch size of each request: --batches B1,B2,...");
  CommandOutputs out(a.common);
  out.input(a.workload_file, "the workload");
  if (std::filesystem::is_regular_file(a.preset)) out.input(a.preset, "the --preset file");
  if (a.common.out != "-") out.check(a.common.out, "-o");
  const Preset preset = load_preset(a.preset);
  ServingOptions options;
  for (const std::string& batch : split_list(a.batches)) options.batches.push_back(std::stoull(batch));
  options.requests = a.requests;
  options.in_flight = a.in_flight;
  const JsonDocument doc = input.json();
  const std::string kind = JsonObjectReader(doc, "").get_string("kind");
  const auto& workloads = workload_kinds();
  if (kind != "cnn" && std::find(workloads.begin(), workloads.end(), kind) == workloads.end()) {
    std::vector<std::string> kinds = workloads;
    kinds.emplace_back("cnn");
    throw doc.error_at("/kind", fmt::format("unknown workload kind '{}' for trace ({})", kind, expected_kinds_text(kinds)));
  }
  const alloc::AllocTrace trace = kind == "cnn" ? serving_trace(preset, load_cnn_model(doc, a.workload_file), options)
                                                : serving_trace(preset, load_workload(doc, a.workload_file), options);
  write_trace(a, out, trace, {{"workload", a.workload_file}, {"preset", preset.name}});
  return 0;
}

}  // namespace

Subcommand add_trace_command(CLI::App& app) {
  auto args = std::make_shared<TraceArgs>();
  auto* cmd = app.add_subcommand("trace", "Write the allocation trace of a model (mlp or cnn) serving requests of varying batch size, "
                                           "or of a JAX loop calling an HLO program step after step");
  args->command = cmd;
  cmd->add_option("workload", args->workload_file, "Workload file of kind mlp, matmul or cnn (examples/), or an HLO program (*.hlo)")
      ->required()
      ->check(input_file());
  cmd->add_option("--batches", args->batches, "Workloads: batch size of each request, cycled (e.g. 1,8,32); required")
      ->check(list_of(unsigned_in(1, kMaxServingBatch), ListItems::MayRepeat));
  cmd->add_option("--requests", args->requests, "Number of requests (0: one per batch size)")
      ->check(unsigned_in(0, kMaxServingRequests));
  cmd->add_option("--in-flight", args->in_flight, "Requests interleaved layer by layer")->check(unsigned_in(1, 64));
  cmd->add_option("--steps", args->steps, "HLO programs: steps of the loop (required)")->check(unsigned_in(1, hlo::kMaxTraceSteps));
  cmd->add_option("--also", args->also, "HLO programs: a second program; steps alternate between the two (e.g. train, eval)")
      ->check(input_file());
  cmd->add_option("--preset", args->preset, "Hardware preset (tile sizes, VMEM)");
  add_common_options(cmd, args->common, "Print a JSON summary (the trace then needs -o)",
                     "Write the trace here instead of stdout (atomically; - for stdout)");
  return {cmd, [args] { return run_trace(*args); }, &args->common};
}

}  // namespace tpuemu::cli
