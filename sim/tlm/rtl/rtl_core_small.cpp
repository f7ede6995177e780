// SPDX-License-Identifier: Apache-2.0
// The Verilated core of preset small as an RtlCoreModel (one translation unit per model: each
// is a separate class with its own port widths).
#include "Vtpu_small.h"
#include "rtl_core_model_impl.h"
#include "rtl_core_registry.h"

namespace tpuemu::tlm {

std::unique_ptr<RtlCoreModel> make_rtl_core_small(BeatPort& port) {
  return std::make_unique<VerilatedRtlCoreModel<Vtpu_small>>(port);
}

}  // namespace tpuemu::tlm
