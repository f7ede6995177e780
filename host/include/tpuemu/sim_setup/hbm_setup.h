// SPDX-License-Identifier: Apache-2.0
// Host configurations turned into the simulator's setups. Kept out of the config layer so that
// loading and validating a preset or timing set needs nothing of the simulator; only the code that
// drives the simulator (the rtl device backend, the HBM trace replay, the benchmarks) uses this.
#pragma once

#include "tpuemu/config/hbm_config.h"
#include "tpuemu/sim/hbm_system.h"

namespace tpuemu {

// The simulator's view of a timing set: DRAM geometry and timings for the device model and the
// RTL controller's configuration. Throws Error when the address map is not one the controller
// implements ("ro-ba-bg-ch-co", "ro-ch-ba-bg-co", "ch-ro-ba-bg-co", "ro-ba-bg-co-ch").
sim::hbm::HbmSetup hbm_setup_from(const HbmTimingSet& set, bool closed_page = false);

}  // namespace tpuemu
