// SPDX-License-Identifier: Apache-2.0
// The Verilated core of one preset behind the CoreSim interface.
#include "Vtpu_small.h"
#include "core_sim_impl.h"
#include "core_registry.h"

namespace tpuemu::sim {

std::unique_ptr<CoreSim> make_core_small(const MemoryModelConfig& mem) {
  return std::make_unique<VerilatedCoreSim<Vtpu_small>>(8, mem);
}

}  // namespace tpuemu::sim
