// tpuemu trace: the allocation trace of a model served with varying batch sizes
// (docs/alloc-trace.md); examples/traces/*.csv are made with it.
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "commands.h"
#include "tpuemu/alloc/alloc_trace.h"
#include "tpuemu/base/error.h"
#include "tpuemu/compile/workload.h"
#include "tpuemu/config/config.h"
#include "tpuemu/run/serving_trace.h"

namespace tpuemu::cli {

namespace {

struct TraceArgs {
  std::string workload_file;
  std::vector<std::size_t> batches;
  std::size_t requests = 0;
  std::size_t in_flight = 2;
  std::string preset = "default";
  std::string out_file;
};

int run_trace(const TraceArgs& a) {
  const Preset preset = load_preset(a.preset);
  ServingOptions options;
  options.batches = a.batches;
  options.requests = a.requests;
  options.in_flight = a.in_flight;
  const alloc::AllocTrace trace = workload_kind(a.workload_file) == "cnn"
                                      ? serving_trace(preset, load_cnn_model(a.workload_file), options)
                                      : serving_trace(preset, load_workload(a.workload_file), options);
  if (a.out_file.empty()) std::cout << alloc::format_alloc_trace(trace);
  else alloc::write_alloc_trace(a.out_file, trace);
  return 0;
}

}  // namespace

Subcommand add_trace_command(CLI::App& app) {
  auto args = std::make_shared<TraceArgs>();
  auto* cmd = app.add_subcommand("trace", "Write the allocation trace of a model (mlp or cnn) serving requests of varying batch size");
  cmd->add_option("workload", args->workload_file, "Workload file of kind mlp, matmul or cnn (examples/)")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--batches", args->batches, "Batch size of each request, cycled (e.g. 1,8,32)")
      ->required()
      ->delimiter(',');
  cmd->add_option("--requests", args->requests, "Number of requests (default: one per batch size)");
  cmd->add_option("--in-flight", args->in_flight, "Requests interleaved layer by layer")->check(CLI::Range(1, 64));
  cmd->add_option("--preset", args->preset, "Hardware preset (tile sizes, VMEM)");
  cmd->add_option("--out", args->out_file, "Write the trace here instead of stdout (atomically)");
  return {cmd, [args] { return run_trace(*args); }};
}

}  // namespace tpuemu::cli
