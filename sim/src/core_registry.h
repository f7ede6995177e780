// SPDX-License-Identifier: Apache-2.0
// Constructors of the Verilated cores that this build contains.
#pragma once

#include <memory>

#include "tpuemu/sim/core_sim.h"

namespace tpuemu::sim {

std::unique_ptr<CoreSim> make_core_small(const MemoryModelConfig& mem);
std::unique_ptr<CoreSim> make_core_default(const MemoryModelConfig& mem);
#ifdef TPUEMU_HAVE_V4
std::unique_ptr<CoreSim> make_core_tpu_v4_like(const MemoryModelConfig& mem);
#endif

}  // namespace tpuemu::sim
