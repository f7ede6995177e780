// SPDX-License-Identifier: Apache-2.0
// A preset's Verilated core from the core cache (tpuemu/device/core_cache.h): found or built, then
// loaded as a shared object. The rtl backend's path for a preset this build has not compiled in.
#pragma once

#include <memory>

#include "tpuemu/config/config.h"
#include "tpuemu/device/device.h"
#include "tpuemu/sim/core_sim.h"

namespace tpuemu {

// Throws Error when the preset's core is neither in the cache nor may be built
// (options.build_missing_core), naming the `tpuemu core build` command that builds it; builds it
// otherwise (a progress line on stderr). `stock` describes why the compiled-in cores do not do.
void ensure_cached_core(const Preset& preset, const DeviceOptions& options,
                        const std::string& stock);
// The preset's core from the cache, built first if allowed (as ensure_cached_core).
std::unique_ptr<sim::CoreSim> open_cached_core(const Preset& preset, const DeviceOptions& options,
                                               const std::string& stock,
                                               const sim::MemoryModelConfig& mem);

}  // namespace tpuemu
