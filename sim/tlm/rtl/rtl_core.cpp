// SPDX-License-Identifier: Apache-2.0
// RtlCore (rtl_core.h): the clock thread, the CSR target and the memory initiator.
#include "tpuemu/tlm/rtl_core.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>

namespace tpuemu::tlm {

RtlCore::RtlCore(sc_core::sc_module_name name, const std::string& preset, sc_core::sc_time period,
                 std::uint64_t quantum_cycles)
    : sc_module(name),
      memory("memory"),
      csr("csr"),
      model_(RtlCoreModel::make(preset, *this)),
      period_(period),
      quantum_(std::max<std::uint64_t>(quantum_cycles, 1)) {
  if (period_ == sc_core::SC_ZERO_TIME) throw std::invalid_argument("rtl core: the clock period must be positive");
  csr.register_b_transport(this, &RtlCore::csr_b_transport);
  payload_.set_extension(&extension_);
  SC_THREAD(clock_thread);
}

RtlCore::~RtlCore() {
  payload_.clear_extension(&extension_);  // a member, not the payload's to free
}

void RtlCore::grant(std::uint64_t cycles, bool stop_when_idle) {
  forever_ = false;
  budget_ = cycles;
  ran_ = 0;
  stop_when_idle_ = stop_when_idle;
  wake_.notify(sc_core::SC_ZERO_TIME);
}

void RtlCore::run_forever() {
  forever_ = true;
  ran_ = 0;
  wake_.notify(sc_core::SC_ZERO_TIME);
}

void RtlCore::reset() {
  model_->reset();
  csr_pending_.clear();
}

bool RtlCore::has_work() const {
  if (fault_) return false;
  if (forever_) return !csr_pending_.empty() || model_->busy();
  return budget_ > 0;
}

void RtlCore::anchor_to_systemc_time() {
  // The next edge at or after SystemC time (a firmware may wait for any time, not whole periods).
  const auto now_cycle = static_cast<std::int64_t>(std::ceil(sc_core::sc_time_stamp() / period_ - 1e-9));
  const auto core_cycle = static_cast<std::int64_t>(model_->cycle());
  // Unchanged while the clock ran (the thread's sync wait ends exactly at its last edge); larger
  // after edges that took no SystemC time (reset), smaller after a pause or gated stretch.
  anchor_ = core_cycle - now_cycle;
}

sc_core::sc_time RtlCore::time_of(std::uint64_t core_cycle) const {
  return period_ * static_cast<double>(static_cast<std::int64_t>(core_cycle) - anchor_);
}

sc_core::sc_time RtlCore::offset_of(std::uint64_t core_cycle) const {
  // Never negative: the thread only runs ahead, unless a target's b_transport waited past it.
  const sc_core::sc_time t = time_of(core_cycle), now = sc_core::sc_time_stamp();
  return t > now ? t - now : sc_core::SC_ZERO_TIME;
}

void RtlCore::clock_thread() {
  for (;;) {
    while (!has_work()) {
      if (!forever_) sc_core::sc_pause();
      wait(wake_);
    }
    anchor_to_systemc_time();
    const bool was_busy = model_->busy();
    // One slice: up to a quantum ahead of SystemC time.
    const std::uint64_t slice = forever_ ? quantum_ : std::min(budget_, quantum_);
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

BeatTiming RtlCore::request(std::uint64_t cycle, const BeatRequest& beat) {
  ::tlm::tlm_generic_payload& p = payload_;
  p.set_command(beat.write ? ::tlm::TLM_WRITE_COMMAND : ::tlm::TLM_READ_COMMAND);
  p.set_address(beat.addr);
  p.set_data_ptr(beat.data);
  p.set_data_length(beat.len);
  p.set_streaming_width(beat.len);
  p.set_byte_enable_ptr(nullptr);
  p.set_dmi_allowed(false);
  p.set_response_status(::tlm::TLM_INCOMPLETE_RESPONSE);
  extension_.timing = BeatTiming{};  // done == 0 afterwards: the target does not know the extension
  // The local time offset: the thread runs ahead of SystemC time.
  sc_core::sc_time delay = offset_of(cycle);
  memory->b_transport(p, delay);
  if (p.is_response_error() && !fault_) {
    fault_ = std::string("rtl core: memory ") + (beat.write ? "write" : "read") + " at " + hex(beat.addr) +
             " (cycle " + std::to_string(cycle) + "): " + p.get_response_string();
    model_->stop();
  }
  const BeatTiming& t = extension_.timing;
  if (t.done != 0) {
    // Target cycles count from SystemC time 0.
    return {static_cast<std::uint64_t>(static_cast<std::int64_t>(t.accept) + anchor_),
            static_cast<std::uint64_t>(static_cast<std::int64_t>(t.done) + anchor_)};
  }
  // A plain TLM-2.0 target: accepted now, the response when the returned delay ends.
  const sc_core::sc_time response = sc_core::sc_time_stamp() + delay;
  const auto response_cycle =
      static_cast<std::uint64_t>(static_cast<std::int64_t>(std::ceil(response / period_ - 1e-9)) + anchor_);
  std::uint64_t& last = beat.write ? last_ack_done_ : last_read_done_;
  last = std::max({response_cycle, cycle + 1, last + 1});
  return {cycle, last};
}

void RtlCore::csr_b_transport(::tlm::tlm_generic_payload& p, sc_core::sc_time& delay) {
  const bool taken = take_csr_access(
      p, [&](std::uint32_t a) { return model_->csr_peek(a); }, [&](std::uint32_t a) { return model_->csr_read_advances(a); },
      csr_pending_);
  if (!taken) return;
  if (!csr_pending_.empty()) wake_.notify(sc_core::SC_ZERO_TIME);  // a gated clock takes the edge
  delay += period_;
}

}  // namespace tpuemu::tlm
