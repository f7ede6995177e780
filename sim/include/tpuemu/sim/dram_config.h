// Geometry and timings of one DRAM device (an HBM stack), all timings in tCK (docs/hbm.md).
// Plain data shared by the DRAM device model, the HBM controller harness and the host runtime,
// which fills it from a timing set in configs/hbm/.
#pragma once

#include <cstdint>

namespace tpuemu::sim::dram {

struct Config {
  // Geometry (each a power of two).
  std::uint32_t channels = 8;
  std::uint32_t bank_groups = 4;
  std::uint32_t banks_per_group = 4;
  std::uint32_t rows = 16384;    // per bank
  std::uint32_t columns = 32;    // bursts per row
  std::uint32_t bus_bytes = 16;  // data bus width per channel, bytes per beat
  std::uint32_t burst_length = 4;

  // Timings, tCK.
  std::uint32_t CL = 14;
  std::uint32_t CWL = 4;
  std::uint32_t tRCD = 14;
  std::uint32_t tRP = 14;
  std::uint32_t tRAS = 34;
  std::uint32_t tRC = 48;
  std::uint32_t tRRD_S = 4;
  std::uint32_t tRRD_L = 6;
  std::uint32_t tFAW = 30;
  std::uint32_t tCCD_S = 1;
  std::uint32_t tCCD_L = 2;
  std::uint32_t tWTR_S = 6;
  std::uint32_t tWTR_L = 8;
  std::uint32_t tWR = 16;
  std::uint32_t tRTP = 6;
  std::uint32_t tRFC = 260;
  std::uint32_t tREFI = 3900;

  // A refresh-deadline violation is flagged when more than this many tREFI pass between two
  // REFs of a channel (JEDEC allows postponing 8; the contract says 9). 0 disables the check.
  std::uint32_t refresh_deadline_trefi = 9;

  std::uint32_t banks() const { return bank_groups * banks_per_group; }
  std::uint32_t burst_bytes() const { return bus_bytes * burst_length; }
  std::uint32_t tBURST() const { return burst_length / 2; }
  std::uint64_t row_bytes() const { return std::uint64_t{columns} * burst_bytes(); }
  std::uint64_t capacity_bytes() const {
    return std::uint64_t{channels} * banks() * rows * row_bytes();
  }
  // Throws std::invalid_argument naming the first bad field (zero, not a power of two, a burst
  // wider than the 64-bit write mask can cover, an odd burst length).
  void validate() const;
};

}  // namespace tpuemu::sim::dram
