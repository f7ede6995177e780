// SPDX-License-Identifier: Apache-2.0
// A tpuemu core as a SystemC module (C++17): any ClockedCore (sim/clocked_core.h) - the TLM model
// (TlmCore, tlm_core.h) or the Verilated RTL (RtlCore, rtl_core.h) - clocked by one SC_THREAD,
// its CSRs a TLM-2.0 target socket, its memory port a TLM-2.0 initiator socket. The clock thread
// is written once, here; docs/systemc.md describes the sockets and the timing rules.
//
//  - csr (target): 4-byte b_transport reads and writes at the CSR addresses of docs/isa.md. A read
//    returns the register at once (combinationally); a write, or a read with a side effect
//    (SMEM_DATA advances SMEM_ADDR), takes effect on the core's next clock edge, one per edge, in
//    arrival order. The delay is annotated with one clock period.
//  - memory (initiator): every beat the core presents (DIM bytes) is one generic payload with a
//    BeatExtension attached, in one of two codings chosen at construction:
//     - LooselyTimed: b_transport with temporal decoupling - the thread runs up to
//       `quantum_cycles` edges ahead of SystemC time, annotates each beat with its local time
//       offset (the TLM-2.0 quantum keeper's rule) and synchronises once per quantum. A target
//       that ignores the extension is timed by the returned delay: accepted at once, the
//       response at the delay (one per cycle at most).
//     - ApproximatelyTimed: nb_transport_fw on the base protocol (BEGIN_REQ .. END_RESP), the
//       thread synchronising with SystemC time every cycle, so other modules see each beat at its
//       cycle. The target must fill the extension.
//    The extension's BeatTiming says when the beat is accepted (the core's mem_req_ready_i stays
//    low until then) and when its response reaches the core (read data, or write
//    acknowledgement; in order). An error response stops the clock (fault()).
//
// Two ways to run it:
//  - Driven from outside the simulation (sc_main or a host program, as platform.h does):
//    grant(N, stop_when_idle) and sc_start(); the thread calls sc_pause() once the N edges are
//    used (or the core went idle).
//  - Free-running inside a platform: run_forever(). The clock is gated while the core is idle and
//    no CSR access is pending (an idle core's edges change nothing the firmware can see: the cycle
//    counter counts busy cycles); idle_event() fires when the core finishes, like an interrupt.
//
// A template over the model's type rather than a class over ClockedCore&: model() then returns
// the model as what it is (the TLM model's trace port, which ClockedCore does not have), and the
// module stays header-only for the installed package.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>
#include <systemc>
#include <tlm>

#include "tpuemu/sim/clocked_core.h"
#include "tpuemu/tlm/beat_extension.h"
#include "tpuemu/tlm/core_model.h"
#include "tpuemu/tlm/socket_support.h"

namespace tpuemu::tlm {

enum class Coding { LooselyTimed, ApproximatelyTimed };

template <typename Model>
class ClockedCoreModule : public sc_core::sc_module, private BeatPort {
  static_assert(std::is_base_of_v<sim::ClockedCore, Model>, "a core module clocks a ClockedCore");

 public:
  tlm_utils::simple_initiator_socket<ClockedCoreModule> memory;
  tlm_utils::simple_target_socket<ClockedCoreModule> csr;

  // Makes the model with this module's initiator as its memory port.
  using MakeModel = std::function<std::unique_ptr<Model>(BeatPort&)>;

  // `label` starts the module's messages ("rtl core: ..."); throws std::invalid_argument for a
  // zero period and whatever make_model throws.
  ClockedCoreModule(sc_core::sc_module_name name, std::string label, const MakeModel& make_model,
                    sc_core::sc_time period, Coding coding, std::uint64_t quantum_cycles)
      : sc_module(name),
        memory("memory"),
        csr("csr"),
        label_(std::move(label)),
        period_(period),
        coding_(coding),
        quantum_(std::max<std::uint64_t>(quantum_cycles, 1)) {
    if (period_ == sc_core::SC_ZERO_TIME) {
      throw std::invalid_argument(label_ + ": the clock period must be positive");
    }
    model_ = make_model(*this);
    csr.register_b_transport(this, &ClockedCoreModule::csr_b_transport);
    memory.register_nb_transport_bw(this, &ClockedCoreModule::nb_transport_bw);
    lt_.payload.set_extension(&lt_.extension);
    SC_THREAD(clock_thread);
  }

  ~ClockedCoreModule() override {
    // The extensions are members, not the payloads' to free.
    lt_.payload.clear_extension(&lt_.extension);
    for (auto& b : at_beats_) b->payload.clear_extension(&b->extension);
  }

