// SPDX-License-Identifier: Apache-2.0
// The Verilated core of one preset behind the CoreSim interface.
#include "Vtpu_tpu_v4_like.h"
#include "core_sim_impl.h"
#include "core_registry.h"

namespace tpuemu::sim {

std::unique_ptr<CoreSim> make_core_tpu_v4_like(const MemoryModelConfig& mem) {
  return std::make_unique<VerilatedCoreSim<Vtpu_tpu_v4_like>>(128, mem);
}

}  // namespace tpuemu::sim
