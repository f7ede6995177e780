// SPDX-License-Identifier: Apache-2.0
// The HBM stack behind a core's memory port, as the tlm backend times it: the beat<->burst
// bridge of the RTL backend (sim/src/hbm/beat_bridge.h) over the burst-level model of the
// controller and DRAM (hbm_timing.h), across the core/DRAM clock ratio. Timing only: the data
// are kept elsewhere. docs/hbm-trace.md.
#pragma once

#include <cstdint>
#include <memory>

#include "tpuemu/sim/hbm_system.h"
#include "tpuemu/tlm/beat_timing.h"
#include "tpuemu/tlm/hbm_timing.h"

namespace tpuemu::tlm {

class HbmBeatTiming : public BeatTimingModel {
 public:
  // The controller's figures (HbmBurstTiming::statistics), cycles in tCK.
  virtual sim::hbm::Statistics statistics() const = 0;
};

// Throws std::invalid_argument naming the bad argument: a ratio that is not positive, a beat
// that neither divides nor is a multiple of 64 bytes, a capacity beyond the stack's.
// `shortcuts`: HbmTimingShortcuts (hbm_timing.h); the results are the same either way.
std::unique_ptr<HbmBeatTiming> make_hbm_beat_timing(const sim::hbm::HbmSetup& setup,
                                                    double dram_cycles_per_core_cycle,
                                                    std::uint32_t beat_bytes, std::uint64_t capacity,
                                                    HbmTimingShortcuts shortcuts = HbmTimingShortcuts::Taken);

}  // namespace tpuemu::tlm
