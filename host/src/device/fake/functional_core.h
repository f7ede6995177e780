// SPDX-License-Identifier: Apache-2.0
// The `fake` backend's core: a functional model of the tpuemu core behind the firmware HAL. It
// implements the CSR map and executes programs with the ISA's semantics (docs/isa.md) - DMA on
// every path with 2-D strides, LOADW/MATMUL on two weight banks, VQUANT (with bias), VADD, NOP fences, semaphore
// waits and signals, deadlock and range errors - but with a simple time model: an instruction takes
// one cycle per row it moves (at least one), and the queues run one instruction at a time in the
// semaphore priority order (DMA, MXU, vector). It is for tests that exercise the host and the
// firmware without Verilator, and for the conformance suite: results are exact, cycle counts are
// not the RTL's.
//
// Instruction fields, CSR addresses and layouts, counter indices and error codes all come from
// the generated contract (tpuemu/spec/contract.h), never from a copy.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <optional>
#include <vector>

#include "tpuemu/device/device.h"
#include "tpuemu/fw/firmware.h"
#include "tpuemu/sim/clocked_core.h"
#include "tpuemu/spec/contract.h"

namespace tpuemu::fake {

// The core's sizes (the one CoreShape of every model of the core) and the device memory's.
struct DeviceShape : sim::CoreShape {
  std::uint64_t hbm_bytes = 0;
};

class FunctionalCore {
 public:
  explicit FunctionalCore(const DeviceShape& shape);
  FunctionalCore(const FunctionalCore&) = delete;
  FunctionalCore& operator=(const FunctionalCore&) = delete;

  const fw_hal* hal() const { return &hal_; }

  std::uint32_t csr_read(std::uint32_t addr);
  void csr_write(std::uint32_t addr, std::uint32_t value);
  int mem_write(std::uint64_t addr, const std::uint8_t* data, std::size_t len);
  int mem_read(std::uint64_t addr, std::uint8_t* data, std::size_t len);
  // Runs for up to n cycles; returns the cycles that passed (fewer once the core is idle).
  std::uint64_t wait(std::uint64_t n);

  // Timeline of the model's time (RunOptions::record_timeline): cycles since start; an
  // instruction issues when the model runs it and is done after its cycles (a NOP at once); a
  // head that cannot start for its semaphore waits from the step that first finds it so.
  void start_timeline();
  std::vector<TimelineEvent> stop_timeline();

 private:
  using Words = std::array<std::uint32_t, spec::kInstrWords>;
  struct Queued {
    Words words;
    std::uint32_t pc;
  };

  void soft_reset();
  void start();
  void fetch_program();
  // One step: the first queue head (in priority order) that can start runs to completion.
  // Returns its cycles, or 0 when no head could start.
  std::uint64_t step();
  std::uint64_t execute(const Queued& in);
  std::uint64_t execute_dma(const Queued& in);
  std::uint64_t execute_loadw(const Queued& in);
  std::uint64_t execute_matmul(const Queued& in);
  std::uint64_t execute_vquant(const Queued& in);
  std::uint64_t execute_vadd(const Queued& in);
  void signal(const Words& w);
  void record(spec::Queue q, TimelineEvent::Kind kind, std::uint64_t cycle);
  void note_waits();
  void fail(spec::ErrorCode code, std::uint32_t pc);
  void update_queue_csrs();
  std::deque<Queued>& queue_of(spec::Queue q);
  bool head_can_start(const std::deque<Queued>& q) const;

  std::uint32_t vmem_row_bytes() const { return shape_.dim; }
  std::int32_t& acc(std::uint32_t row, std::uint32_t lane) { return acc_[std::size_t{row} * shape_.dim + lane]; }
  std::uint8_t* vmem(std::uint32_t row) { return vmem_.data() + std::size_t{row} * shape_.dim; }

  DeviceShape shape_;
  fw_hal hal_{};
  std::vector<std::uint8_t> hbm_;
  std::vector<std::uint8_t> vmem_;
  std::vector<std::int32_t> acc_;
  std::vector<std::uint32_t> smem_;
  std::array<std::vector<std::int8_t>, spec::kWeightBanks> weights_;
  std::array<bool, spec::kWeightBanks> weights_loaded_{};
  std::array<std::uint32_t, spec::kNumSems> sems_{};
  std::array<std::uint64_t, spec::kNumCounters> counters_{};
  std::deque<Queued> dma_q_, mxu_q_, vec_q_;

  bool busy_ = false, done_ = false, error_ = false;
  std::uint32_t error_code_ = 0, error_info_ = 0;
  std::uint32_t prog_base_ = 0, pc_ = 0, smem_addr_ = 0;
  std::uint32_t queue_state_ = 0, head_wait_ = 0;

  bool recording_ = false;
  std::vector<TimelineEvent> timeline_;
  std::array<std::uint32_t, 4> issued_{};   // per queue code: instructions popped since start
  std::array<bool, 4> waiting_{};
};

}  // namespace tpuemu::fake
