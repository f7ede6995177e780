// SPDX-License-Identifier: Apache-2.0
// A small fake of the tpuemu core for firmware and device tests: a CSR register file with the
// semantics of docs/isa.md, a byte-array HBM, SMEM behind SMEM_ADDR/SMEM_DATA, and a "program"
// whose outcome the test chooses: it completes after some cycles, deadlocks, faults, or never
// finishes (so the firmware watchdog fires). Exposed as a firmware HAL (fw_hal).
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <vector>

#include "tpuemu/fw/firmware.h"

namespace tpuemu::testing {

class FakeCore {
 public:
  enum class Outcome { Complete, Deadlock, IllegalOpcode, Hang };

  explicit FakeCore(std::size_t mem_bytes = 4u << 20) : mem(mem_bytes, 0) {
    hal_.ctx = this;
    hal_.csr_read = [](void* c, std::uint32_t a) { return static_cast<FakeCore*>(c)->csr_read(a); };
    hal_.csr_write = [](void* c, std::uint32_t a, std::uint32_t v) {
      static_cast<FakeCore*>(c)->csr_write(a, v);
    };
    hal_.mem_write = [](void* c, std::uint64_t a, const std::uint8_t* d, std::size_t n) {
      return static_cast<FakeCore*>(c)->mem_write(a, d, n);
    };
    hal_.mem_read = [](void* c, std::uint64_t a, std::uint8_t* d, std::size_t n) {
      return static_cast<FakeCore*>(c)->mem_read(a, d, n);
    };
    hal_.wait_cycles = [](void* c, std::uint64_t n) { return static_cast<FakeCore*>(c)->wait(n); };
    hal_.mem_capacity = [](void* c) {
      return static_cast<std::uint64_t>(static_cast<FakeCore*>(c)->mem.size());
    };
    hal_.failed = [](void* c) { return static_cast<FakeCore*>(c)->hal_failed ? 1 : 0; };
    hal_.smem_words = [](void* c) {
      return static_cast<std::uint32_t>(static_cast<FakeCore*>(c)->smem.size());
    };
  }
  FakeCore(const FakeCore&) = delete;
  FakeCore& operator=(const FakeCore&) = delete;

  const fw_hal* hal() const { return &hal_; }

  // ---- what the test sets up ----
  Outcome outcome = Outcome::Complete;
  std::uint64_t run_cycles = 5000;  // busy cycles until the outcome
  bool hal_failed = false;
  // small: DIM 8, 8192 VMEM rows, 1024 ACC rows
  std::uint32_t config = FW_CONFIG_DIM_PUT(8u) | FW_CONFIG_LOG2_VMEM_ROWS_PUT(13u) | FW_CONFIG_LOG2_ACC_ROWS_PUT(10u);

  // ---- device state ----
  std::vector<std::uint8_t> mem;
  std::array<std::uint32_t, 256> smem{};
  std::array<std::uint32_t, FW_NUM_SEMS> sems{};
  std::array<std::uint64_t, FW_NUM_COUNTERS> counters{};
  std::uint32_t status = 0;
  std::uint32_t prog_base = 0;
  std::uint32_t smem_addr = 0;
  std::uint32_t error_info = 0;
  std::uint32_t queue_state = 0;
  std::uint32_t head_wait = 0;
  std::uint32_t pc = 0;
  std::uint64_t busy_left = 0;

  // ---- what the test observes ----
  int starts = 0;
  int soft_resets = 0;
  int bad_csr_accesses = 0;
  std::uint64_t cycles_waited = 0;
  std::vector<std::uint64_t> wait_requests;

  std::uint32_t csr_read(std::uint32_t a) {
    if (a == FW_CSR_ID) return FW_ID_VALUE;
    if (a == FW_CSR_CONFIG) return config;
    if (a == FW_CSR_STATUS) return status;
    if (a == FW_CSR_PROG_BASE) return prog_base;
    if (a == FW_CSR_ERROR_INFO) return error_info;
    if (a == FW_CSR_QUEUE_STATE) return queue_state;
    if (a == FW_CSR_HEAD_WAIT) return head_wait;
    if (a == FW_CSR_PC) return pc;
    if (a == FW_CSR_SMEM_ADDR) return smem_addr;
    if (a == FW_CSR_SMEM_DATA) {
      const std::uint32_t v = smem_addr < smem.size() ? smem[smem_addr] : 0xDEADBEEFu;
      ++smem_addr;
      return v;
    }
    if (a >= FW_CSR_SEM(0) && a < FW_CSR_SEM(FW_NUM_SEMS) && a % 4 == 0)
      return sems[(a - FW_CSR_SEM(0)) / 4];
    if (a >= FW_CSR_COUNTER_LO(0) && a < FW_CSR_COUNTER_LO(FW_NUM_COUNTERS) && a % 4 == 0) {
      const std::uint64_t v = counters[(a - FW_CSR_COUNTER_LO(0)) / 8];
      return (a % 8 == 0) ? static_cast<std::uint32_t>(v) : static_cast<std::uint32_t>(v >> 32);
    }
    ++bad_csr_accesses;
    return 0;
  }

