// SPDX-License-Identifier: Apache-2.0
// The module of the TLM core model (tlm_core.h), instantiated once for every user of the header.
#include "tpuemu/tlm/tlm_core.h"

namespace tpuemu::tlm {

template class ClockedCoreModule<CoreModel>;

}  // namespace tpuemu::tlm
