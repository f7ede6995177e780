// SPDX-License-Identifier: Apache-2.0
// The Verilated core of preset default as an RtlCoreModel (one translation unit per model: each
// is a separate class with its own port widths).
#include "Vtpu_default.h"
#include "rtl_core_model_impl.h"
#include "rtl_core_registry.h"

namespace tpuemu::tlm {

std::unique_ptr<RtlCoreModel> make_rtl_core_default(BeatPort& port) {
  return std::make_unique<VerilatedRtlCoreModel<Vtpu_default>>(port);
}

}  // namespace tpuemu::tlm
