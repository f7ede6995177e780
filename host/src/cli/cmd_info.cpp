// SPDX-License-Identifier: Apache-2.0
// tpuemu info: the presets found (configs/presets, TPUEMU_CONFIG_DIR) and the device backends, or
// one preset described. A preset file that does not load is listed with its error and makes the
// exit code 1, but does not hide the others.
#include <memory>
#include <string>

#include <fmt/format.h>

#include "commands.h"
#include "tpuemu/alloc/allocator.h"
#include "tpuemu/compile/model.h"
#include "tpuemu/config/config.h"
#include "tpuemu/config/hbm_config.h"
#include "tpuemu/device/backend_registry.h"

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
  std::string text;
  nlohmann::json presets = nlohmann::json::array();
  std::string first_error;
  for (const auto& name : list_presets()) {
    try {
      const Preset p = load_preset(name);
      text += fmt::format("{:<14} DIM {:<4} VMEM {:>5} KiB  ACC {:>4} KiB  HBM {:g} B/cycle  {}\n", p.name, p.dim,
                          p.vmem_bytes() / 1024, p.acc_bytes() / 1024, memory_port_peak(p).bytes_per_cycle,
                          p.description);
      presets.push_back(to_json(p));
    } catch (const Error& e) {
      text += fmt::format("{:<14} invalid: {}\n", name, e.what());
      presets.push_back({{"name", name}, {"error", e.what()}});
      if (first_error.empty()) first_error = e.what();
    }
  }
  text += "backends:\n";
  nlohmann::json backends = nlohmann::json::array();
  const DeviceBackendRegistry registry = built_in_device_backends();
  for (const DeviceBackend& b : registry.backends()) {
    text += fmt::format("  {:<8} {}\n", b.name, b.description);
    backends.push_back({{"name", b.name}, {"description", b.description}});
  }
  text += "HBM timing sets:\n";
  nlohmann::json timing_sets = nlohmann::json::array();
  for (const auto& name : list_hbm_timing_sets()) {
    try {
      const HbmTimingSet t = load_hbm_timing_set(name);
      text += fmt::format("  {:<12} {} channels, tCK {:.3f} ns, peak {:.1f} GB/s\n", name, t.geometry.channels,
                          t.tck_ns(), t.peak_gbps());
      timing_sets.push_back({{"name", name}, {"channels", t.geometry.channels}, {"tck_ns", t.tck_ns()},
                             {"peak_gbps", t.peak_gbps()}});
    } catch (const Error& e) {
      text += fmt::format("  {:<12} invalid: {}\n", name, e.what());
      timing_sets.push_back({{"name", name}, {"error", e.what()}});
      if (first_error.empty()) first_error = e.what();
    }
  }
  text += "allocators:  ";
  for (const auto& name : alloc::allocator_names()) text += name + (name == alloc::kDefaultAllocator ? " (default) " : " ");
  text += "\nlayer kinds: ";
  for (const auto& kind : model_layer_kinds()) text += kind + " ";
  text += "\n";
  const BuiltCores cores = list_built_cores();
  text += cores.text;
  const nlohmann::json all = {{"presets", presets},
                              {"backends", backends},
                              {"hbm_timing_sets", timing_sets},
                              {"allocators", alloc::allocator_names()},
                              {"default_allocator", alloc::kDefaultAllocator},
                              {"layer_kinds", model_layer_kinds()},
                              {"core_cache", cores.json}};
  print(a.common, a.common.json ? json_text(all) : text);
  if (!first_error.empty()) throw Error(fmt::format("a preset does not load: {}", first_error));
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
