// SPDX-License-Identifier: Apache-2.0
#include "hlo_run.h"

#include <cstdio>

#include <fmt/format.h>

#include "hlo_artefacts.h"
#include "outputs.h"
#include "tpuemu/alloc/memory_space.h"
#include "tpuemu/base/text.h"
#include "tpuemu/config/config.h"
#include "tpuemu/hlo/analysis.h"
#include "tpuemu/hlo/hlo_parser.h"

namespace tpuemu::cli {

int run_hlo(const HloRunArgs& a) {
  CommandOutputs out(*a.common);
  out.input(a.file, "the HLO program");
  if (!a.preset.empty() && std::filesystem::is_regular_file(a.preset)) out.input(a.preset, "the --preset file");
  out.check(a.report_file, "--report");
  if (a.common->out == "-") throw UsageError("-o -", "writes a directory of artefacts, not a stream (for the analysis on stdout, give --json)");
  if (!a.common->out.empty()) out.check_folder(a.common->out, kHloArtefacts, "-o");
  hlo::AnalysisOptions options;
  options.schedule = a.schedule;
  if (!a.allocator.empty() && a.allocator != "all") options.policies = {a.allocator};
  options.sizes.tiled = !a.untiled;
  const Preset preset = load_preset(a.preset.empty() ? "tpu-v4-like" : a.preset);
  options.sizes.lanes = preset.dim;
  options.vmem_capacity = preset.vmem_bytes();  // buffers the program places in S(1)
  if (!a.hbm_capacity.empty()) options.hbm_capacity = alloc::parse_bytes(a.hbm_capacity);
  options.stop = out.stop_token();
  const hlo::Module module = a.input->take_hlo_module();
  const hlo::Analysis analysis = hlo::analyze(module, options);
  const nlohmann::json j = hlo::analysis_to_json(analysis);
  if (!a.report_file.empty()) out.file(a.report_file, json_text(j));
  // With the analysis also when the program does not fit: the map shows what would not.
  if (!a.common->out.empty()) write_hlo_artefacts(out, a.common->out, analysis, json_text(j));
  out.print(a.common->json ? json_text(j) : hlo::format_analysis(analysis));
  out.commit();
  if (!analysis.out_of_memory()) return 0;
  // The report (text or JSON) is on stdout whole; stderr gets its first line, as for any error.
  const std::string report = hlo::out_of_memory_report(analysis);
  std::fprintf(stderr, "tpuemu: error: %s: %s\n", printable(a.file).c_str(), report.substr(0, report.find('\n')).c_str());
  return kExitError;
}

}  // namespace tpuemu::cli
