// SPDX-License-Identifier: Apache-2.0
// One tpuemu core at its clock: the interface that every model of rtl/tpu_top.sv implements - the
// Verilated RTL (sim/tlm/rtl/rtl_core_model_impl.h) and the cycle-level TLM model
// (sim/tlm/include/tpuemu/tlm/core_model.h) - and that the one SystemC module over a core
// (sim/tlm/include/tpuemu/tlm/clocked_core_module.h) clocks. docs/systemc.md, "One clocked-core
// interface", says why it is this interface and how CoreSim (core_sim.h) sits on it.
//
// What it covers is what the core's ports carry: reset, the CSR bus (a combinational read, or one
// clock edge with the bus driven), clock edges until an event, the run state and the trace port.
// The memory port is the implementation's constructor argument (a BeatPort for both models:
// tlm/core_model.h), because each model drives it in its own way; the clock does not.
//
// C++17 and free of SystemC, Verilator and the generated contract: the SystemC side (C++17,
// Debian's SystemC is built for it) includes it, and so do both models (C++20).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace tpuemu::sim {

// The sizes a core is elaborated with (tpu_top's parameters), from the preset: the Verilated
// core has them fixed when verilated, the TLM model takes them at construction, the fake backend's
// functional core uses those it models (host/src/sim_setup turns a Preset into one).
struct CoreShape {
  std::uint32_t dim = 0;
  std::uint32_t vmem_rows = 0;
  std::uint32_t vmem_banks = 0;
  std::uint32_t acc_rows = 0;
  std::uint32_t smem_words = 0;
  std::uint32_t queue_depth = 0;
  std::uint32_t mem_outstanding = 0;
};

// What the core's trace port (tpu_pkg::trace_t, spec::trace) showed in one cycle, as both models
// sample it. Cycles are the core's, counted since the model was made (ClockedCore::cycle()).
struct TraceEvent {
  enum Kind : std::uint8_t { Issue, Done, WaitBegin, WaitEnd };
  std::uint64_t cycle = 0;
  std::uint8_t engine = 0;  // index into spec::trace::kEngines: 0 DMA, 1 MXU, 2 vector
  Kind kind = Issue;
  std::uint32_t index = 0;  // queue index of the instruction
};

class ClockedCore {
 public:
  virtual ~ClockedCore() = default;

  // The systolic array's size, also the memory port's width in bytes.
  virtual std::uint32_t dim() const = 0;
  // rst_ni low for four edges and high for a fifth, as the Verilator harness does: the core's
  // state is cleared, its memories kept. Nothing may be in flight on the memory port.
  virtual void reset() = 0;
  // Combinational CSR read: the bus driven, no clock edge.
  virtual std::uint32_t csr_peek(std::uint32_t addr) = 0;
  // Whether reading `addr` changes state on the next edge (SMEM_DATA advances SMEM_ADDR): a
  // firmware's read of it is csr_peek() and then csr_cycle() with write false.
  virtual bool csr_read_advances(std::uint32_t addr) const = 0;
  // One clock edge with the CSR bus driven: a write, or a read with a side effect.
  virtual void csr_cycle(std::uint32_t addr, bool write, std::uint32_t value) = 0;
  // Up to `cycles` clock edges with an idle CSR bus; returns after the edge that leaves the core
  // not busy when stop_when_idle is set, or after the edge in which stop() was called. Returns
  // the edges run. Throws std::runtime_error when the model fails (the Verilated core: an
  // assertion or $stop, "RTL: file.sv:line: message").
  virtual std::uint64_t run(std::uint64_t cycles, bool stop_when_idle) = 0;
  // From the memory port, during run(): end the run after the current edge (a memory fault).
  virtual void stop() = 0;
  // Clock edges since construction, reset edges included.
  virtual std::uint64_t cycle() const = 0;
  virtual bool busy() const = 0;

  // The trace port, sampled every cycle while on (before the edge, as the engines drive it):
  // Issue indices count from 0 at the call, as the core's count from 0 at each start. Off, it
  // costs a model one branch per cycle.
  virtual void record_trace(bool on) = 0;
  // What was seen since, with a WaitEnd for every wait the run ended in (a deadlock).
  virtual std::vector<TraceEvent> take_trace() = 0;
  // The first cycle the core was busy since record_trace(true).
  virtual std::optional<std::uint64_t> trace_start() const = 0;
};

}  // namespace tpuemu::sim
