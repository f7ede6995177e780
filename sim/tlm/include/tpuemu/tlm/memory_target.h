// SPDX-License-Identifier: Apache-2.0
// Device memory (HBM) as a TLM-2.0 target (SystemC, C++17): sparse storage behind one target
// socket, timed by a BeatTimingModel - the simple latency/bandwidth model or the HBM stack's
// timing model - so any SystemC platform can bind an initiator to it.
//
//  - Loosely timed: b_transport. The request's time is sc_time_stamp() + the annotated delay
//    (temporal decoupling); the delay returned is the time of the response.
//  - Approximately timed, base protocol: nb_transport_fw(BEGIN_REQ) is answered on the return path
//    with END_REQ at acceptance (TLM_UPDATED, the delay to it), and BEGIN_RESP follows on the
//    backward path at the response; the initiator ends with END_RESP (or TLM_COMPLETED).
//  - transport_dbg: untimed access (the firmware's backdoor, a debugger).
// Both timed paths fill a BeatExtension when the payload carries one. Times are core cycles of the
// given period; requests must arrive in time order (one initiator, the core's memory port).
// A read beyond the capacity returns zeros (instruction prefetch past END may reach there); a
// write beyond it is a fault (fault()), answered with TLM_ADDRESS_ERROR_RESPONSE.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/peq_with_cb_and_phase.h>
#include <tlm_utils/simple_target_socket.h>

#include "tpuemu/tlm/beat_timing.h"

namespace tpuemu::tlm {

class MemoryTarget final : public sc_core::sc_module {
 public:
  tlm_utils::simple_target_socket<MemoryTarget> socket;

  MemoryTarget(sc_core::sc_module_name name, std::uint64_t capacity_bytes, std::unique_ptr<BeatTimingModel> timing,
               sc_core::sc_time period);

  // Backdoor (no time); throws std::out_of_range beyond the capacity.
  void backdoor_write(std::uint64_t addr, const std::uint8_t* data, std::size_t len);
  void backdoor_read(std::uint64_t addr, std::uint8_t* data, std::size_t len);
  std::uint64_t capacity() const { return capacity_; }
  const std::optional<std::string>& fault() const { return fault_; }
  void clear_fault() { fault_.reset(); }
  BeatTimingModel& timing() { return *timing_; }

 private:
  void b_transport(::tlm::tlm_generic_payload& p, sc_core::sc_time& delay);
  ::tlm::tlm_sync_enum nb_transport_fw(::tlm::tlm_generic_payload& p, ::tlm::tlm_phase& phase, sc_core::sc_time& delay);
  unsigned int transport_dbg(::tlm::tlm_generic_payload& p);
  void begin_response(::tlm::tlm_generic_payload& p, const ::tlm::tlm_phase& phase);
  // Data and timing of one beat at core cycle `cycle`; returns its timing.
  BeatTiming serve(::tlm::tlm_generic_payload& p, std::uint64_t cycle);
  std::uint64_t cycle_at(const sc_core::sc_time& t) const;
  std::uint8_t* byte_at(std::uint64_t addr);

  static constexpr unsigned kPageBits = 20;
  std::uint64_t capacity_;
  std::unique_ptr<BeatTimingModel> timing_;
  sc_core::sc_time period_;
  std::vector<std::unique_ptr<std::array<std::uint8_t, std::size_t{1} << kPageBits>>> pages_;
  std::optional<std::string> fault_;
  tlm_utils::peq_with_cb_and_phase<MemoryTarget> responses_;
};

}  // namespace tpuemu::tlm
