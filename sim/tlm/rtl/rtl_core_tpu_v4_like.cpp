// SPDX-License-Identifier: Apache-2.0
// The Verilated core of preset tpu-v4-like as an RtlCoreModel (one translation unit per model: each
// is a separate class with its own port widths).
#include "Vtpu_tpu_v4_like.h"
#include "rtl_core_model_impl.h"
#include "rtl_core_registry.h"

namespace tpuemu::tlm {

std::unique_ptr<RtlCoreModel> make_rtl_core_tpu_v4_like(BeatPort& port) {
  return std::make_unique<VerilatedRtlCoreModel<Vtpu_tpu_v4_like>>(port);
}

}  // namespace tpuemu::tlm
