// SPDX-License-Identifier: Apache-2.0
// tpuemu core build: a preset's Verilated core built into the core cache (docs/core-cache.md), for
// the rtl backend to load; a core already built from the current sources is reused.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "commands.h"
#include "outputs.h"
#include "tpuemu/config/config.h"
#include "tpuemu/device/core_cache.h"
#include "tpuemu/run/installation.h"

namespace tpuemu::cli {

namespace {

struct CoreArgs {
  CommonOptions common;
  std::string action;  // "build", the one action so far
  std::string preset;
};

int run_core_build(const CoreArgs& a) {
  CommandOutputs out(a.common);
  if (std::filesystem::is_regular_file(a.preset)) out.input(a.preset, "the preset file");
  const Preset preset = load_preset(a.preset);
  const CoreCache cache(CoreCacheSettings::from_environment());
  CoreBuildOptions options;
  options.progress = [](const std::string& line) {
    std::fprintf(stderr, "tpuemu: %s\n", line.c_str());
    std::fflush(stderr);
  };
  options.stop = out.stop_token();
  const auto [core, built] = cache.build(preset, options);
  // A stop after the entry was published: it stays (it is whole), and the line says so.
  if (built && out.interrupted())
    throw Interrupted(fmt::format("interrupted; the core was built and cached in {}; nothing else "
                                  "was written",
                                  core.dir.string()));
  nlohmann::json j = core_to_json(core);
  j["built"] = built;
  if (built) j["build_seconds"] = core.build_seconds;
  out.print(a.common.json ? json_text(j)
                          : fmt::format("{}: core {} {} ({})\n", a.preset, core.hash,
                                        built ? fmt::format("built in {:.0f} s", core.build_seconds)
                                              : "already built",
                                        core.module.string()));
  out.commit();
  return 0;
}

}  // namespace

Subcommand add_core_command(CLI::App& app) {
  auto a = std::make_shared<CoreArgs>();
  // `core build PRESET`: the action is a word, not a nested subcommand, so that `core --help` shows
  // every option like any subcommand's (docs/cli.md).
  auto* cmd =
      app.add_subcommand("core",
                         "Build a preset's Verilated core into the core cache for --backend rtl "
                         "(tpuemu core build PRESET; docs/core-cache.md)");
  cmd->add_option("action", a->action,
                  "build: verilate and compile the preset's core into $XDG_CACHE_HOME/tpuemu/cores "
                  "(once: a core built from the current sources is reused, a damaged one rebuilt)")
      ->required()
      ->check(one_of({"build"}, "ACTION"));
  cmd->add_option("preset", a->preset, "Hardware preset: a name or a JSON file")->required();
  add_common_options(cmd, a->common, "Print the built core as JSON", "");
  return {cmd, [a] { return run_core_build(*a); }, &a->common};
}

}  // namespace tpuemu::cli
