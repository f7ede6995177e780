// SPDX-License-Identifier: Apache-2.0
#include "tpuemu/sim_setup/core_shape.h"

namespace tpuemu {

sim::CoreShape core_shape_from(const Preset& preset) {
  return {.dim = preset.dim,
          .vmem_rows = preset.vmem_rows,
          .vmem_banks = preset.vmem_banks,
          .acc_rows = preset.acc_rows,
          .smem_words = preset.smem_words,
          .queue_depth = preset.queue_depth,
          .mem_outstanding = preset.mem_outstanding};
}

}  // namespace tpuemu
