// SPDX-License-Identifier: Apache-2.0
// Geometry and timings of one DRAM device (an HBM stack), all timings in tCK (docs/hbm.md).
// Plain data shared by the DRAM device model, the HBM controller harness and the host runtime,
// which fills it from a timing set in configs/hbm/.
#pragma once

#include <array>
#include <cstdint>

#include "tpuemu/spec/contract.h"

namespace tpuemu::sim::dram {

struct Config {
  // Geometry (each a power of two). No defaults that look like a device: a Config is filled
  // from a timing set in configs/hbm/ (tpuemu::hbm_setup_from, or the tests' loaders).
  std::uint32_t channels = 0;
  std::uint32_t bank_groups = 0;
  std::uint32_t banks_per_group = 0;
  std::uint32_t rows = 0;          // per bank
  std::uint32_t columns = 0;       // bursts per row
  std::uint32_t bus_bytes = 0;     // data bus width per channel, bytes per beat
  std::uint32_t burst_length = 0;

  // Timings, tCK: every field of the contract (spec/tpuemu.json "hbm"/"timings").
#define TPUEMU_DRAM_TIMING_MEMBER(name, doc) std::uint32_t name = 0;
  TPUEMU_SPEC_HBM_TIMINGS(TPUEMU_DRAM_TIMING_MEMBER)
#undef TPUEMU_DRAM_TIMING_MEMBER

  // A refresh-deadline violation is flagged when more than this many tREFI pass between two
  // REFs of a channel (JEDEC allows postponing 8; the contract says 9). 0 disables the check.
  std::uint32_t refresh_deadline_trefi = 9;

  std::uint32_t banks() const { return bank_groups * banks_per_group; }
  std::uint32_t burst_bytes() const { return bus_bytes * burst_length; }
  // The contract's derived distances of these timings (spec/tpuemu.json "derived_timings").
  constexpr spec::hbm::DerivedTimings derived() const { return spec::hbm::derive_timings(*this, burst_length); }
  std::uint32_t tBURST() const { return derived().tBURST; }
  std::uint64_t row_bytes() const { return std::uint64_t{columns} * burst_bytes(); }
  std::uint64_t capacity_bytes() const {
    return std::uint64_t{channels} * banks() * rows * row_bytes();
  }
  // Throws std::invalid_argument naming the first bad field (zero, not a power of two, a burst
  // wider than the 64-bit write mask can cover, an odd burst length).
  void validate() const;

  // The timings in the contract's order (spec::hbm::kTimingNames), e.g. to pack timing_t.
  std::array<std::uint32_t, spec::hbm::kNumTimings> timings() const {
#define TPUEMU_DRAM_TIMING_VALUE(name, doc) name,
    return {TPUEMU_SPEC_HBM_TIMINGS(TPUEMU_DRAM_TIMING_VALUE)};
#undef TPUEMU_DRAM_TIMING_VALUE
  }
};

}  // namespace tpuemu::sim::dram
