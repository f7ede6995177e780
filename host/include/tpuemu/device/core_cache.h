// SPDX-License-Identifier: Apache-2.0
// The core cache (docs/core-cache.md): a Verilated core for a preset that this build has not
// compiled in, built once by `tpuemu core build` (or the rtl backend on first use) into
// <cache>/<hash>/ as a shared object the rtl backend loads. The hash covers the preset's core
// fields, the RTL sources, the harness headers the core is compiled against and the Verilator
// options, so a core whose sources changed is never found again: it is rebuilt under a new hash.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "tpuemu/config/config.h"

namespace tpuemu {

// One field a Verilated core fixes: tpu_top's parameter and the preset's value ("VmemBanks",
// "vmem_banks", 1).
struct CoreField {
  std::string parameter;
  std::string key;
  std::uint64_t value = 0;
  bool operator==(const CoreField&) const = default;
};

// Where the cache is and what it builds from; the tools default to those this build tree was
// configured with (tpuemu/sim/core_build_config.h).
struct CoreCacheSettings {
  std::filesystem::path
      cache_dir;                  // $XDG_CACHE_HOME/tpuemu/cores, ~/.cache/tpuemu/cores without it
  std::filesystem::path rtl_dir;  // $TPUEMU_RTL_SOURCE_DIR, or the source tree's rtl/
  std::filesystem::path cmake;
  std::filesystem::path verilator_dir;  // holds verilator-config.cmake
  // The settings from the environment (XDG_CACHE_HOME, HOME, TPUEMU_RTL_SOURCE_DIR).
  static CoreCacheSettings from_environment();
};

// A complete entry of the cache: its manifest was written, so its module was built in full.
struct CachedCore {
  std::string preset;  // the preset it was first built for (presets with the same fields share it)
  std::vector<CoreField> fields;
  std::string hash;
  std::filesystem::path dir;     // <cache>/<hash>
  std::filesystem::path module;  // <dir>/core.so
  double build_seconds = 0;
  // Its hash is what its fields give with the sources as they are now (list() only: a stale
  // entry is never loaded, its preset's core is built again).
  bool current = true;
};

// The factory and identity symbols a core module exports (extern "C").
inline constexpr const char* kCoreModuleFactory = "tpuemu_core_module_make";
inline constexpr const char* kCoreModuleHash = "tpuemu_core_module_hash";

class CoreCache {
 public:
  explicit CoreCache(CoreCacheSettings settings);
  const CoreCacheSettings& settings() const { return settings_; }

  // The fields of `preset` a core fixes, in tpu_top's parameter order.
  static std::vector<CoreField> fields_of(const Preset& preset);
  // The cache key of the preset's core with the sources as they are now (reads every source; an
  // unreadable one throws Error naming it).
  std::string hash_of(const Preset& preset) const;
  // The complete entry for the preset's core, if one was built from the current sources.
  std::optional<CachedCore> find(const Preset& preset) const;
  // The entry for the preset's core, built first if there is none: `progress` gets one line
  // before a build starts. Concurrent builds of one core wait for each other (a lock file); a
  // build that fails leaves nothing in the cache but its log, named in the Error.
  CachedCore build(const Preset& preset,
                   const std::function<void(const std::string&)>& progress) const;
  // Every complete entry, sorted by preset then hash.
  std::vector<CachedCore> list() const;

 private:
  CoreCacheSettings settings_;
};

// The manifest of an entry (<dir>/manifest.json), written last by a build: nullopt when the
// directory holds none or one that does not name this directory's hash.
std::optional<CachedCore> read_core_manifest(const std::filesystem::path& dir);
void write_core_manifest(const CachedCore& core,
                         const std::vector<std::pair<std::string, std::string>>& sources);

}  // namespace tpuemu
