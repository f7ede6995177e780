// SPDX-License-Identifier: Apache-2.0
// The tlm backend's core as a SystemC module (C++17): the TLM core model (core_model.h) in the one
// SystemC module over a clocked core (clocked_core_module.h, which describes the sockets, the two
// codings of the memory port and the clock). platform.h binds it to a memory target for the tlm
// backend.
#pragma once

#include <cstdint>

#include "tpuemu/tlm/clocked_core_module.h"
#include "tpuemu/tlm/core_model.h"

namespace tpuemu::tlm {

// Compiled once, in the library (systemc/tlm_core.cpp).
extern template class ClockedCoreModule<CoreModel>;

class TlmCore final : public ClockedCoreModule<CoreModel> {
 public:
  // Throws std::invalid_argument naming a size the RTL would refuse to elaborate.
  TlmCore(sc_core::sc_module_name name, const CoreShape& shape, sc_core::sc_time period,
          Coding coding, std::uint64_t quantum_cycles = 4096)
      : ClockedCoreModule(
            name, "tlm core",
            [&shape](tpuemu::tlm::BeatPort& port) { return CoreModel::make(shape, port); }, period,
            coding, quantum_cycles) {}
};

}  // namespace tpuemu::tlm
