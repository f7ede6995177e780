// SPDX-License-Identifier: Apache-2.0
// The HBM subsystem's statistics (sim::hbm::Statistics) registered by name for the Device
// interface: every per-channel counter of the contract's list (TPUEMU_SPEC_HBM_STATS, the RTL
// controller's stats_t) under its contract name, unit and meaning, the DRAM device model's data-bus
// occupancy, and the run's derived totals.
#pragma once

#include <string>

#include "tpuemu/device/memory_statistics.h"
#include "tpuemu/sim/hbm_system.h"

namespace tpuemu {

MemoryStatistics register_hbm_statistics(const sim::hbm::Statistics& statistics, std::string source);

}  // namespace tpuemu
