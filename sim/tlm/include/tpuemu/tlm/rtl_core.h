// SPDX-License-Identifier: Apache-2.0
// The Verilated RTL core of a preset as a SystemC IP block (C++17): rtl/tpu_top.sv clocked by one
// SC_THREAD, its CSRs a TLM-2.0 target socket, its memory port a TLM-2.0 initiator socket.
// docs/systemc-ip.md describes the sockets, the timing rules and how to link it.
//
//  - csr (target): 4-byte b_transport reads and writes at the CSR addresses of docs/isa.md. A read
//    returns the register at once (combinationally); a write, or a read with a side effect
//    (SMEM_DATA advances SMEM_ADDR), takes effect on the core's next clock edge, one per edge, in
//    arrival order. The delay is annotated with one clock period.
//  - memory (initiator): every beat the core presents (DIM bytes) is one generic payload, sent with
//    b_transport with the beat's local time offset annotated and a BeatExtension attached. The
//    target's BeatTiming says when the beat is accepted (mem_req_ready_i stays low until then) and
//    when its response reaches the core (read data, or write acknowledgement; in order). A target
//    that ignores the extension is timed by the returned delay: accepted at once, the response at
//    the delay (one per cycle at most). An error response stops the clock (fault()).
//  - The clock thread runs up to `quantum_cycles` edges ahead of SystemC time (temporal
//    decoupling, as the TLM-2.0 quantum keeper does) and then waits until SystemC time catches up.
//
// Two ways to run it:
//  - Driven from outside the simulation (sc_main or a host program): grant(N, stop_when_idle) and
//    sc_start(); the thread calls sc_pause() once the N edges are used (or the core went idle).
//  - Free-running inside a platform: run_forever(). The clock is gated while the core is idle and
//    no CSR access is pending (an idle core's edges change nothing the firmware can see: the cycle
//    counter counts busy cycles); idle_event() fires when the core finishes, like an interrupt.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include "tpuemu/tlm/beat_extension.h"
#include "tpuemu/tlm/socket_support.h"
#include "tpuemu/tlm/rtl_core_model.h"

namespace tpuemu::tlm {

class RtlCore final : public sc_core::sc_module, private BeatPort {
 public:
  tlm_utils::simple_initiator_socket<RtlCore> memory;
  tlm_utils::simple_target_socket<RtlCore> csr;

  // The Verilated core of `preset` (RtlCoreModel::presets()), reset; throws std::invalid_argument
  // for a preset without a core in this build.
  RtlCore(sc_core::sc_module_name name, const std::string& preset, sc_core::sc_time period,
          std::uint64_t quantum_cycles = 1024);
  ~RtlCore() override;

  // Grants the clock thread `cycles` more edges (returning early after the edge that leaves the
  // core idle when asked); the thread calls sc_pause() when they are used up.
  void grant(std::uint64_t cycles, bool stop_when_idle);
  // Edges run since the last grant() (or run_forever()).
  std::uint64_t cycles_run() const { return ran_; }
  // A free-running clock: never pauses the simulation (stop it with sc_stop()).
  void run_forever();
  // Notified when the core goes from busy to idle (the program ended, or failed).
  const sc_core::sc_event& idle_event() const { return idle_event_; }

  bool busy() const { return model_->busy(); }
  std::uint32_t dim() const { return model_->dim(); }
  // Core clock edges since construction (reset edges included).
  std::uint64_t cycle() const { return model_->cycle(); }
  const sc_core::sc_time& period() const { return period_; }
  // The first error response of the memory (a write beyond its capacity); the clock has stopped.
  const std::optional<std::string>& fault() const { return fault_; }
  // rst_ni (between runs; pending CSR accesses are dropped).
  void reset();

 private:
  SC_HAS_PROCESS(RtlCore);
  void clock_thread();
  bool has_work() const;
  // SystemC time may have moved on while the clock was paused or gated: re-anchor the core's
  // cycles to it.
  void anchor_to_systemc_time();
  sc_core::sc_time time_of(std::uint64_t core_cycle) const;
  // The local time offset of a core cycle from SystemC time.
  sc_core::sc_time offset_of(std::uint64_t core_cycle) const;
  BeatTiming request(std::uint64_t cycle, const BeatRequest& beat) override;
  void csr_b_transport(::tlm::tlm_generic_payload& p, sc_core::sc_time& delay);

  std::unique_ptr<RtlCoreModel> model_;
  sc_core::sc_time period_;
  std::uint64_t quantum_;
  std::deque<CsrAccess> csr_pending_;
  std::uint64_t budget_ = 0, ran_ = 0;
  bool stop_when_idle_ = false;
  bool forever_ = false;
  std::optional<std::string> fault_;
  sc_core::sc_event wake_, idle_event_;
  // Core cycle minus SystemC cycle (the core's clock does not run while paused or gated).
  std::int64_t anchor_ = 0;
  // For targets without the extension: the last response cycles, to keep one per cycle in order.
  std::uint64_t last_read_done_ = 0, last_ack_done_ = 0;
  // One payload for every beat: b_transport completes each before the next.
  ::tlm::tlm_generic_payload payload_;
  BeatExtension extension_;
};

}  // namespace tpuemu::tlm
