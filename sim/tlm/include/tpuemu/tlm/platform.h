// SPDX-License-Identifier: Apache-2.0
// One simulated device for the tlm backend: a SystemC simulation of its own holding the core
// module (tlm_core.h) bound to a memory target (memory_target.h), driven from outside SystemC by
// the firmware's HAL, as the Verilated core is. C++17 and free of SystemC headers, so that the
// host's C++20 code can hold one.
//
// SystemC keeps its simulation in one process-wide context, and elaboration ends with the first
// sc_start: so each Platform makes its own simulation context and makes it current for every
// call, all under one process-wide lock. Devices can therefore be created at any time and driven
// from any thread; calls on different devices are serialised (docs/systemc.md).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tpuemu/tlm/beat_timing.h"
#include "tpuemu/tlm/core_model.h"

namespace tpuemu::tlm {

struct PlatformConfig {
  CoreShape shape;
  std::uint64_t capacity_bytes = 0;
  double clock_ghz = 1.0;
  bool approximately_timed = false;  // the AT coding of the memory port (tlm_core.h)
  std::uint64_t quantum_cycles = 4096;
  bool fast_paths = true;  // the core model's fast paths (CoreModel::set_fast_paths)
};

class Platform {
 public:
  virtual ~Platform() = default;
  // The timing model is the memory target's; the platform keeps it.
  static std::unique_ptr<Platform> make(const PlatformConfig& config, std::unique_ptr<BeatTimingModel> timing);

  // The firmware's view (sim::CoreSim's, through the CSR and memory sockets).
  virtual void reset() = 0;
  virtual std::uint32_t csr_read(std::uint32_t addr) = 0;
  virtual void csr_write(std::uint32_t addr, std::uint32_t value) = 0;
  virtual std::uint64_t step(std::uint64_t cycles, bool stop_when_idle) = 0;
  virtual std::uint64_t cycle() const = 0;
  virtual void mem_write(std::uint64_t addr, const std::uint8_t* data, std::size_t len) = 0;
  virtual void mem_read(std::uint64_t addr, std::uint8_t* data, std::size_t len) = 0;
  virtual std::uint64_t mem_capacity() const = 0;
  virtual std::optional<std::string> fault() const = 0;
  virtual void clear_fault() = 0;
  virtual void record_trace(bool on) = 0;
  virtual std::vector<CoreTraceEvent> take_trace() = 0;
  virtual std::optional<std::uint64_t> trace_start() const = 0;
  // The memory's timing model (e.g. for its statistics).
  virtual BeatTimingModel& timing() = 0;
};

}  // namespace tpuemu::tlm
