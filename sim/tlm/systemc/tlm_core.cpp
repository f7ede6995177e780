// SPDX-License-Identifier: Apache-2.0
#include "tpuemu/tlm/tlm_core.h"

#include <algorithm>
#include <cstring>

namespace tpuemu::tlm {

TlmCore::TlmCore(sc_core::sc_module_name name, const CoreShape& shape, sc_core::sc_time period, Coding coding,
                 std::uint64_t quantum_cycles)
    : sc_module(name),
      memory("memory"),
      csr("csr"),
      model_(CoreModel::make(shape, *this)),
      period_(period),
      coding_(coding),
      quantum_(std::max<std::uint64_t>(quantum_cycles, 1)) {
  csr.register_b_transport(this, &TlmCore::csr_b_transport);
  memory.register_nb_transport_bw(this, &TlmCore::nb_transport_bw);
  lt_payload_.set_extension(&lt_extension_);
  // SystemC time 0 is the model's cycle after its reset.
  synced_cycle_ = model_->cycle();
  SC_THREAD(clock_thread);
}

TlmCore::~TlmCore() {
  // The extensions are members, not the payloads' to free.
  lt_payload_.clear_extension(&lt_extension_);
  for (auto& b : at_beats_) b->payload.clear_extension(&b->extension);
}

void TlmCore::grant(std::uint64_t cycles, bool stop_when_idle) {
  budget_ = cycles;
  ran_ = 0;
  stop_when_idle_ = stop_when_idle;
  granted_.notify(sc_core::SC_ZERO_TIME);
}

void TlmCore::reset() {
  model_->reset();
  csr_pending_.clear();
  synced_cycle_ = model_->cycle();
}

void TlmCore::clock_thread() {
  for (;;) {
    while (budget_ == 0) {
      sc_core::sc_pause();
      wait(granted_);
    }
    // One slice: a whole quantum ahead of SystemC time (LT), or one cycle (AT).
    const std::uint64_t slice = coding_ == Coding::LooselyTimed ? std::min(budget_, quantum_) : 1;
    std::uint64_t done = 0;
    bool idle = false;
    while (done < slice && !csr_pending_.empty()) {
      const CsrAccess a = csr_pending_.front();
      csr_pending_.pop_front();
      model_->csr_cycle(a.addr, a.write, a.value);
      ++done;
    }
    if (done < slice) {
      const std::uint64_t n = model_->run(slice - done, stop_when_idle_);
      idle = stop_when_idle_ && n < slice - done;
      if (stop_when_idle_ && n == slice - done && !model_->busy()) idle = true;
      done += n;
    }
    ran_ += done;
    budget_ = idle ? 0 : budget_ - done;
    // SystemC time catches up with the cycles run (the quantum keeper's sync).
    synced_cycle_ += done;
    wait(period_ * static_cast<double>(done));
  }
}

BeatTiming TlmCore::request(std::uint64_t cycle, const BeatRequest& beat) {
  // The local time offset of the beat from SystemC time, which stands at synced_cycle_. Target
  // cycles count from SystemC time 0, the model's from its power-on.
  const sc_core::sc_time offset = period_ * static_cast<double>(cycle - synced_cycle_);
  const std::uint64_t to_model = synced_cycle_ - static_cast<std::uint64_t>(sc_core::sc_time_stamp() / period_ + 0.5);
  ::tlm::tlm_generic_payload* p = nullptr;
  BeatExtension* ext = nullptr;
  AtBeat* at = nullptr;
  if (coding_ == Coding::LooselyTimed) {
    p = &lt_payload_;
    ext = &lt_extension_;
  } else {
    AtBeat* free = nullptr;
    for (auto& b : at_beats_) {
      if (!b->busy) {
        free = b.get();
        break;
      }
    }
    if (!free) {
      at_beats_.push_back(std::make_unique<AtBeat>());
      free = at_beats_.back().get();
      free->payload.set_extension(&free->extension);
    }
    free->busy = true;
    at = free;
    p = &free->payload;
    ext = &free->extension;
  }
  p->set_command(beat.write ? ::tlm::TLM_WRITE_COMMAND : ::tlm::TLM_READ_COMMAND);
  p->set_address(beat.addr);
  p->set_data_ptr(beat.data);
  p->set_data_length(beat.len);
  p->set_streaming_width(beat.len);
  p->set_byte_enable_ptr(nullptr);
  p->set_dmi_allowed(false);
  p->set_response_status(::tlm::TLM_INCOMPLETE_RESPONSE);
  sc_core::sc_time delay = offset;
  if (coding_ == Coding::LooselyTimed) {
    memory->b_transport(*p, delay);
  } else {
    ::tlm::tlm_phase phase = ::tlm::BEGIN_REQ;
    const ::tlm::tlm_sync_enum s = memory->nb_transport_fw(*p, phase, delay);
    if (s == ::tlm::TLM_ACCEPTED) {
      SC_REPORT_ERROR("tpuemu/tlm_core", "the memory target must answer BEGIN_REQ with END_REQ on the return path");
    }
    if (s == ::tlm::TLM_COMPLETED) at->busy = false;
  }
  if (p->is_response_error() && !beat.write) {
    SC_REPORT_ERROR("tpuemu/tlm_core", p->get_response_string().c_str());
  }
  BeatTiming t = ext->timing;
  t.accept += to_model;
  t.done += to_model;
  return t;
}

::tlm::tlm_sync_enum TlmCore::nb_transport_bw(::tlm::tlm_generic_payload& p, ::tlm::tlm_phase& phase,
                                              sc_core::sc_time& /*delay*/) {
  if (phase == ::tlm::BEGIN_RESP) {
    for (auto& b : at_beats_) {
      if (&b->payload == &p) b->busy = false;
    }
    return ::tlm::TLM_COMPLETED;  // END_RESP implied
  }
  return ::tlm::TLM_ACCEPTED;
}

void TlmCore::csr_b_transport(::tlm::tlm_generic_payload& p, sc_core::sc_time& delay) {
  if (take_csr_access(
          p, [&](std::uint32_t a) { return model_->csr_peek(a); },
          [&](std::uint32_t a) { return model_->csr_read_advances(a); }, csr_pending_)) {
    delay += period_;
  }
}

}  // namespace tpuemu::tlm
