// SPDX-License-Identifier: Apache-2.0
#include "tpuemu/run/installation.h"

#include <optional>
#include <vector>

#include <fmt/format.h>

#include "tpuemu/alloc/allocator.h"
#include "tpuemu/compile/model.h"
#include "tpuemu/config/config.h"
#include "tpuemu/config/hbm_config.h"
#include "tpuemu/device/backend_registry.h"

namespace tpuemu {

nlohmann::json core_to_json(const CachedCore& core) {
  nlohmann::json fields = nlohmann::json::object();
  for (const CoreField& f : core.fields) fields[f.key] = f.value;
  return {{"preset", core.preset},
          {"hash", core.hash},
          {"fields", fields},
          {"dir", core.dir.string()},
          {"module", core.module.string()},
          {"current", core.current},
          {"damaged", core.damage.empty() ? nlohmann::json() : nlohmann::json(core.damage)}};
}

namespace {

// The cores of the core cache: "built cores (DIR):" and a line per core; the same as JSON.
void list_built_cores(InstallationInfo& out, nlohmann::json& json) {
  json = {{"cache", nullptr}, {"cores", nlohmann::json::array()}};
  std::optional<CoreCache> cache;
  try {
    cache.emplace(CoreCacheSettings::from_environment());
  } catch (const Error& e) {
    out.text += fmt::format("built cores: none ({})\n", e.what());
    return;
  }
  const std::string dir = cache->settings().cache_dir.string();
  json["cache"] = dir;
  const std::vector<CachedCore> cores = cache->list();
  if (cores.empty()) {
    out.text += fmt::format("built cores: none in {} (tpuemu core build PRESET)\n", dir);
    return;
  }
  out.text += fmt::format("built cores ({}):\n", dir);
  for (const CachedCore& c : cores) {
    std::string fields;
    for (const CoreField& f : c.fields) fields += fmt::format("{}{} {}", fields.empty() ? "" : ", ", f.key, f.value);
    const std::string state =
        !c.damage.empty() ? fmt::format("  (damaged: {}; rebuilt on next use)", c.damage)
        : c.current       ? ""
                          : "  (stale: its sources changed since; rebuilt on next use)";
    out.text += fmt::format("  {:<14} {}  {}{}\n    {}\n", c.preset.empty() ? "?" : c.preset,
                            c.hash, fields.empty() ? "fields unknown" : fields, state,
                            c.module.string());
    json["cores"].push_back(core_to_json(c));
  }
}

}  // namespace

InstallationInfo describe_installation() {
  InstallationInfo out;
  std::string& text = out.text;
  nlohmann::json presets = nlohmann::json::array();
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
      if (out.first_error.empty()) out.first_error = e.what();
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
      if (out.first_error.empty()) out.first_error = e.what();
    }
  }
  text += "allocators:  ";
  for (const auto& name : alloc::allocator_names()) text += name + (name == alloc::kDefaultAllocator ? " (default) " : " ");
  text += "\nlayer kinds: ";
  for (const auto& kind : model_layer_kinds()) text += kind + " ";
  text += "\n";
  nlohmann::json cores;
  list_built_cores(out, cores);
  out.json = {{"presets", presets},
              {"backends", backends},
              {"hbm_timing_sets", timing_sets},
              {"allocators", alloc::allocator_names()},
              {"default_allocator", alloc::kDefaultAllocator},
              {"layer_kinds", model_layer_kinds()},
              {"core_cache", cores}};
  return out;
}

}  // namespace tpuemu
