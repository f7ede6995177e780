// SPDX-License-Identifier: Apache-2.0
// RtlCoreModel over one Verilated tpu_top class (C++20). Instantiated once per preset
// (rtl_core_<preset>.cpp), because every preset is a separately Verilated model with its own port
// widths. The clocking follows the Verilator harness (sim/src/core_sim_impl.h) cycle for cycle:
// drive the responses due this cycle, settle with the clock low, sample the request, clock edge.
// The difference is the memory: here it is a BeatPort that times each beat when the core
// presents it, instead of a model stepped every cycle.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include <verilated.h>

#include "tpuemu/sim/verilator_messages.h"
#include "verilated_csr_bus.h"
#include "tpuemu/spec/contract.h"
#include "tpuemu/tlm/rtl_core_model.h"
#include "verilator_bits.h"

namespace tpuemu::tlm {

// The widest memory beat of any preset's core (DIM bytes): beat buffers are fixed arrays, so a
// beat in flight never allocates.
inline constexpr std::uint32_t kMaxBeatBytes = 256;

template <typename Top>
class VerilatedRtlCoreModel final : public RtlCoreModel {
 public:
  explicit VerilatedRtlCoreModel(BeatPort& port)
      : port_(port), context_(std::make_unique<VerilatedContext>()) {
    top_ = std::make_unique<Top>(context_.get(), "tpu");
    reset();
    dim_ = spec::csr::config::dim.get(csr_peek(spec::csr::kConfig));
    if (dim_ == 0 || dim_ > kMaxBeatBytes || dim_ != sizeof(top_->mem_rsp_rdata_i)) {
      throw std::logic_error("rtl core: CONFIG reads DIM " + std::to_string(dim_) +
                             ", which does not match the model's memory port");
    }
  }

  ~VerilatedRtlCoreModel() override {
    top_->final();
    // Verilator 5.006 unregisters scopes through the thread's current context: make it ours, or
    // destroying this core while an older one lives deadlocks in the scope registry.
    Verilated::threadContextp(context_.get());
    top_.reset();
  }

  std::uint32_t dim() const override { return dim_; }

  void reset() override {
    pending_.reset();
    reads_.clear();
    acks_.clear();
    sim::reset_core(*top_, [this] { edge_in_reset(); }, [this] { tick(); });
  }

  std::uint32_t csr_peek(std::uint32_t addr) override { return sim::peek_csr(*top_, addr); }

  bool csr_read_advances(std::uint32_t addr) const override { return addr == spec::csr::kSmemData; }

  void csr_cycle(std::uint32_t addr, bool write, std::uint32_t value) override {
    sim::csr_edge(*top_, addr, write, value, [this] { tick(); });
  }

  std::uint64_t run(std::uint64_t cycles, bool stop_when_idle) override {
    stop_ = false;
    for (std::uint64_t i = 0; i < cycles; ++i) {
      tick();
      if (stop_ || (stop_when_idle && !top_->busy_o)) return i + 1;
    }
    return cycles;
  }

  void stop() override { stop_ = true; }
  std::uint64_t cycle() const override { return cycle_; }
  bool busy() const override { return top_->busy_o != 0; }

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

  // A clock edge while rst_ni is low: the core neither requests nor takes responses.
  void edge_in_reset() {
    top_->clk_i = 0;
    top_->eval();
    top_->clk_i = 1;
    top_->eval();
    ++cycle_;
  }

  void tick() {
    drive_responses();
    top_->mem_req_ready_i = pending_ && pending_->timing.accept <= cycle_;
    top_->clk_i = 0;
    top_->eval();
    if (top_->mem_req_valid_o && !pending_) {
      present();
      if (pending_->timing.accept <= cycle_) {
        top_->mem_req_ready_i = 1;  // accepted in the cycle it appeared: settle again with ready
        top_->eval();
      }
    } else if (!top_->mem_req_valid_o && pending_) {
      throw std::runtime_error("RTL: the core withdrew a memory request at cycle " + std::to_string(cycle_) +
                               " before the memory accepted it");
    }
    if (top_->mem_req_valid_o && top_->mem_req_ready_i) {
      Presented& p = *pending_;
      p.beat.done = p.timing.done;
      if (p.write) acks_.push_back(p.timing.done);
      else reads_.push_back(p.beat);
      pending_.reset();
    }
    top_->clk_i = 1;
    top_->eval();
    ++cycle_;
    // A failed assertion or $stop in the core (the hooks keep it off stdout and out of abort()).
    if (context_->gotError()) throw std::runtime_error(sim::take_verilator_error());
  }

  // The oldest read response and write acknowledgement whose time has come: in order, at most one
  // of each per cycle, as the core's port takes them.
  void drive_responses() {
    const bool rsp = !reads_.empty() && reads_.front().done <= cycle_;
    top_->mem_rsp_valid_i = rsp;
    if (rsp) {
      sim::put_bytes(top_->mem_rsp_rdata_i, reads_.front().data.data(), dim_);
      reads_.pop_front();
    }
    const bool ack = !acks_.empty() && acks_.front() <= cycle_;
    top_->mem_wack_valid_i = ack;
    if (ack) acks_.pop_front();
  }

  // A new beat on the port: one request to the memory, which times it (and moves its data: the
  // write data now, the read data into the beat's buffer until its response is due).
  void present() {
    Presented& p = pending_.emplace();
    p.write = top_->mem_req_write_o != 0;
    if (p.write) sim::get_bytes(top_->mem_req_wdata_o, p.beat.data.data(), dim_);
    const BeatRequest request{p.write, static_cast<std::uint64_t>(top_->mem_req_addr_o), p.beat.data.data(), dim_};
    p.timing = port_.request(cycle_, request);
    std::uint64_t& last = p.write ? last_ack_ : last_read_;
    if (p.timing.accept < cycle_ || p.timing.done <= p.timing.accept || p.timing.done <= last) {
      throw std::runtime_error("memory timing: the beat presented at cycle " + std::to_string(cycle_) +
                               " was given accept " + std::to_string(p.timing.accept) + ", done " +
                               std::to_string(p.timing.done) + " (needs cycle <= accept < done, after the previous " +
                               (p.write ? "ack" : "read") + " at " + std::to_string(last) + ")");
    }
    last = p.timing.done;
  }

  BeatPort& port_;
  std::uint32_t dim_ = 0;
  std::unique_ptr<VerilatedContext> context_;
  std::unique_ptr<Top> top_;
  std::uint64_t cycle_ = 0;
  bool stop_ = false;
  std::optional<Presented> pending_;
  std::deque<Beat> reads_;           // accepted reads, their data, in order
  std::deque<std::uint64_t> acks_;   // accepted writes' acknowledgement cycles, in order
  std::uint64_t last_read_ = 0, last_ack_ = 0;
};

}  // namespace tpuemu::tlm
