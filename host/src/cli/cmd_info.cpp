// SPDX-License-Identifier: Apache-2.0
// tpuemu info: the presets found (configs/presets, TPUEMU_CONFIG_DIR) and the device backends, or
// one preset described. A preset file that does not load is listed with its error and makes the
// exit code 1, but does not hide the others.
#include <memory>
#include <string>

#include <fmt/format.h>

#include "commands.h"
#include "tpuemu/config/config.h"
#include "tpuemu/config/hbm_config.h"
#include "tpuemu/run/installation.h"

namespace tpuemu::cli {

namespace {

struct InfoArgs {
  CommonOptions common;
  std::string preset;
};

int run_info(const InfoArgs& a) {
  if (!a.preset.empty()) {
    const Preset p = load_preset(a.preset);
    print(a.common, a.common.json ? json_text(to_json(p))
                                  : describe(p) + fmt::format("  port       {}\n\n", memory_port_peak(p).basis));
    return 0;
  }
  const InstallationInfo info = describe_installation();
  print(a.common, a.common.json ? json_text(info.json) : info.text);
  if (!info.first_error.empty()) throw Error(fmt::format("a preset does not load: {}", info.first_error));
  return 0;
}

}  // namespace

Subcommand add_info_command(CLI::App& app) {
  auto a = std::make_shared<InfoArgs>();
  auto* cmd = app.add_subcommand("info", "List the presets, backends, HBM timing sets, allocators, layer kinds and built cores, or describe one preset");
  cmd->add_option("--preset", a->preset, "Preset to describe (a name or a JSON file)");
  add_common_options(cmd, a->common, "Print the lists as JSON", "");
  return {cmd, [a] { return run_info(*a); }, &a->common};
}

}  // namespace tpuemu::cli
