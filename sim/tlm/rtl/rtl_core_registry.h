// SPDX-License-Identifier: Apache-2.0
// Constructors of the Verilated cores of this build, as RtlCoreModels.
#pragma once

#include <memory>

#include "tpuemu/tlm/rtl_core_model.h"

namespace tpuemu::tlm {

std::unique_ptr<RtlCoreModel> make_rtl_core_small(BeatPort& port);
std::unique_ptr<RtlCoreModel> make_rtl_core_default(BeatPort& port);
#ifdef TPUEMU_HAVE_V4
std::unique_ptr<RtlCoreModel> make_rtl_core_tpu_v4_like(BeatPort& port);
#endif

}  // namespace tpuemu::tlm
