// SPDX-License-Identifier: Apache-2.0
// The tpuemu core as a SystemC module (C++17): the core model (core_model.h) clocked by one
// SC_THREAD, its memory port a TLM-2.0 initiator socket (one transaction per beat), its CSRs a
// TLM-2.0 target socket (4-byte reads and writes at the CSR addresses of docs/contract.md).
//
// Two codings of the memory port, chosen at construction (docs/systemc.md):
//  - LooselyTimed: b_transport with temporal decoupling - the thread runs up to `quantum_cycles`
//    ahead of SystemC time and annotates each beat with its local time offset (the TLM-2.0 quantum
//    keeper's rule); it synchronises once per quantum. Fast.
//  - ApproximatelyTimed: nb_transport_fw on the base protocol (BEGIN_REQ .. END_RESP), the thread
//    synchronising with SystemC time every cycle, so other modules see each beat at its cycle.
// Both give the same cycles with the memory targets of this project, which time a beat when it
// arrives (memory_target.h); AT exists for platforms whose other initiators or targets need it.
//
// CSR accesses take effect on the core's next clock edge, one per edge, in arrival order; a read
// returns the registers as they are (SMEM_DATA's read advances SMEM_ADDR on that edge).
// The thread runs while it has cycles granted by run(); `stop_when_idle` returns after the edge
// that leaves the core idle. A platform without a firmware driving run() can call run_forever().
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include "tpuemu/tlm/beat_extension.h"
#include "tpuemu/tlm/socket_support.h"
#include "tpuemu/tlm/core_model.h"

namespace tpuemu::tlm {

enum class Coding { LooselyTimed, ApproximatelyTimed };

class TlmCore final : public sc_core::sc_module, private BeatPort {
 public:
  tlm_utils::simple_initiator_socket<TlmCore> memory;
  tlm_utils::simple_target_socket<TlmCore> csr;

  TlmCore(sc_core::sc_module_name name, const CoreShape& shape, sc_core::sc_time period, Coding coding,
          std::uint64_t quantum_cycles = 4096);
  ~TlmCore() override;

  // Grants the clock thread `cycles` more edges (stopping early once idle when asked); the thread
  // calls sc_pause() when they are used up. cycles_run() counts the edges since the grant.
  void grant(std::uint64_t cycles, bool stop_when_idle);
  std::uint64_t cycles_run() const { return ran_; }
  bool granted() const { return budget_ > 0; }

  // The model's reset (rst_ni), between runs: nothing may be in flight.
  void reset();
  CoreModel& model() { return *model_; }
  const sc_core::sc_time& period() const { return period_; }

 private:
  SC_HAS_PROCESS(TlmCore);
  void clock_thread();
  BeatTiming request(std::uint64_t cycle, const BeatRequest& beat) override;
  void csr_b_transport(::tlm::tlm_generic_payload& p, sc_core::sc_time& delay);
  ::tlm::tlm_sync_enum nb_transport_bw(::tlm::tlm_generic_payload& p, ::tlm::tlm_phase& phase, sc_core::sc_time& delay);
  ::tlm::tlm_generic_payload& free_payload();

  std::unique_ptr<CoreModel> model_;
  sc_core::sc_time period_;
  Coding coding_;
  std::uint64_t quantum_;
  std::deque<CsrAccess> csr_pending_;
  std::uint64_t budget_ = 0, ran_ = 0;
  bool stop_when_idle_ = false;
  sc_core::sc_event granted_;
  std::uint64_t synced_cycle_ = 0;  // the core cycle SystemC time stands at
  // payloads: LT reuses one; AT keeps each until its END_RESP
  ::tlm::tlm_generic_payload lt_payload_;
  BeatExtension lt_extension_;
  struct AtBeat { ::tlm::tlm_generic_payload payload; BeatExtension extension; bool busy = false; };
  std::vector<std::unique_ptr<AtBeat>> at_beats_;
};

}  // namespace tpuemu::tlm
