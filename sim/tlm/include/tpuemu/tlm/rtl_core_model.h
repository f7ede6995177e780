// SPDX-License-Identifier: Apache-2.0
// The Verilated RTL core (rtl/tpu_top.sv) of one preset as a ClockedCore (sim/clocked_core.h),
// its memory port a BeatPort (core_model.h): each beat the core presents is one request(); the
// timing returned holds mem_req_ready_i low until `accept` and delivers the read data or write
// acknowledgement at `done`, in order, at most one of each per cycle. A memory port that calls
// stop() ends the current run() after the edge. The SystemC module RtlCore (rtl_core.h) clocks it.
//
// The implementation is C++20 (it includes the generated contract and the Verilated model
// classes); this header is C++17 and free of SystemC, Verilator and the contract, because the
// SystemC side includes it (docs/systemc.md, "Two language levels").
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "tpuemu/sim/clocked_core.h"
#include "tpuemu/tlm/core_model.h"

namespace tpuemu::tlm {

// Only the factory: the interface is ClockedCore's.
class RtlCoreModel : public sim::ClockedCore {
 public:
  // The Verilated core of `preset` (a name of configs/presets with a core in this build), reset.
  // Throws std::invalid_argument listing the built cores for any other name.
  static std::unique_ptr<RtlCoreModel> make(const std::string& preset, BeatPort& port);
  // The presets this build verilated (at least "small" and "default").
  static std::vector<std::string> presets();
};

}  // namespace tpuemu::tlm
