// SPDX-License-Identifier: Apache-2.0
// The Verilated core of one preset behind the CoreSim interface.
#include "Vtpu_default.h"
#include "core_sim_impl.h"
#include "core_registry.h"

namespace tpuemu::sim {

std::unique_ptr<CoreSim> make_core_default(const MemoryModelConfig& mem) {
  return std::make_unique<VerilatedCoreSim<Vtpu_default>>(16, mem);
}

}  // namespace tpuemu::sim
