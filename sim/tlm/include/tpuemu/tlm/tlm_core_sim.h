// SPDX-License-Identifier: Apache-2.0
// The tlm backend's simulator: sim::CoreSim (what the firmware's simulator HAL drives) over a
// SystemC platform (platform.h) - the core model behind TLM-2.0 sockets, the memory a TLM-2.0
// target timed as the preset's memory (the simple model, or the HBM stack's timing model).
#pragma once

#include <memory>

#include "tpuemu/sim/core_sim.h"
#include "tpuemu/tlm/core_model.h"

namespace tpuemu::tlm {

struct TlmSimOptions {
  CoreShape shape;
  double clock_ghz = 1.0;
  sim::MemoryModelConfig memory;      // the same description the rtl backend's harness takes
  bool approximately_timed = false;   // AT coding of the memory port instead of LT
  std::uint64_t quantum_cycles = 4096;
  bool fast_paths = true;             // off: the core model steps every cycle in full
};

// Throws std::invalid_argument naming a shape or memory setting the models cannot run.
std::unique_ptr<sim::CoreSim> make_tlm_core_sim(const TlmSimOptions& options);

}  // namespace tpuemu::tlm
