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

#include "tpuemu/base/stop.h"
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
  // $XDG_CACHE_HOME/tpuemu/cores; ~/.cache/tpuemu/cores when XDG_CACHE_HOME is unset, empty or
  // relative (the XDG Base Directory specification: a relative path is invalid and ignored).
  std::filesystem::path cache_dir;
  std::filesystem::path rtl_dir;  // $TPUEMU_RTL_SOURCE_DIR, or the source tree's rtl/
  std::filesystem::path cmake;
  std::filesystem::path verilator_dir;  // holds verilator-config.cmake
  // The settings from the environment (XDG_CACHE_HOME, HOME, TPUEMU_RTL_SOURCE_DIR).
  static CoreCacheSettings from_environment();
};

// An entry of the cache as its manifest describes it.
struct CachedCore {
  std::string preset;  // the preset it was first built for (presets with the same fields share it)
  std::vector<CoreField> fields;
  std::string hash;
  std::filesystem::path dir;     // <cache>/<hash>
  std::filesystem::path module;  // <dir>/core.so
  // The module's size and FNV-1a digest when it was built: an entry is loaded only while its
  // module still has both (a truncated or overwritten core.so crashes the process that maps it).
  std::uint64_t module_bytes = 0;
  std::string module_digest;
  double build_seconds = 0;
  // Its hash is what its fields give with the sources as they are now (list() only: a stale
  // entry is never loaded, its preset's core is built again).
  bool current = true;
  // Why the entry cannot be loaded (list() only; empty: it is complete).
  std::string damage;
};

// What a directory of the cache holds, found without loading anything (inspect_core_entry).
struct CoreEntry {
  enum class State {
    absent,    // no such directory: never built (a build in progress works in a dot directory)
    damaged,   // a directory that is no whole entry: see `damage`; rebuilt, never loaded
    complete,  // its manifest parses and names the directory's key, its module is the one built
  };
  State state = State::absent;
  // complete: the entry. damaged: what the manifest says when it parses (for `tpuemu info`),
  // otherwise the hash (the directory's name) and the paths only.
  CachedCore core;
  std::string damage;  // damaged: why, one line ("core.so has 300000 bytes, the manifest 4190232")
};

// How a build reports and stops.
struct CoreBuildOptions {
  // One line before a build starts, and one when it waits for another process's build of the
  // same core (the lock named); not called when the core is found.
  std::function<void(const std::string&)> progress;
  // Polled while the build waits for the lock and while its tools run: a stop kills the tools'
  // process group, removes the build's directory and throws Interrupted within a second.
  StopToken stop;
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
  // The preset's entry for the current sources, verified (inspect_core_entry).
  CoreEntry entry(const Preset& preset) const;
  // The complete entry for the preset's core, if one was built from the current sources.
  std::optional<CachedCore> find(const Preset& preset) const;
  // The complete entry for the preset's core, built first if there is none or it is damaged.
  // Concurrent builds of one core wait for each other (a lock file); a build that fails leaves
  // nothing in the cache but its log, named in the Error; a stopped one leaves nothing at all.
  struct Built {
    CachedCore core;
    bool built_now = false;  // this call built it (otherwise it was found)
  };
  Built build(const Preset& preset, const CoreBuildOptions& options) const;
  // Every entry, complete or damaged, sorted by preset then hash.
  std::vector<CachedCore> list() const;

 private:
  CoreCacheSettings settings_;
};

// The one check of an entry before its module is loaded: <dir>/manifest.json parses
// (parse_core_manifest), and <dir>/core.so has the size and digest it records. Reads only; never
// throws for what the directory holds (a damage is a state), only for an unreadable module.
CoreEntry inspect_core_entry(const std::filesystem::path& dir);
// The text of the manifest of the entry in `dir`: throws Error "<dir>/manifest.json[:line:col]:
// <pointer>: <cause>" for anything but a manifest of this format naming the directory's key and
// its module "core.so" with its size and digest. No file is read.
CachedCore parse_core_manifest(std::string_view text, const std::filesystem::path& dir);
// Writes core.dir/manifest.json, recording the size and digest of core.dir/core.so as it is now.
void write_core_manifest(const CachedCore& core,
                         const std::vector<std::pair<std::string, std::string>>& sources);

}  // namespace tpuemu
