// SPDX-License-Identifier: Apache-2.0
// What every C++ harness of a Verilated HBM controller does the same way, whatever the top
// (hbm_ctrl_harness, the board's hbm_board_mem) and whoever drives it (the emulator's HbmSystem,
// tests/rtl/test_hbm_ctrl.cpp): the timing set packed into timing_t, the reset, and the DRAM
// device model pumped behind the controller's per-channel command bus (read data due now in,
// commands out). Its owner decides what a cycle does around these pieces.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <utility>

#include <verilated.h>

#include "dram/device.h"
#include "tpuemu/sim/hbm_system.h"
#include "verilator_bits.h"

namespace tpuemu::sim::hbm {

template <typename Top, unsigned Channels>
class HbmCtrlDriver {
 public:
  // The model in its own context, its configuration inputs set from the timing set; the caller
  // sets the top's other inputs and then calls reset().
  HbmCtrlDriver(const dram::Config& dram, const spec::hbm::QueueSizes& queues, std::uint64_t amap,
                bool closed_page)
      : device_(dram), context_(std::make_unique<VerilatedContext>()) {
    top_ = std::make_unique<Top>(context_.get(), "hbm");
    // hbm_spec_pkg::timing_t: the contract's timings in order, the burst length, the queue sizes.
    constexpr unsigned w = spec::hbm::kTimingWidth;
    const auto timings = dram.timings();
    for (unsigned k = 0; k < timings.size(); ++k) set_bits(top_->timing_i, w * k, w, timings[k]);
    set_bits(top_->timing_i, w * spec::hbm::kNumTimings, w, dram.burst_length);
    const auto sizes = queues.values();
    for (unsigned k = 0; k < sizes.size(); ++k)
      set_bits(top_->timing_i, w * (spec::hbm::kNumTimings + 1 + k), w, sizes[k]);
    top_->amap_i = amap;
    top_->page_policy_i = closed_page ? 1 : 0;
    top_->per_bank_refresh_i = 0;
  }
  HbmCtrlDriver(const HbmCtrlDriver&) = delete;
  HbmCtrlDriver& operator=(const HbmCtrlDriver&) = delete;
  ~HbmCtrlDriver() {
    top_->final();
    Verilated::threadContextp(context_.get());  // see VerilatedCoreSim's destructor
    top_.reset();
  }

  Top& top() { return *top_; }
  const Top& top() const { return *top_; }
  VerilatedContext& context() { return *context_; }
  dram::Device& device() { return device_; }
  const dram::Device& device() const { return device_; }
  // Cycles since reset: cycle 0 is the first after it.
  std::uint64_t cycle() const { return cycle_; }

  // Two clocks with rst_ni low, then released with the clock low and evaluated.
  void reset() {
    top_->rst_ni = 0;
    for (int i = 0; i < 2; ++i) {
      top_->clk_i = 0;
      top_->eval();
      top_->clk_i = 1;
      top_->eval();
    }
    top_->rst_ni = 1;
    top_->clk_i = 0;
    top_->eval();
  }

  // The device's read bursts due in this cycle onto rvalid_i/rdata_i (a top that takes them).
  void drive_read_data() {
    top_->rvalid_i = 0;
    for (unsigned ch = 0; ch < Channels; ++ch) {
      const auto d = device_.read_data(cycle_, ch);
      if (d.empty()) continue;
      set_bits(top_->rvalid_i, ch, 1, 1);
      put_bytes(top_->rdata_i[ch], d.data(), 64);
    }
  }

  // The controller's commands of this (evaluated) cycle to the device model, lowest channel first;
  // on_command(channel, command) sees each before the device, which throws dram::TimingViolation
  // on a broken rule. The row goes with ACT and with RD/WR (the row the controller believes open:
  // checked), the column with RD/WR, the data with WR.
  template <typename OnCommand>
  void issue_commands(OnCommand&& on_command) {
    if (top_->cmd_valid_o == 0) return;
    for (unsigned ch = 0; ch < Channels; ++ch) {
      if (!get_bits(top_->cmd_valid_o, ch, 1)) continue;
      dram::Command cmd;
      cmd.op = static_cast<dram::Op>(top_->cmd_o[ch]);
      cmd.bank_group = static_cast<std::uint32_t>(top_->cmd_bg_o[ch]);
      cmd.bank = static_cast<std::uint32_t>(top_->cmd_bank_o[ch]);
      if (cmd.op == dram::Op::Act || cmd.op == dram::Op::Rd || cmd.op == dram::Op::Wr) {
        cmd.row = static_cast<std::uint32_t>(top_->cmd_row_o[ch]);
      }
      if (cmd.op == dram::Op::Rd || cmd.op == dram::Op::Wr)
        cmd.column = static_cast<std::uint32_t>(top_->cmd_col_o[ch]);
      if (cmd.op == dram::Op::Wr) {
        get_bytes(top_->cmd_wdata_o[ch], wbuf_.data(), 64);
        cmd.wdata = wbuf_.data();
        cmd.wmask = top_->cmd_wmask_o[ch];
      }
      on_command(ch, cmd);
      device_.command(cycle_, ch, cmd);
    }
  }

  // The rising edge that ends the cycle; the clock is left low for the next one.
  void clock_edge() {
    top_->clk_i = 1;
    top_->eval();
    top_->clk_i = 0;
    ++cycle_;
  }

  // hbm_spec_pkg::stats_t of a channel: counter k in bits [64k +: 64], in the contract's order.
  StatCounters counters(unsigned ch) const {
    StatCounters v{};
    for (unsigned k = 0; k < spec::hbm::kNumStats; ++k)
      v[k] = get_bits(top_->stats_o[ch], 64 * k, 64);
    return v;
  }
  std::array<StatCounters, Channels> all_counters() const {
    std::array<StatCounters, Channels> v{};
    for (unsigned ch = 0; ch < Channels; ++ch) v[ch] = counters(ch);
    return v;
  }

  // Queued writes the device has not had a WR for (the controller counts a WR when it chooses it,
  // a cycle before the device gets it): a run is over when this is 0.
  std::uint64_t posted_writes() const {
    std::uint64_t queued = 0;
    for (unsigned ch = 0; ch < Channels; ++ch)
      queued += get_bits(top_->stats_o[ch], 64 * spec::hbm::stat::writes_queued, 64);
    return queued - device_.total_stats().wr;
  }

 private:
  dram::Device device_;
  std::unique_ptr<VerilatedContext> context_;
  std::unique_ptr<Top> top_;
  std::uint64_t cycle_ = 0;
  std::array<std::uint8_t, 64> wbuf_{};
};

}  // namespace tpuemu::sim::hbm
