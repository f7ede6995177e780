// SPDX-License-Identifier: Apache-2.0
// tpuemu report DIR: report.html rendered again from the artefacts of `tpuemu run -o DIR` alone
// (summary.json, fragmentation.csv, trace.json), the same bytes run wrote (docs/profile.md).
#include <filesystem>
#include <memory>
#include <string>

#include "commands.h"
#include "outputs.h"
#include "tpuemu/base/input_file.h"
#include "tpuemu/profile/report_html.h"

namespace tpuemu::cli {

namespace {

struct ReportArgs {
  CommonOptions common;
  std::string dir;
};

// summary.json is read with the limit of every JSON file (16 MiB): a run's summary is kilobytes
// (the memory map has a line per buffer). trace.json grows with the run (an engine slice per
// instruction) and is one compact line: kTraceJsonInput.

profile::ReportFile read_artefact(const std::filesystem::path& dir, const char* name, const InputLimits& limits) {
  const std::filesystem::path path = dir / name;
  return {path.string(), read_input_file(path, limits)};
}

int run_report(const ReportArgs& a) {
  CommandOutputs out(a.common);
  const std::filesystem::path dir(a.dir);
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec))
    throw Error(a.dir, "not a directory (the artefacts of tpuemu run -o DIR)");
  for (const char* name : {"summary.json", "fragmentation.csv", "trace.json"}) out.input((dir / name).string());
  const std::string target = a.common.out.empty() ? (dir / "report.html").string() : a.common.out;
  out.check(target, "-o");
  std::string html = profile::report_html(read_artefact(dir, "summary.json", kJsonInput),
                                          read_artefact(dir, "fragmentation.csv", kTableInput),
                                          read_artefact(dir, "trace.json", kTraceJsonInput));
  const std::size_t bytes = html.size();
  out.file(target, std::move(html));
  if (a.common.json) out.print(json_text({{"report", target}, {"bytes", bytes}}));
  out.commit();
  return 0;
}

}  // namespace

Subcommand add_report_command(CLI::App& app) {
  auto a = std::make_shared<ReportArgs>();
  auto* cmd = app.add_subcommand("report", "Render report.html again from the artefacts of tpuemu run -o DIR");
  cmd->add_option("dir", a->dir, "The directory tpuemu run -o wrote (summary.json, fragmentation.csv, trace.json)")
      ->required()
      ->type_name("DIR")
      ->check(CLI::ExistingDirectory);  // a missing input is a usage error (exit 2), as for files
  add_common_options(cmd, a->common, "Print {\"report\": FILE, \"bytes\": N} when done",
                     "Write the page here (default DIR/report.html; - for stdout)");
  cmd->get_option("--out")->type_name("FILE");
  return {cmd, [a] { return run_report(*a); }, &a->common};
}

}  // namespace tpuemu::cli
