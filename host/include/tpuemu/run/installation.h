// SPDX-License-Identifier: Apache-2.0
// What this installation offers: the presets found (configs/presets, TPUEMU_CONFIG_DIR), the
// device backends, the HBM timing sets, the allocators, the model layer kinds and the cores of the
// core cache. `tpuemu info` prints it; Python's tpuemu.info() returns the same JSON.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "tpuemu/device/core_cache.h"

namespace tpuemu {

struct InstallationInfo {
  std::string text;         // the listing `tpuemu info` prints
  nlohmann::json json;      // the same as `tpuemu info --json` prints it
  // The first preset or timing set that does not load, or empty. Such a file is listed with its
  // error and does not hide the others.
  std::string first_error;
};

InstallationInfo describe_installation();

// One core of the core cache as `tpuemu info --json` and `tpuemu core build --json` print it.
nlohmann::json core_to_json(const CachedCore& core);

}  // namespace tpuemu
