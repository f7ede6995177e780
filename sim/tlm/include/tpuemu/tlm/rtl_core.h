// SPDX-License-Identifier: Apache-2.0
// The Verilated RTL core of a preset as a SystemC IP block (C++17): rtl/tpu_top.sv (RtlCoreModel,
// rtl_core_model.h) in the one SystemC module over a clocked core (clocked_core_module.h, which
// describes the sockets, the timing rules and the two ways to run it). docs/systemc.md, "The RTL
// core as a SystemC IP block", shows how to link it.
#pragma once

#include <cstdint>
#include <string>

#include "tpuemu/tlm/clocked_core_module.h"
#include "tpuemu/tlm/rtl_core_model.h"

namespace tpuemu::tlm {

// Compiled once, in the library (rtl/rtl_core.cpp).
extern template class ClockedCoreModule<RtlCoreModel>;

class RtlCore final : public ClockedCoreModule<RtlCoreModel> {
 public:
  // The Verilated core of `preset` (RtlCoreModel::presets()), reset; throws std::invalid_argument
  // for a preset without a core in this build. Loosely timed by default, as a SystemC platform of
  // other LT models wants it.
  RtlCore(sc_core::sc_module_name name, const std::string& preset, sc_core::sc_time period,
          std::uint64_t quantum_cycles = 1024, Coding coding = Coding::LooselyTimed)
      : ClockedCoreModule(
            name, "rtl core",
            [&preset](tpuemu::tlm::BeatPort& port) { return RtlCoreModel::make(preset, port); },
            period, coding, quantum_cycles) {}
};

}  // namespace tpuemu::tlm