  void csr_write(std::uint32_t a, std::uint32_t v) {
    if (a == FW_CSR_CTRL) {
      if (v & FW_CTRL_SOFT_RESET) {
        ++soft_resets;
        status = 0;
        sems.fill(0);
        counters.fill(0);
        queue_state = head_wait = error_info = pc = 0;
        busy_left = 0;
      }
      if (v & FW_CTRL_START) {
        ++starts;
        counters.fill(0);  // START clears the counters, as the core does (docs/isa.md)
        status = FW_STATUS_BUSY;
        busy_left = run_cycles;
        pc = 0;
        error_info = 0;
      }
    } else if (a == FW_CSR_PROG_BASE) {
      prog_base = v;
    } else if (a == FW_CSR_SMEM_ADDR) {
      smem_addr = v;
    } else if (a == FW_CSR_SMEM_DATA) {
      if (smem_addr < smem.size()) smem[smem_addr] = v;
      ++smem_addr;
    } else if (a >= FW_CSR_SEM(0) && a < FW_CSR_SEM(FW_NUM_SEMS) && a % 4 == 0) {
      sems[(a - FW_CSR_SEM(0)) / 4] = v & ((1u << FW_SEM_WIDTH) - 1);
    } else {
      ++bad_csr_accesses;
    }
  }

  int mem_write(std::uint64_t a, const std::uint8_t* d, std::size_t n) {
    if (hal_failed) return FW_ST_HAL_ERROR;
    if (a > mem.size() || n > mem.size() - a) return FW_ST_OUT_OF_RANGE;
    std::memcpy(mem.data() + a, d, n);
    return FW_ST_OK;
  }

  int mem_read(std::uint64_t a, std::uint8_t* d, std::size_t n) {
    if (hal_failed) return FW_ST_HAL_ERROR;
    if (a > mem.size() || n > mem.size() - a) return FW_ST_OUT_OF_RANGE;
    std::memcpy(d, mem.data() + a, n);
    return FW_ST_OK;
  }

  // Like CoreSim::step(n, stop_when_idle = true).
  std::uint64_t wait(std::uint64_t n) {
    wait_requests.push_back(n);
    if (!(status & FW_STATUS_BUSY) || outcome == Outcome::Hang) {
      if (status & FW_STATUS_BUSY) {
        counters[FW_COUNTER_CYCLES] += n;
        pc = 3;
        // DMA 1, MXU 1, vector 2 entries, nothing waits
        queue_state = FW_QUEUE_STATE_DMA_ENTRIES_PUT(1u) | FW_QUEUE_STATE_MXU_ENTRIES_PUT(1u) | FW_QUEUE_STATE_VEC_ENTRIES_PUT(2u);
      }
      cycles_waited += n;
      return (status & FW_STATUS_BUSY) ? n : 0;
    }
    const std::uint64_t k = std::min(n, busy_left);
    busy_left -= k;
    counters[FW_COUNTER_CYCLES] += k;
    cycles_waited += k;
    if (busy_left == 0) finish();
    return k;
  }

 private:
  void finish() {
    switch (outcome) {
      case Outcome::Complete:
        status = FW_STATUS_DONE;
        pc = 12;
        queue_state = FW_QUEUE_STATE_FETCH_STOPPED;  // queues empty
        for (std::size_t j = 1; j < counters.size(); ++j) counters[j] = 100 * j + 7;
        counters[FW_NUM_COUNTERS - 1] = 0x123456789ABCull;  // needs the high word
        break;
      case Outcome::Deadlock:
        status = FW_STATUS_ERROR | FW_STATUS_ERROR_CODE_PUT(FW_ERR_DEADLOCK);
        pc = 7;
        error_info = 6;
        // DMA 1 entry waiting on s3 (needs 1), MXU empty, vector 2 entries waiting on s5.
        queue_state = FW_QUEUE_STATE_DMA_ENTRIES_PUT(1u) | FW_QUEUE_STATE_VEC_ENTRIES_PUT(2u) | FW_QUEUE_STATE_FETCH_STOPPED |
                      FW_QUEUE_STATE_DMA_WAITS | FW_QUEUE_STATE_VEC_WAITS;
        head_wait = FW_HEAD_WAIT_DMA_SEM_PUT(3u) | FW_HEAD_WAIT_VEC_SEM_PUT(5u) | FW_HEAD_WAIT_WAIT_CNT_PUT(1u);
        sems[5] = 0;
        sems[9] = 4;
        break;
      case Outcome::IllegalOpcode:
        status = FW_STATUS_ERROR | FW_STATUS_ERROR_CODE_PUT(FW_ERR_ILLEGAL_OPCODE);
        error_info = 5;
        pc = 6;
        queue_state = FW_QUEUE_STATE_FETCH_STOPPED;
        break;
      case Outcome::Hang: break;
    }
  }

  fw_hal hal_{};
};

}  // namespace tpuemu::testing
