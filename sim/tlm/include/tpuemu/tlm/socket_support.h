// SPDX-License-Identifier: Apache-2.0
// What the SystemC modules' sockets share (C++17): the CSR target's decoding of a transaction
// into one access of the core's CSR bus, an initiator's access of it, and hexadecimal addresses
// for messages.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <deque>
#include <limits>
#include <string>

#include <tlm>

namespace tpuemu::tlm {

// One access of the CSR bus, applied on the core's next clock edge.
struct CsrAccess {
  std::uint32_t addr = 0;
  bool write = false;
  std::uint32_t value = 0;
};

// The CSR socket's b_transport: an aligned 4-byte read or write (anything else is refused with
// the TLM error response that names why). A read returns peek(addr) at once and, when
// advances(addr) (SMEM_DATA), queues the edge that applies its side effect; a write is queued.
// Returns whether the transaction was an access.
template <typename Peek, typename Advances>
bool take_csr_access(::tlm::tlm_generic_payload& p, Peek&& peek, Advances&& advances, std::deque<CsrAccess>& pending) {
  if (p.get_data_length() != 4 || p.get_streaming_width() < 4 || (p.get_address() & 3u) != 0 ||
      p.get_address() > std::numeric_limits<std::uint32_t>::max()) {
    p.set_response_status(::tlm::TLM_BURST_ERROR_RESPONSE);  // the CSR bus moves aligned 32-bit words
    return false;
  }
  if (p.get_byte_enable_ptr() != nullptr) {
    p.set_response_status(::tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE);
    return false;
  }
  const auto addr = static_cast<std::uint32_t>(p.get_address());
  std::uint32_t value = 0;
  if (p.is_write()) {
    std::memcpy(&value, p.get_data_ptr(), 4);
    pending.push_back({addr, true, value});
  } else {
    value = peek(addr);
    std::memcpy(p.get_data_ptr(), &value, 4);
    if (advances(addr)) pending.push_back({addr, false, 0});
  }
  p.set_response_status(::tlm::TLM_OK_RESPONSE);
  return true;
}

// The initiator's side: one aligned 4-byte access through `socket` (bound to a core's CSR
// target), `value` written, or read into it. Returns the response status; the delay the target
// annotates is added to `delay`.
template <typename Socket>
::tlm::tlm_response_status csr_transport(Socket& socket, std::uint32_t addr, bool write, std::uint32_t& value,
                                         sc_core::sc_time& delay) {
  ::tlm::tlm_generic_payload p;
  p.set_command(write ? ::tlm::TLM_WRITE_COMMAND : ::tlm::TLM_READ_COMMAND);
  p.set_address(addr);
  p.set_data_ptr(reinterpret_cast<unsigned char*>(&value));
  p.set_data_length(4);
  p.set_streaming_width(4);
  socket->b_transport(p, delay);
  return p.get_response_status();
}

inline std::string hex(std::uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

}  // namespace tpuemu::tlm
