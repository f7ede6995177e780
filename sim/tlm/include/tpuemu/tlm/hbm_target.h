// SPDX-License-Identifier: Apache-2.0
// The HBM stack's timing model for a SystemC platform (C++17): what a MemoryTarget
// (memory_target.h) needs to be timed as one HBM stack behind a core's port - the geometry and
// timings of a timing set (configs/hbm/*.json, docs/hbm.md), timings by the contract's names,
// the address map by its name, the page policy, and the clocks. The model itself
// (hbm_beat_timing.h, docs/hbm-trace.md) is C++20; this is its C++17 door.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tpuemu/tlm/beat_timing.h"

namespace tpuemu::tlm {

struct HbmTargetConfig {
  std::uint32_t channels = 0, bank_groups = 0, banks_per_group = 0, rows = 0, columns = 0;
  std::uint32_t bus_bytes = 0, burst_length = 0;
  // Every timing of the contract, once, in tCK: {"CL", 14}, {"tRCD", 14}, ... (spec/tpuemu.json)
  std::vector<std::pair<std::string, std::uint32_t>> timings;
  std::string address_map = "ro-ba-bg-ch-co";  // any order of the five fields, most significant first
  bool closed_page = false;
  double dram_cycles_per_core_cycle = 1.0;  // core period / tCK
  std::uint32_t beat_bytes = 0;             // the core's DIM
  std::uint64_t capacity_bytes = 0;         // what the core addresses (at most the stack's)
};

// Throws std::invalid_argument naming the first bad field: an unknown or missing timing, an
// address map that is not an order of the five fields, a geometry the DRAM model refuses.
std::unique_ptr<BeatTimingModel> make_hbm_target_timing(const HbmTargetConfig& config);

}  // namespace tpuemu::tlm
