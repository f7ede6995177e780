// SPDX-License-Identifier: Apache-2.0
// Simulator binding of the firmware HAL (see tpuemu/fw/sim_hal.h).
#include "tpuemu/fw/sim_hal.h"

#include <span>
#include <stdexcept>

#include "tpuemu/sim/core_sim.h"

namespace tpuemu::fw {

namespace {
SimHal& self(void* ctx) { return *static_cast<SimHal*>(ctx); }
}  // namespace

SimHal::SimHal(tpuemu::sim::CoreSim& core, std::uint32_t smem_words)
    : core_(core), smem_words_(smem_words) {
  hal_.ctx = this;
  hal_.csr_read = &SimHal::csr_read;
  hal_.csr_write = &SimHal::csr_write;
  hal_.mem_write = &SimHal::mem_write;
  hal_.mem_read = &SimHal::mem_read;
  hal_.wait_cycles = &SimHal::wait_cycles;
  hal_.mem_capacity = &SimHal::mem_capacity;
  hal_.failed = &SimHal::has_failed;
  hal_.smem_words = &SimHal::smem_words;
}

void SimHal::rethrow_if_failed() {
  if (!error_) return;
  std::exception_ptr e = error_;
  error_ = nullptr;
  std::rethrow_exception(e);
}

std::uint32_t SimHal::csr_read(void* ctx, std::uint32_t addr) {
  SimHal& s = self(ctx);
  if (s.error_) return 0;
  try {
    return s.core_.csr_read(addr);
  } catch (...) {
    s.error_ = std::current_exception();
    return 0;
  }
}

void SimHal::csr_write(void* ctx, std::uint32_t addr, std::uint32_t value) {
  SimHal& s = self(ctx);
  if (s.error_) return;
  try {
    s.core_.csr_write(addr, value);
  } catch (...) {
    s.error_ = std::current_exception();
  }
}

int SimHal::mem_write(void* ctx, std::uint64_t addr, const std::uint8_t* data, std::size_t len) {
  SimHal& s = self(ctx);
  if (s.error_) return static_cast<int>(FW_ST_HAL_ERROR);
  try {
    s.core_.mem_write(addr, std::span<const std::uint8_t>(data, len));
    return static_cast<int>(FW_ST_OK);
  } catch (const std::out_of_range&) {
    return static_cast<int>(FW_ST_OUT_OF_RANGE);
  } catch (...) {
    s.error_ = std::current_exception();
    return static_cast<int>(FW_ST_HAL_ERROR);
  }
}

int SimHal::mem_read(void* ctx, std::uint64_t addr, std::uint8_t* data, std::size_t len) {
  SimHal& s = self(ctx);
  if (s.error_) return static_cast<int>(FW_ST_HAL_ERROR);
  try {
    s.core_.mem_read(addr, std::span<std::uint8_t>(data, len));
    return static_cast<int>(FW_ST_OK);
  } catch (const std::out_of_range&) {
    return static_cast<int>(FW_ST_OUT_OF_RANGE);
  } catch (...) {
    s.error_ = std::current_exception();
    return static_cast<int>(FW_ST_HAL_ERROR);
  }
}

std::uint64_t SimHal::wait_cycles(void* ctx, std::uint64_t n) {
  SimHal& s = self(ctx);
  if (s.error_) return 0;
  try {
    return s.core_.step(n, /*stop_when_idle=*/true);
  } catch (...) {
    s.error_ = std::current_exception();
    return 0;
  }
}

std::uint64_t SimHal::mem_capacity(void* ctx) {
  SimHal& s = self(ctx);
  if (s.error_) return 0;
  try {
    return s.core_.mem_capacity();
  } catch (...) {
    s.error_ = std::current_exception();
    return 0;
  }
}

std::uint32_t SimHal::smem_words(void* ctx) { return self(ctx).smem_words_; }

int SimHal::has_failed(void* ctx) {
  SimHal& s = self(ctx);
  if (s.error_) return 1;
  // A core access outside the memory model stops the clock (CoreSim::fault); report it once as a
  // failure of this command, so a RUN does not spin until its watchdog.
  try {
    if (auto msg = s.core_.fault()) {
      s.core_.clear_fault();
      s.error_ = std::make_exception_ptr(std::runtime_error("core memory fault: " + *msg));
    }
  } catch (...) {
    s.error_ = std::current_exception();
  }
  return s.error_ ? 1 : 0;
}

}  // namespace tpuemu::fw
