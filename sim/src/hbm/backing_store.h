// SPDX-License-Identifier: Apache-2.0
// The board's own memory behind the DRAM shim of hbm_board_top (docs/fpga.md "The host-decoupled
// DRAM model"): bursts by the shim's burst index, one request per host cycle taken when ready,
// read data answered in request order after a random latency of 0..max_latency host cycles, writes
// posted. Randomness (latency, and whether the store takes a request) comes from the seed, so a
// run is reproducible; the target must not be able to tell any seed from another.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <deque>
#include <random>
#include <span>
#include <unordered_map>

#include "tpuemu/sim/hbm_system.h"
#include "verilator_bits.h"

namespace tpuemu::sim::hbm {

class BackingStore {
 public:
  using Burst = std::array<std::uint8_t, 64>;

  explicit BackingStore(const BoardShim& shim)
      : latency_(0, shim.max_latency), take_(0, 3), rng_(shim.seed) {}

  // The store's outputs for this host cycle: its answer, and whether it takes a request.
  template <class Top>
  void drive(Top& top) {
    const bool answer = !answers_.empty() && answers_.front().due <= now_;
    top.bs_rsp_valid_i = answer;
    if (answer) put_bytes(top.bs_rsp_rdata_i, answers_.front().data.data(), 64);
    if (!decided_) {
      ready_ = take_(rng_) != 0;  // takes a request in 3 host cycles of 4
      decided_ = true;
    }
    top.bs_req_ready_i = ready_;
  }

  // The end of the host cycle: what the store took and gave in it.
  template <class Top>
  void host_cycle(const Top& top) {
    if (top.bs_rsp_valid_i) answers_.pop_front();
    if (top.bs_req_valid_o && top.bs_req_ready_i) {
      Burst& b = store_[static_cast<std::uint64_t>(top.bs_req_addr_o)];
      if (top.bs_req_write_o) {
        Burst w{};
        get_bytes(top.bs_req_wdata_o, w.data(), 64);
        const std::uint64_t mask = top.bs_req_wmask_o;
        for (unsigned i = 0; i < 64; ++i) {
          if ((mask >> i) & 1) b[i] = w[i];
        }
      } else {
        const std::uint64_t due = std::max(now_ + 1 + latency_(rng_), last_due_ + 1);
        answers_.push_back({due, b});
        last_due_ = due;
      }
    }
    ++now_;
    decided_ = false;
  }

  // Loading memory: the same bytes the device model gets by its backdoor.
  void write(std::uint64_t index, std::span<const std::uint8_t, 64> data) {
    std::copy(data.begin(), data.end(), store_[index].begin());
  }

 private:
  struct Answer {
    std::uint64_t due;
    Burst data;
  };
  std::uniform_int_distribution<std::uint64_t> latency_;
  std::uniform_int_distribution<unsigned> take_;
  std::mt19937_64 rng_;
  std::unordered_map<std::uint64_t, Burst> store_;
  std::deque<Answer> answers_;
  std::uint64_t now_ = 0, last_due_ = 0;
  bool ready_ = false, decided_ = false;
};

}  // namespace tpuemu::sim::hbm