  // Grants the clock thread `cycles` more edges (returning early after the edge that leaves the
  // core idle when asked); the thread calls sc_pause() when they are used up.
  void grant(std::uint64_t cycles, bool stop_when_idle) {
    forever_ = false;
    budget_ = cycles;
    ran_ = 0;
    stop_when_idle_ = stop_when_idle;
    wake_.notify(sc_core::SC_ZERO_TIME);
  }
  // Edges run since the last grant() (or run_forever()).
  std::uint64_t cycles_run() const { return ran_; }
  // A free-running clock: never pauses the simulation (stop it with sc_stop()).
  void run_forever() {
    forever_ = true;
    ran_ = 0;
    wake_.notify(sc_core::SC_ZERO_TIME);
  }
  // Notified when the core goes from busy to idle (the program ended, or failed).
  const sc_core::sc_event& idle_event() const { return idle_event_; }

  bool busy() const { return model_->busy(); }
  std::uint32_t dim() const { return model_->dim(); }
  // Core clock edges since construction (reset edges included).
  std::uint64_t cycle() const { return model_->cycle(); }
  const sc_core::sc_time& period() const { return period_; }
  // The first error response of the memory (e.g. a write beyond its capacity); the clock has
  // stopped until clear_fault().
  const std::optional<std::string>& fault() const { return fault_; }
  void clear_fault() { fault_.reset(); }
  // rst_ni, between runs: nothing may be in flight; pending CSR accesses are dropped.
  void reset() {
    model_->reset();
    csr_pending_.clear();
  }
  Model& model() { return *model_; }
  const Model& model() const { return *model_; }

 private:
  SC_HAS_PROCESS(ClockedCoreModule);

  // One transaction of the memory port and its extension: LT reuses one, AT keeps each until
  // its END_RESP.
  struct Beat {
    ::tlm::tlm_generic_payload payload;
    BeatExtension extension;
    bool busy = false;
  };

  bool has_work() const {
    if (fault_) return false;
    if (forever_) return !csr_pending_.empty() || model_->busy();
    return budget_ > 0;
  }

  void clock_thread() {
    for (;;) {
      while (!has_work()) {
        if (!forever_) sc_core::sc_pause();
        wait(wake_);
      }
      anchor_to_systemc_time();
      const bool was_busy = model_->busy();
      // One slice: up to a quantum ahead of SystemC time (LT), or one cycle (AT).
      const std::uint64_t limit = coding_ == Coding::LooselyTimed ? quantum_ : 1;
      const std::uint64_t slice = forever_ ? limit : std::min(budget_, limit);
      std::uint64_t done = 0;
      while (done < slice && !csr_pending_.empty() && !fault_) {
        const CsrAccess a = csr_pending_.front();
        csr_pending_.pop_front();
        model_->csr_cycle(a.addr, a.write, a.value);
        ++done;
      }
      // A free-running clock is gated as soon as the core is idle; a granted one runs idle edges.
      if (done < slice && !fault_ && (!forever_ || model_->busy())) {
        done += model_->run(slice - done, stop_when_idle_ || forever_);
      }
      const bool idle = !model_->busy();
      ran_ += done;
      if (!forever_) budget_ = (fault_ || (stop_when_idle_ && idle)) ? 0 : budget_ - done;
      // SystemC time catches up with the edges run (the quantum keeper's sync).
      wait(offset_of(model_->cycle()));
      if (was_busy && idle) idle_event_.notify(sc_core::SC_ZERO_TIME);
    }
  }

  // SystemC time may have moved on while the clock was paused or gated: re-anchor the core's
  // cycles to it.
  void anchor_to_systemc_time() {
    // The next edge at or after SystemC time (a firmware may wait for any time, not whole periods).
    const auto now_cycle =
        static_cast<std::int64_t>(std::ceil(sc_core::sc_time_stamp() / period_ - 1e-9));
    // Unchanged while the clock ran (the thread's sync wait ends exactly at its last edge); larger
    // after edges that took no SystemC time (reset), smaller after a pause or gated stretch.
    anchor_ = static_cast<std::int64_t>(model_->cycle()) - now_cycle;
  }

  // The local time offset of a core cycle from SystemC time; never negative: the thread only
  // runs ahead, unless a target's b_transport waited past it.
  sc_core::sc_time offset_of(std::uint64_t core_cycle) const {
    // In whole units of the time resolution: exact, and cheaper than sc_time's double arithmetic
    // (this runs once per beat).
    const std::int64_t cycles = static_cast<std::int64_t>(core_cycle) - anchor_;
    if (cycles <= 0) return sc_core::SC_ZERO_TIME;
    const sc_core::sc_time t = sc_core::sc_time::from_value(period_.value() * static_cast<std::uint64_t>(cycles));
    const sc_core::sc_time now = sc_core::sc_time_stamp();
    return t > now ? t - now : sc_core::SC_ZERO_TIME;
  }

