// SPDX-License-Identifier: Apache-2.0
// The module of the Verilated core (rtl_core.h), instantiated once for every user of the header.
#include "tpuemu/tlm/rtl_core.h"

namespace tpuemu::tlm {

template class ClockedCoreModule<RtlCoreModel>;

}  // namespace tpuemu::tlm
