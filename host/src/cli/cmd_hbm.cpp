// SPDX-License-Identifier: Apache-2.0
// tpuemu hbm: an HBM request file or a synthetic pattern through the RTL controller and the DRAM
// device model (docs/hbm-trace.md).
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include "commands.h"
#include "outputs.h"
#include "tpuemu/base/error.h"
#include "tpuemu/config/hbm_config.h"
#include "tpuemu/hbm_replay/hbm_trace.h"

namespace tpuemu::cli {

namespace {

struct HbmArgs {
  CommonOptions common;
  HbmCommandOptions hbm;
  bool probe = false;
  const CLI::Option* read_ratio = nullptr;
};

int run_probe(const HbmArgs& a, CommandOutputs& out) {
  const HbmProbeReport r = probe_hbm(hbm_command_timing_set(a.hbm));
  const nlohmann::json j = hbm_probe_to_json(r);
  if (!a.common.out.empty()) out.file(a.common.out, json_text(j));
  out.print(a.common.json ? json_text(j) : format_hbm_probe(r));
  out.commit();
  return 0;
}

int run_hbm(const HbmArgs& a) {
  CommandOutputs out(a.common);
  out.input(a.hbm.trace_file, "the --requests-file");
  if (std::filesystem::is_regular_file(a.hbm.config)) out.input(a.hbm.config, "the --timing-set file");
  out.check(a.common.out, "-o");
  if (a.probe) return run_probe(a, out);
  if (a.hbm.trace_file.empty() == a.hbm.pattern.empty()) {
    throw UsageError("hbm: give either --requests-file FILE or --pattern stream|random|stream-add (or --probe)");
  }
  if (a.hbm.pattern == "stream-add" && a.read_ratio->count() > 0) {
    throw UsageError("hbm: --read-ratio: stream-add has its own mix (two reads, then a write)");
  }
  if (!a.common.json && !a.common.quiet && isatty(STDERR_FILENO))
    std::fprintf(stderr, "tpuemu: replaying through the HBM controller on %s...\n", a.hbm.config.c_str());
  HbmCommandOptions options = a.hbm;
  options.stop = out.stop_token();
  const HbmReplayReport r = run_hbm_command(options);
  const nlohmann::json j = hbm_report_to_json(r);
  if (!a.common.out.empty()) out.file(a.common.out, json_text(j));
  out.print(a.common.json ? json_text(j) : format_hbm_report(r));
  out.commit();
  return 0;
}

}  // namespace

Subcommand add_hbm_command(CLI::App& app) {
  auto a = std::make_shared<HbmArgs>();
  HbmCommandOptions& o = a->hbm;
  auto* cmd = app.add_subcommand("hbm", "Replay HBM requests (a file or a pattern) through the RTL controller and DRAM model");
  auto* file = cmd->add_option("--requests-file", o.trace_file,
                               "Requests, one '<hex address> <READ|WRITE> <cycle>' per line (docs/hbm-trace.md)")
                   ->check(input_file());
  auto* pattern = cmd->add_option("--pattern", o.pattern,
                                  "Synthetic requests instead: stream, random or stream-add (read a[i], read b[i], write c[i])")
                      ->check(CLI::IsMember({"stream", "random", "stream-add"}))
                      ->excludes(file);
  cmd->add_option("--requests", o.requests, "Pattern: number of requests")
      ->check(unsigned_in(1, kMaxHbmPatternRequests))
      ->needs(pattern);
  cmd->add_option("--timing-set", o.config, "HBM timing set (hbm2-2000, hbm2e-3200, hbm3-6400) or a JSON file");
  a->read_ratio = cmd->add_option("--read-ratio", o.read_ratio, "Pattern: fraction of reads (stream, random)")
                      ->check(finite_in(0.0, 1.0))
                      ->needs(pattern);
  cmd->add_option("--seed", o.seed, "Pattern: random seed")->check(any_unsigned())->needs(pattern);
  auto* probe = cmd->add_flag("--probe", a->probe,
                               "Single reads alone: hit, miss and conflict latency next to the JEDEC floor")
                     ->excludes(file)
                     ->excludes(pattern);
  cmd->add_option("--page-policy", o.page_policy, "Controller page policy: open or closed")
      ->check(CLI::IsMember({"open", "closed"}))
      ->excludes(probe);
  cmd->add_option("--map", o.address_map,
                  "Address map: the five fields ro, ba, bg, ch, co in any order, most significant first "
                  "(default: the timing set's)")
      ->check(CLI::Validator(
          [](std::string& text) -> std::string {
            try {
              (void)HbmAddressMap::parse(text);
            } catch (const Error& e) {
              return e.what();
            }
            return {};
          },
          "ORDER"));
  cmd->add_option("--window", o.window, "Requests held between their cycle and their answer (>= 256)")
      ->check(unsigned_in(256, 1u << 20))
      ->excludes(probe);
  cmd->add_flag("--in-order", o.in_order,
                "A blocking requester: offer requests strictly in their order (default: a FIFO per channel)")
      ->excludes(probe);
  add_common_options(cmd, a->common, "Print the statistics as JSON", "Also write the JSON statistics here (- for stdout)");
  return {cmd, [a] { return run_hbm(*a); }, &a->common};
}

}  // namespace tpuemu::cli