  // Target cycles count from SystemC time 0, the model's from its construction.
  std::uint64_t to_core(std::uint64_t target_cycle) const {
    return static_cast<std::uint64_t>(static_cast<std::int64_t>(target_cycle) + anchor_);
  }

  Beat& free_beat() {
    if (coding_ == Coding::LooselyTimed) return lt_;
    for (auto& b : at_beats_) {
      if (!b->busy) return *b;
    }
    at_beats_.push_back(std::make_unique<Beat>());
    Beat& b = *at_beats_.back();
    b.payload.set_extension(&b.extension);
    return b;
  }

  BeatTiming request(std::uint64_t cycle, const BeatRequest& beat) override {
    Beat& b = free_beat();
    ::tlm::tlm_generic_payload& p = b.payload;
    p.set_command(beat.write ? ::tlm::TLM_WRITE_COMMAND : ::tlm::TLM_READ_COMMAND);
    p.set_address(beat.addr);
    p.set_data_ptr(beat.data);
    p.set_data_length(beat.len);
    p.set_streaming_width(beat.len);
    p.set_byte_enable_ptr(nullptr);
    p.set_dmi_allowed(false);
    p.set_response_status(::tlm::TLM_INCOMPLETE_RESPONSE);
    b.extension.timing = BeatTiming{};  // done == 0 afterwards: the target does not know it
    // The local time offset: the thread runs ahead of SystemC time.
    sc_core::sc_time delay = offset_of(cycle);
    if (coding_ == Coding::LooselyTimed) {
      memory->b_transport(p, delay);
    } else {
      b.busy = true;
      ::tlm::tlm_phase phase = ::tlm::BEGIN_REQ;
      const ::tlm::tlm_sync_enum s = memory->nb_transport_fw(p, phase, delay);
      if (s == ::tlm::TLM_ACCEPTED) {
        SC_REPORT_ERROR(label_.c_str(),
                        "the memory target must answer BEGIN_REQ with END_REQ on the return path");
      }
      if (s == ::tlm::TLM_COMPLETED) b.busy = false;
    }
    if (p.is_response_error() && !fault_) {
      fault_ = label_ + ": memory " + (beat.write ? "write" : "read") + " at " + hex(beat.addr) +
               " (cycle " + std::to_string(cycle) + "): " + p.get_response_string();
      model_->stop();
    }
    const BeatTiming& t = b.extension.timing;
    if (t.done != 0) return {to_core(t.accept), to_core(t.done)};
    if (coding_ == Coding::ApproximatelyTimed) {
      SC_REPORT_ERROR(
          label_.c_str(),
          "the approximately-timed memory port needs a target that fills BeatExtension");
    }
    // A plain TLM-2.0 target: accepted now, the response when the returned delay ends.
    const sc_core::sc_time response = sc_core::sc_time_stamp() + delay;
    const std::uint64_t response_cycle =
        to_core(static_cast<std::uint64_t>(std::ceil(response / period_ - 1e-9)));
    std::uint64_t& last = beat.write ? last_ack_done_ : last_read_done_;
    last = std::max({response_cycle, cycle + 1, last + 1});
    return {cycle, last};
  }

  ::tlm::tlm_sync_enum nb_transport_bw(::tlm::tlm_generic_payload& p, ::tlm::tlm_phase& phase,
                                       sc_core::sc_time& /*delay*/) {
    if (phase != ::tlm::BEGIN_RESP) return ::tlm::TLM_ACCEPTED;
    for (auto& b : at_beats_) {
      if (&b->payload == &p) b->busy = false;
    }
    return ::tlm::TLM_COMPLETED;  // END_RESP implied
  }

  void csr_b_transport(::tlm::tlm_generic_payload& p, sc_core::sc_time& delay) {
    const bool taken = take_csr_access(
        p, [&](std::uint32_t a) { return model_->csr_peek(a); },
        [&](std::uint32_t a) { return model_->csr_read_advances(a); }, csr_pending_);
    if (!taken) return;
    if (!csr_pending_.empty()) wake_.notify(sc_core::SC_ZERO_TIME);  // a gated clock takes the edge
    delay += period_;
  }

  std::string label_;
  std::unique_ptr<Model> model_;
  sc_core::sc_time period_;
  Coding coding_;
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
  Beat lt_;
  std::vector<std::unique_ptr<Beat>> at_beats_;
};

}  // namespace tpuemu::tlm
