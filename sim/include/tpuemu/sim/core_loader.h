// SPDX-License-Identifier: Apache-2.0
// Where a preset goes when this build has no Verilated core for it. The cores compiled into the
// build come from the generated table (core_factories.h, one entry per preset of
// TPUEMU_CORE_PRESETS); a core built at run time (`tpuemu core build`, a shared object in the
// user's cache) is found by a loader the caller passes in, so the simulator keeps no registry of
// its own: make_core_sim(preset, mem, loader) tries the table, then the loader, then refuses.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "tpuemu/sim/core_sim.h"

namespace tpuemu::sim {

// Returns the core for a preset the build has not compiled in. It may throw (a core that cannot be
// built or loaded); it is called only for such presets.
using CoreLoader = std::function<std::unique_ptr<CoreSim>(const std::string& preset,
                                                          const MemoryModelConfig& mem)>;

// make_core_sim(preset, mem) with a fall-through: a preset without a compiled-in core is handed to
// `loader` when one is given; without a loader it is refused as make_core_sim refuses it.
std::unique_ptr<CoreSim> make_core_sim(const std::string& preset, const MemoryModelConfig& mem,
                                       const CoreLoader& loader);

}  // namespace tpuemu::sim
