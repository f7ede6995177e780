// SPDX-License-Identifier: Apache-2.0
#include "tpuemu/tlm/memory_target.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "tpuemu/tlm/beat_extension.h"
#include "tpuemu/tlm/socket_support.h"

namespace tpuemu::tlm {

MemoryTarget::MemoryTarget(sc_core::sc_module_name name, std::uint64_t capacity_bytes,
                           std::unique_ptr<BeatTimingModel> timing, sc_core::sc_time period)
    : sc_module(name),
      socket("socket"),
      capacity_(capacity_bytes),
      timing_(std::move(timing)),
      period_(period),
      responses_(this, &MemoryTarget::begin_response) {
  if (capacity_ == 0 || capacity_ > (std::uint64_t{1} << 32)) {
    throw std::invalid_argument("memory target: capacity " + std::to_string(capacity_) +
                                " must be in [1, 4 GiB] (32-bit addresses)");
  }
  if (!timing_) throw std::invalid_argument("memory target: no timing model");
  pages_.resize((capacity_ + (std::uint64_t{1} << kPageBits) - 1) >> kPageBits);
  socket.register_b_transport(this, &MemoryTarget::b_transport);
  socket.register_nb_transport_fw(this, &MemoryTarget::nb_transport_fw);
  socket.register_transport_dbg(this, &MemoryTarget::transport_dbg);
}

std::uint8_t* MemoryTarget::byte_at(std::uint64_t addr) {
  auto& page = pages_[addr >> kPageBits];
  if (!page) {
    page = std::make_unique<std::array<std::uint8_t, std::size_t{1} << kPageBits>>();
    page->fill(0);
  }
  return page->data() + (addr & ((std::uint64_t{1} << kPageBits) - 1));
}

void MemoryTarget::backdoor_write(std::uint64_t addr, const std::uint8_t* data, std::size_t len) {
  if (addr > capacity_ || len > capacity_ - addr) {
    throw std::out_of_range("memory: backdoor write of " + std::to_string(len) + " bytes at " + hex(addr) +
                            " is beyond the capacity " + hex(capacity_));
  }
  for (std::size_t done = 0; done < len;) {
    const std::uint64_t a = addr + done;
    const std::size_t n = std::min<std::size_t>(len - done, (std::uint64_t{1} << kPageBits) - (a & ((std::uint64_t{1} << kPageBits) - 1)));
    std::memcpy(byte_at(a), data + done, n);
    done += n;
  }
}

void MemoryTarget::backdoor_read(std::uint64_t addr, std::uint8_t* data, std::size_t len) {
  if (addr > capacity_ || len > capacity_ - addr) {
    throw std::out_of_range("memory: backdoor read of " + std::to_string(len) + " bytes at " + hex(addr) +
                            " is beyond the capacity " + hex(capacity_));
  }
  for (std::size_t done = 0; done < len;) {
    const std::uint64_t a = addr + done;
    const std::size_t n = std::min<std::size_t>(len - done, (std::uint64_t{1} << kPageBits) - (a & ((std::uint64_t{1} << kPageBits) - 1)));
    if (pages_[a >> kPageBits]) std::memcpy(data + done, byte_at(a), n);
    else std::memset(data + done, 0, n);
    done += n;
  }
}

std::uint64_t MemoryTarget::cycle_at(const sc_core::sc_time& t) const {
  // Rounded: the initiator annotates whole cycles of the same period. In units of the time
  // resolution, as integers: this runs once per beat.
  const std::uint64_t period = period_.value();
  return (t.value() + period / 2) / period;
}

BeatTiming MemoryTarget::serve(::tlm::tlm_generic_payload& p, std::uint64_t cycle) {
  const std::uint64_t addr = p.get_address();
  const std::uint32_t len = p.get_data_length();
  const bool write = p.is_write();
  const bool in_range = addr <= capacity_ && len <= capacity_ - addr;
  BeatTiming t = timing_->access(cycle, write, in_range ? addr : addr % capacity_);
  if (write) {
    if (in_range) {
      backdoor_write(addr, p.get_data_ptr(), len);
    } else if (!fault_) {
      fault_ = "memory: core write at " + hex(addr) + " (cycle " + std::to_string(cycle) +
               ") is beyond the HBM capacity " + hex(capacity_);
    }
  } else if (in_range) {
    backdoor_read(addr, p.get_data_ptr(), len);
  } else {
    std::memset(p.get_data_ptr(), 0, len);  // prefetch past END near the top of memory
  }
  p.set_response_status(write && !in_range ? ::tlm::TLM_ADDRESS_ERROR_RESPONSE : ::tlm::TLM_OK_RESPONSE);
  if (BeatExtension* e = p.get_extension<BeatExtension>()) e->timing = t;
  return t;
}

void MemoryTarget::b_transport(::tlm::tlm_generic_payload& p, sc_core::sc_time& delay) {
  const sc_core::sc_time now = sc_core::sc_time_stamp();
  const BeatTiming t = serve(p, cycle_at(now + delay));
  delay = sc_core::sc_time::from_value(period_.value() * t.done) - now;
}

::tlm::tlm_sync_enum MemoryTarget::nb_transport_fw(::tlm::tlm_generic_payload& p, ::tlm::tlm_phase& phase,
                                                   sc_core::sc_time& delay) {
  if (phase == ::tlm::END_RESP) return ::tlm::TLM_COMPLETED;
  if (phase != ::tlm::BEGIN_REQ) {
    SC_REPORT_ERROR("tpuemu/memory_target", "nb_transport_fw: only BEGIN_REQ and END_RESP are expected");
    return ::tlm::TLM_COMPLETED;
  }
  const sc_core::sc_time now = sc_core::sc_time_stamp();
  const BeatTiming t = serve(p, cycle_at(now + delay));
  // BEGIN_RESP at the response, relative to now
  responses_.notify(p, ::tlm::BEGIN_RESP, period_ * static_cast<double>(t.done) - now);
  phase = ::tlm::END_REQ;
  delay = period_ * static_cast<double>(t.accept) - now;
  return ::tlm::TLM_UPDATED;
}

void MemoryTarget::begin_response(::tlm::tlm_generic_payload& p, const ::tlm::tlm_phase& phase) {
  ::tlm::tlm_phase ph = phase;
  sc_core::sc_time zero = sc_core::SC_ZERO_TIME;
  socket->nb_transport_bw(p, ph, zero);  // END_RESP on the return path or later: nothing more to do
}

unsigned int MemoryTarget::transport_dbg(::tlm::tlm_generic_payload& p) {
  const std::uint64_t addr = p.get_address();
  const std::uint32_t len = p.get_data_length();
  if (addr > capacity_ || len > capacity_ - addr) {
    p.set_response_status(::tlm::TLM_ADDRESS_ERROR_RESPONSE);
    return 0;
  }
  if (p.is_write()) backdoor_write(addr, p.get_data_ptr(), len);
  else backdoor_read(addr, p.get_data_ptr(), len);
  p.set_response_status(::tlm::TLM_OK_RESPONSE);
  return len;
}

}  // namespace tpuemu::tlm
