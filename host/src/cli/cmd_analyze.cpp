// SPDX-License-Identifier: Apache-2.0
// tpuemu analyze: a JAX/XLA program's memory analysed without a device (docs/hlo.md) - its
// schedules' peaks, every placement policy's heap, fragmentation and padding. Running a program
// on a device is `tpuemu run`'s; this command takes the options of the analysis only.
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "commands.h"
#include "hlo_run.h"
#include "tpuemu/alloc/allocator.h"
#include "tpuemu/base/text.h"

namespace tpuemu::cli {

namespace {

struct AnalyzeArgs {
  CommonOptions common;
  std::string program;
  std::string preset;
  std::string schedule;
  std::string allocator = "all";
  std::string hbm_capacity;
  bool untiled = false;
  std::string report_file;
};

int run_analyze(const AnalyzeArgs& a) {
  // Read once (standard input and FIFOs cannot be read twice) and known by its content.
  WorkloadInput input = read_workload_input(a.program);
  if (!input.hlo) {
    throw UsageError(input.source,
                     fmt::format("not HLO text (a JAX/XLA program starts with HloModule; docs/hlo.md): analyze reads "
                                 "programs, `tpuemu run {}` runs a workload",
                                 printable(a.program)));
  }
  HloRunArgs h;
  h.common = &a.common;
  h.file = a.program;
  h.input = &input;
  h.preset = a.preset;
  h.schedule = a.schedule;
  h.allocator = a.allocator;
  h.hbm_capacity = a.hbm_capacity;
  h.untiled = a.untiled;
  h.report_file = a.report_file;
  return run_hlo(h);
}

}  // namespace

Subcommand add_analyze_command(CLI::App& app) {
  auto a = std::make_shared<AnalyzeArgs>();
  auto* cmd = app.add_subcommand(
      "analyze", "Analyse the memory of a JAX/XLA program (HLO text) without a device: each schedule's peak, each "
                 "placement policy's heap, fragmentation and padding (docs/hlo.md; `tpuemu run` runs a program)");
  cmd->add_option("program", a->program, "The program as HLO text (*.hlo, XLA dumps), or - for standard input")
      ->required()
      ->check(input_file());
  cmd->add_option("--preset", a->preset,
                  "Hardware preset whose lanes size the tiles and whose VMEM holds S(1) buffers: small, default, "
                  "tpu-v4-like, or a JSON file (default: tpu-v4-like)");
  cmd->add_option("--schedule", a->schedule,
                  "The instruction order - text, dfs, list or best (default: text when the module is scheduled, "
                  "else best)")
      ->check(one_of({"text", "dfs", "list", "best"}));
  cmd->add_option("--allocator", a->allocator,
                  "HBM placement policy: xla (XLA's buffer assignment), planner (the offline planner), bfc, "
                  "first-fit, best-fit, buddy, tlsf, or all")
      ->check(one_of([] {
        std::vector<std::string> names = kHloOnlyPolicies;
        const std::vector<std::string> runtime = alloc::allocator_names();
        names.insert(names.end(), runtime.begin(), runtime.end());
        names.emplace_back("all");
        return names;
      }()));
  cmd->add_option("--hbm-capacity", a->hbm_capacity,
                  "HBM capacity the program must fit in (KiB/MiB/GiB suffixes): exit 1 with the out-of-memory "
                  "report when it does not")
      ->check(byte_count());
  cmd->add_flag("--untiled", a->untiled, "Row-major sizes instead of TPU tiles");
  cmd->add_option("--report", a->report_file, "Also write the JSON analysis to this file (- for stdout)")
      ->type_name("FILE");
  add_common_options(cmd, a->common, "Print the analysis as JSON",
                     "Write the artefacts here: summary.json, fragmentation.csv, memory.pb.gz, report.html "
                     "(docs/hlo.md, \"Artefacts\")");
  cmd->get_option("--out")->type_name("DIR");
  return {cmd, [a] { return run_analyze(*a); }, &a->common};
}

}  // namespace tpuemu::cli
