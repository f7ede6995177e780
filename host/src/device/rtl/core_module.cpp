// SPDX-License-Identifier: Apache-2.0
// Loading a core module of the core cache (docs/core-cache.md). The module carries its own
// Verilator runtime with hidden symbols (RTLD_LOCAL), and imports from this executable only what
// the harness calls outside the core (make_core_memory, exported by core_module_imports.list).
#include "core_module.h"

#include <dlfcn.h>

#include <cstdio>
#include <string>

#include <fmt/format.h>

#include "tpuemu/device/core_cache.h"

namespace tpuemu {

namespace {

using Factory = void (*)(const sim::MemoryModelConfig&, std::unique_ptr<sim::CoreSim>&);
using HashFn = const char* (*)();

// The preset's complete entry, verified (inspect_core_entry) before anything maps its module:
// found, or built when the options allow it (a damaged entry is rebuilt), or refused in one line.
CachedCore cached_core(const Preset& preset, const DeviceOptions& options,
                       const std::string& stock) {
  const CoreCache cache(CoreCacheSettings::from_environment());
  CoreEntry entry = cache.entry(preset);
  if (entry.state == CoreEntry::State::complete) return std::move(entry.core);
  const std::string argument =
      options.preset_argument.empty() ? preset.name : options.preset_argument;
  if (!options.build_missing_core) {
    if (entry.state == CoreEntry::State::damaged)
      throw Error("device",
                  fmt::format("backend rtl: {}, and the core cache's entry for it ({}) is "
                              "damaged: {}; rebuild it with `tpuemu core build {}` (or run "
                              "without --no-build)",
                              stock, entry.core.dir.string(), entry.damage, argument));
    throw Error(
        "device",
        fmt::format(
            "backend rtl: {}, and the core cache ({}) has none for it either; build it with "
            "`tpuemu core build {}` (or run without --no-build)",
            stock, cache.settings().cache_dir.string(), argument));
  }
  CoreBuildOptions build;
  build.progress = [](const std::string& line) {
    std::fprintf(stderr, "tpuemu: %s\n", line.c_str());
    std::fflush(stderr);
  };
  build.stop = options.stop;
  return cache.build(preset, build).core;
}

}  // namespace

void ensure_cached_core(const Preset& preset, const DeviceOptions& options,
                        const std::string& stock) {
  (void)cached_core(preset, options, stock);
}

std::unique_ptr<sim::CoreSim> open_cached_core(const Preset& preset, const DeviceOptions& options,
                                               const std::string& stock,
                                               const sim::MemoryModelConfig& mem) {
  // The one load of a cached module: every path (run, exec, serve, Python) comes here, and only
  // with an entry whose module has the size and digest its manifest records.
  const CachedCore core = cached_core(preset, options, stock);
  // Never closed: the core's code and vtable live in the module, and Verilator's runtime does not
  // support being unloaded; dlopen of the same file again only counts a reference.
  void* handle = ::dlopen(core.module.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr)
    throw Error(core.module.string(), fmt::format("cannot load the core module: {}", ::dlerror()));
  auto hash = reinterpret_cast<HashFn>(::dlsym(handle, kCoreModuleHash));
  auto factory = reinterpret_cast<Factory>(::dlsym(handle, kCoreModuleFactory));
  if (hash == nullptr || factory == nullptr)
    throw Error(core.module.string(),
                "not a tpuemu core module (no factory); delete its directory to rebuild it");
  if (hash() != core.hash)
    throw Error(core.module.string(),
                fmt::format("the module was built as core {} but its manifest says {}; delete "
                            "its directory to rebuild it",
                            hash(), core.hash));
  std::unique_ptr<sim::CoreSim> sim;
  factory(mem, sim);
  return sim;
}

}  // namespace tpuemu
