// SPDX-License-Identifier: Apache-2.0
// A fast timing model of one HBM stack as the emulator's RTL backend runs it: the Verilated
// controller rtl/mem/hbm (FR-FCFS per channel, read and write queues (docs/hbm.md "Queues and write batching"), bank state, all-bank refresh)
// driving the DRAM device (sim/src/dram), at the level of 64-byte bursts. It keeps no data.
// docs/hbm-trace.md gives its rules and how close it comes to the RTL.
//
// Times are DRAM cycles (tCK) counted like sim::hbm::HbmSystem::cycle(): a request offered in
// tick `cycle` is accepted in tick `accept`, and its response (read data, write response) is in
// the responses() of tick `done`.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "tpuemu/sim/hbm_system.h"

namespace tpuemu::tlm {

namespace detail {
class ChannelTiming;
}

struct BurstTiming {
  std::uint64_t accept = 0;
  std::uint64_t done = 0;
};

// Whether the model takes its exact shortcuts (the stream path: a column right behind the
// reserved ones without a search). They never change a result; Off makes every step take the
// general search, so that tests can compare the two.
enum class HbmTimingShortcuts : std::uint8_t { Taken, Off };

class HbmBurstTiming {
 public:
  // Throws std::invalid_argument naming a bad field of the setup (dram::Config::validate).
  explicit HbmBurstTiming(const sim::hbm::HbmSetup& setup,
                          HbmTimingShortcuts shortcuts = HbmTimingShortcuts::Taken);
  ~HbmBurstTiming();
  HbmBurstTiming(const HbmBurstTiming&) = delete;
  HbmBurstTiming& operator=(const HbmBurstTiming&) = delete;

  // A burst request (burst-aligned byte address) offered from DRAM cycle `cycle` on. Requests
  // come in the order of the requester's queue (cycles non-decreasing); like the bridge, the
  // model offers them in that order on the controller's request lanes (channels / 2 of them).
  BurstTiming request(std::uint64_t cycle, bool write, std::uint64_t addr);
  // The run ended at DRAM cycle `cycle`: refreshes up to there are counted.
  void finish(std::uint64_t cycle);

  // The controller's figures (those it models; queue occupancy is not).
  sim::hbm::Statistics statistics() const;
  const sim::hbm::HbmSetup& setup() const { return setup_; }
  unsigned lanes() const { return static_cast<unsigned>(lane_free_.size()); }

 private:
  sim::hbm::HbmSetup setup_;
  sim::hbm::AddressLayout layout_;
  // Where each field the channels need sits in a byte address: layout_.decode without its loop.
  struct FieldSlice {
    std::uint32_t shift = 0;
    std::uint64_t mask = 0;
    std::uint32_t of(std::uint64_t addr) const { return static_cast<std::uint32_t>((addr >> shift) & mask); }
  };
  FieldSlice channel_, bank_group_, bank_, row_;
  std::uint64_t read_data_ = 0;  // CL + tBURST: from the RD on the bus to its data
  std::vector<std::unique_ptr<detail::ChannelTiming>> channels_;
  std::vector<std::uint64_t> lane_free_;  // cycle from which each lane can take an offer
  std::uint64_t last_offer_ = 0;
  std::uint64_t last_done_ = 0;
  sim::hbm::LatencyHistogram latency_;        // reads, from acceptance
  sim::hbm::LatencyHistogram offer_latency_;  // reads, from the offer on a lane
};

}  // namespace tpuemu::tlm
