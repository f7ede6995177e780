// tpuemu trace: the allocation trace of a model served with varying batch sizes
// (docs/alloc-trace.md); examples/traces/*.csv are made with it.
#include <algorithm>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "commands.h"
#include "outputs.h"
#include "tpuemu/alloc/alloc_trace.h"
#include "tpuemu/base/error.h"
#include "tpuemu/base/json.h"
#include "tpuemu/compile/workload.h"
#include "tpuemu/config/config.h"
#include "tpuemu/run/serving_trace.h"

namespace tpuemu::cli {

namespace {

struct TraceArgs {
  CommonOptions common;
  std::string workload_file;
  std::string batches;  // "1,8,32", checked when parsed
  std::size_t requests = 0;
  std::size_t in_flight = 2;
  std::string preset = "default";
};

int run_trace(const TraceArgs& a) {
  CommandOutputs out(a.common);
  out.input(a.workload_file, "the workload");
  if (std::filesystem::is_regular_file(a.preset)) out.input(a.preset, "the --preset file");
  if (a.common.out != "-") out.check(a.common.out, "-o");
  const Preset preset = load_preset(a.preset);
  ServingOptions options;
  for (const std::string& batch : split_list(a.batches)) options.batches.push_back(std::stoull(batch));
  options.requests = a.requests;
  options.in_flight = a.in_flight;
  // Read once (standard input or a pipe works), then handed to the reader of its kind.
  const JsonDocument doc = JsonDocument::load(a.workload_file);
  const std::string kind = JsonObjectReader(doc, "").get_string("kind");
  const auto& workloads = workload_kinds();
  if (kind != "cnn" && std::find(workloads.begin(), workloads.end(), kind) == workloads.end()) {
    std::vector<std::string> kinds = workloads;
    kinds.emplace_back("cnn");
    throw doc.error_at("/kind", fmt::format("unknown workload kind '{}' for trace ({})", kind, expected_kinds_text(kinds)));
  }
  const alloc::AllocTrace trace = kind == "cnn" ? serving_trace(preset, load_cnn_model(doc, a.workload_file), options)
                                                : serving_trace(preset, load_workload(doc, a.workload_file), options);
  if (a.common.json) {
    // stdout stays JSON: a summary; the trace itself (CSV) goes to -o
    if (a.common.out.empty() || a.common.out == "-")
      throw UsageError("trace --json", "the trace is CSV: name its file with -o FILE; stdout gets a JSON summary");
    out.file(a.common.out, alloc::format_alloc_trace(trace));
    out.print(json_text({{"workload", a.workload_file}, {"preset", preset.name}, {"events", trace.events.size()},
                         {"spaces", trace.spaces()}, {"output", a.common.out}}));
  } else if (a.common.out.empty() || a.common.out == "-") {
    out.print(alloc::format_alloc_trace(trace));
  } else {
    out.file(a.common.out, alloc::format_alloc_trace(trace));
  }
  out.commit();
  return 0;
}

}  // namespace

Subcommand add_trace_command(CLI::App& app) {
  auto args = std::make_shared<TraceArgs>();
  auto* cmd = app.add_subcommand("trace", "Write the allocation trace of a model (mlp or cnn) serving requests of varying batch size");
  cmd->add_option("workload", args->workload_file, "Workload file of kind mlp, matmul or cnn (examples/)")
      ->required()
      ->check(input_file());
  cmd->add_option("--batches", args->batches, "Batch size of each request, cycled (e.g. 1,8,32)")
      ->required()
      ->check(list_of(unsigned_in(1, kMaxServingBatch), ListItems::MayRepeat));
  cmd->add_option("--requests", args->requests, "Number of requests (0: one per batch size)")
      ->check(unsigned_in(0, kMaxServingRequests));
  cmd->add_option("--in-flight", args->in_flight, "Requests interleaved layer by layer")->check(unsigned_in(1, 64));
  cmd->add_option("--preset", args->preset, "Hardware preset (tile sizes, VMEM)");
  add_common_options(cmd, args->common, "Print a JSON summary (the trace then needs -o)",
                     "Write the trace here instead of stdout (atomically; - for stdout)");
  return {cmd, [args] { return run_trace(*args); }, &args->common};
}

}  // namespace tpuemu::cli
