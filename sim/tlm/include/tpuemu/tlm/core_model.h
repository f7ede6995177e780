// SPDX-License-Identifier: Apache-2.0
// The tlm backend's model of one tpuemu core (rtl/tpu_top.sv): the same programs, the same CSRs,
// counters and error codes, and the RTL's cycle rules - fetch into the three decoupled queues,
// the semaphore bank's priority grants, the DMA engine's beat walker with its outstanding reads,
// write buffer and completion classes, the MXU controller's weight loader and row streamer with
// shadow weights, bank tags and the 2*DIM array latency, the vector unit's state machine, the
// banked VMEM's fixed-priority ports, run control with deadlock detection. Control is stepped per
// cycle; data moves a row at a time (a matmul row is one DIM x DIM product when it enters the
// array, delivered 2*DIM cycles later), which is what makes it fast. docs/systemc.md lists what
// it abstracts away.
//
// C++17 and free of SystemC and of the generated contract (the implementation uses both sides'
// headers; this one is included by the SystemC modules, see beat_timing.h).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tpuemu/tlm/beat_timing.h"

namespace tpuemu::tlm {

// The sizes a Verilated core fixes (tpu_top's parameters), from the preset.
struct CoreShape {
  std::uint32_t dim = 0;
  std::uint32_t vmem_rows = 0;
  std::uint32_t vmem_banks = 0;
  std::uint32_t acc_rows = 0;
  std::uint32_t smem_words = 0;
  std::uint32_t queue_depth = 0;
  std::uint32_t mem_outstanding = 0;
};

// A beat on the core's memory port. Read data is written to `data` (dim bytes, owned by the
// core model until the response is delivered); write data is read from it.
struct BeatRequest {
  bool write = false;
  std::uint64_t addr = 0;
  std::uint8_t* data = nullptr;
  std::uint32_t len = 0;
};

// What the core's memory port is bound to: the SystemC initiator socket (tlm_core.h) or, in
// tests, a timing model directly. Requests come in cycle order.
class BeatPort {
 public:
  virtual ~BeatPort() = default;
  virtual BeatTiming request(std::uint64_t cycle, const BeatRequest& beat) = 0;
};

// One trace-port event (tpu_pkg::trace_t as the Verilated harness samples it, sim::TraceEvent).
struct CoreTraceEvent {
  enum Kind : std::uint8_t { Issue, Done, WaitBegin, WaitEnd };
  std::uint64_t cycle = 0;
  std::uint8_t engine = 0;  // spec::trace::kEngines index: 0 DMA, 1 MXU, 2 vector
  Kind kind = Issue;
  std::uint32_t index = 0;
};

class CoreModel {
 public:
  virtual ~CoreModel() = default;
  // Throws std::invalid_argument naming a size the RTL would refuse to elaborate.
  static std::unique_ptr<CoreModel> make(const CoreShape& shape, BeatPort& port);

  virtual const CoreShape& shape() const = 0;
  // rst_ni for a few cycles (the harness's reset): state cleared, memories kept.
  virtual void reset() = 0;
  // Combinational CSR read (no clock edge).
  virtual std::uint32_t csr_peek(std::uint32_t addr) const = 0;
  // One clock edge with the CSR bus driven: a write, or a read of SMEM_DATA (which advances
  // SMEM_ADDR on the edge). Returns the read data sampled before the edge.
  // Whether reading `addr` changes state on the next edge (SMEM_DATA advances SMEM_ADDR).
  virtual bool csr_read_advances(std::uint32_t addr) const = 0;
  virtual std::uint32_t csr_cycle(std::uint32_t addr, bool write, std::uint32_t value) = 0;
  // Up to `cycles` clock edges with an idle CSR bus; stops after the edge that leaves the core
  // not busy when stop_when_idle is set. Returns the edges run.
  virtual std::uint64_t run(std::uint64_t cycles, bool stop_when_idle) = 0;
  virtual std::uint64_t cycle() const = 0;
  virtual bool busy() const = 0;

  // The trace port, sampled every cycle while on (Issue indices count from 0 at the call).
  virtual void record_trace(bool on) = 0;
  virtual std::vector<CoreTraceEvent> take_trace() = 0;
  // The first cycle the core was busy since record_trace(true).
  virtual std::optional<std::uint64_t> trace_start() const = 0;
};

}  // namespace tpuemu::tlm
