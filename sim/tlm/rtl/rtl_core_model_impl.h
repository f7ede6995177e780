// SPDX-License-Identifier: Apache-2.0
// RtlCoreModel over one Verilated tpu_top class (C++20): the Verilated core (sim/src/
// verilated_core.h, the same clock loop as the rtl backend's CoreSim) with a BeatPort at its
// memory port, which times each beat when the core presents it instead of a model stepped every
// cycle. Instantiated once per preset (rtl_core_<preset>.cpp), because every preset is a
// separately Verilated model with its own port widths.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <deque>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>

#include "tpuemu/tlm/rtl_core_model.h"
#include "verilated_core.h"

namespace tpuemu::tlm {

// The widest memory beat of any preset's core (DIM bytes): beat buffers are fixed arrays, so a
// beat in flight never allocates.
inline constexpr std::uint32_t kMaxBeatBytes = 256;

// A BeatPort as the Verilated core's Port (verilated_core.h): a new beat is one request(); the
// timing returned holds mem_req_ready_i low until `accept` and delivers the read data or write
// acknowledgement at `done`, in order, at most one of each per cycle.
class BeatTimedPort {
 public:
  BeatTimedPort(BeatPort& port, std::uint32_t beat_bytes) : port_(&port), beat_bytes_(beat_bytes) {
    if (beat_bytes_ == 0 || beat_bytes_ > kMaxBeatBytes) {
      throw std::logic_error("rtl core: a memory beat of " + std::to_string(beat_bytes_) +
                             " bytes");
    }
  }

  // The oldest read response and write acknowledgement whose time has come: in order, at most one
  // of each per cycle, as the core's port takes them.
  const std::uint8_t* read_response(std::uint64_t cycle) {
    if (reads_.empty() || reads_.front().done > cycle) return nullptr;
    delivered_ = reads_.front();  // the core copies it before the next cycle
    reads_.pop_front();
    return delivered_.data.data();
  }
  bool write_ack(std::uint64_t cycle) {
    if (acks_.empty() || acks_.front() > cycle) return false;
    acks_.pop_front();
    return true;
  }
  bool ready(std::uint64_t cycle) const { return pending_ && pending_->timing.accept <= cycle; }

  // A new beat on the port: one request to the memory, which times it (and moves its data: the
  // write data now, the read data into the beat's buffer until its response is due).
  template <typename WriteData>
  bool offer(std::uint64_t cycle, bool valid, bool write, std::uint64_t addr, WriteData&& wdata) {
    if (!valid) {
      if (pending_) {
        throw std::runtime_error("RTL: the core withdrew a memory request at cycle " +
                                 std::to_string(cycle) + " before the memory accepted it");
      }
      return false;
    }
    if (pending_) return false;  // presented earlier, accepted later
    Presented& p = pending_.emplace();
    p.write = write;
    if (write) std::memcpy(p.beat.data.data(), wdata().data(), beat_bytes_);
    p.timing = port_->request(cycle, BeatRequest{write, addr, p.beat.data.data(), beat_bytes_});
    std::uint64_t& last = write ? last_ack_ : last_read_;
    if (p.timing.accept < cycle || p.timing.done <= p.timing.accept || p.timing.done <= last) {
      throw std::runtime_error(
          "memory timing: the beat presented at cycle " + std::to_string(cycle) +
          " was given accept " + std::to_string(p.timing.accept) + ", done " +
          std::to_string(p.timing.done) + " (needs cycle <= accept < done, after the previous " +
          (write ? "ack" : "read") + " at " + std::to_string(last) + ")");
    }
    last = p.timing.done;
    return p.timing.accept <= cycle;
  }

  void accept(std::uint64_t, bool, std::uint64_t, std::span<const std::uint8_t>) {
    Presented& p = *pending_;
    p.beat.done = p.timing.done;
    if (p.write)
      acks_.push_back(p.timing.done);
    else
      reads_.push_back(p.beat);
    pending_.reset();
  }
  void end_cycle(std::uint64_t, bool) {}
  // A memory fault ends the run through ClockedCore::stop() (the SystemC module's).
  bool halted() const { return false; }
  // rst_ni: what the memory still owed the core is dropped with it.
  void reset() {
    pending_.reset();
    reads_.clear();
    acks_.clear();
  }

 private:
  struct Beat {
    std::uint64_t done = 0;
    std::array<std::uint8_t, kMaxBeatBytes> data{};
  };
  // The beat the core presents and the memory has not accepted yet (valid && !ready).
  struct Presented {
    bool write = false;
    BeatTiming timing;
    Beat beat;
  };

  BeatPort* port_;
  std::uint32_t beat_bytes_;
  std::optional<Presented> pending_;
  std::deque<Beat> reads_;          // accepted reads, their data, in order
  std::deque<std::uint64_t> acks_;  // accepted writes' acknowledgement cycles, in order
  Beat delivered_;                  // the read response of this cycle
  std::uint64_t last_read_ = 0, last_ack_ = 0;
};

template <typename Top>
class VerilatedRtlCoreModel final : public sim::VerilatedCore<Top, BeatTimedPort, RtlCoreModel> {
  // The memory port is DIM bytes wide: Verilator's smallest integer for up to 64 bits, VlWide words
  // beyond, so its size in bytes is DIM for every preset.
  static constexpr std::uint32_t kDim = sizeof(Top::mem_rsp_rdata_i);

 public:
  explicit VerilatedRtlCoreModel(BeatPort& port)
      : sim::VerilatedCore<Top, BeatTimedPort, RtlCoreModel>(kDim, BeatTimedPort(port, kDim)) {}
};

}  // namespace tpuemu::tlm
