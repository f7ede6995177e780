// SPDX-License-Identifier: Apache-2.0
// Simulator binding of the firmware HAL: CSR accesses go to the Verilated core through
// tpuemu::sim::CoreSim, memory accesses are backdoor accesses to its memory model, and
// wait_cycles advances the clock. Normal (hosted) C++; not part of the freestanding firmware.
#pragma once

#include <cstdint>
#include <exception>

#include "tpuemu/fw/firmware.h"

namespace tpuemu::sim {
class CoreSim;
}

namespace tpuemu::fw {

class SimHal {
 public:
  // smem_words: the core's SMEM size (the preset's smem_words), which its CSRs do not report.
  SimHal(tpuemu::sim::CoreSim& core, std::uint32_t smem_words);
  SimHal(const SimHal&) = delete;
  SimHal& operator=(const SimHal&) = delete;

  // The HAL to pass to fw_handle_frame; valid while this object lives.
  const fw_hal* hal() const { return &hal_; }
  tpuemu::sim::CoreSim& core() { return core_; }

  // An exception thrown by the simulator inside a HAL call is caught (it must not cross the
  // firmware, which is compiled without exceptions), remembered, and reported to the firmware
  // through fw_hal::failed; after that every HAL call is a no-op. The caller of fw_handle_frame
  // rethrows it with rethrow_if_failed(), which also clears the state. A memory fault of the core
  // (CoreSim::fault(): an access outside the memory model, which stops the clock) is reported the
  // same way, as std::runtime_error "core memory fault: ...", and cleared in the CoreSim.
  bool failed() const { return static_cast<bool>(error_); }
  void rethrow_if_failed();

 private:
  static std::uint32_t csr_read(void* ctx, std::uint32_t addr);
  static void csr_write(void* ctx, std::uint32_t addr, std::uint32_t value);
  static int mem_write(void* ctx, std::uint64_t addr, const std::uint8_t* data, std::size_t len);
  static int mem_read(void* ctx, std::uint64_t addr, std::uint8_t* data, std::size_t len);
  static std::uint64_t wait_cycles(void* ctx, std::uint64_t n);
  static std::uint64_t mem_capacity(void* ctx);
  static int has_failed(void* ctx);
  static std::uint32_t smem_words(void* ctx);

  tpuemu::sim::CoreSim& core_;
  std::uint32_t smem_words_;
  fw_hal hal_{};
  std::exception_ptr error_;
};

}  // namespace tpuemu::fw
