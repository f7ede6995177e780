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

#include "tpuemu/sim/clocked_core.h"
#include "tpuemu/tlm/beat_timing.h"

namespace tpuemu::tlm {

// The one CoreShape of the project (sim/clocked_core.h).
using CoreShape = sim::CoreShape;

// A beat on the core's memory port. Read data is written to `data` (dim bytes, owned by the
// core model until the response is delivered); write data is read from it.
struct BeatRequest {
  bool write = false;
  std::uint64_t addr = 0;
  std::uint8_t* data = nullptr;
  std::uint32_t len = 0;
};

// What a core's memory port is bound to, in both models (the TLM one and the Verilated one,
// rtl_core_model.h): the SystemC module's initiator socket (clocked_core_module.h) or, in tests, a timing
// model directly. Requests come in cycle order.
class BeatPort {
 public:
  virtual ~BeatPort() = default;
  virtual BeatTiming request(std::uint64_t cycle, const BeatRequest& beat) = 0;
};

// One trace-port event, as the Verilated harness samples it (sim/clocked_core.h).
using CoreTraceEvent = sim::TraceEvent;

// The TLM model is a ClockedCore (its memory port a BeatPort, given at construction) of any shape.
class CoreModel : public sim::ClockedCore {
 public:
  // Throws std::invalid_argument naming a size the RTL would refuse to elaborate.
  static std::unique_ptr<CoreModel> make(const CoreShape& shape, BeatPort& port);

  virtual const CoreShape& shape() const = 0;
  // On by default: the quiet, streaming and engine cycles are stepped by loops that do only what
  // changes in them (docs/systemc.md). Off: every cycle is stepped in full; the same cycles and
  // counters, slower - what the tests check the fast paths against.
  virtual void set_fast_paths(bool on) = 0;
  std::uint32_t dim() const final { return shape().dim; }
};

}  // namespace tpuemu::tlm
