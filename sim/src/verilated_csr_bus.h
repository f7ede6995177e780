// SPDX-License-Identifier: Apache-2.0
// How a harness drives a Verilated tpu_top's reset and CSR bus - shared by the rtl backend's
// CoreSim (core_sim_impl.h) and the SystemC IP block (sim/tlm/rtl). `edge` runs one clock cycle
// with the harness's memory side; the reset's edges are the caller's too (during reset nothing
// may reach the memory).
#pragma once

#include <cstdint>

namespace tpuemu::sim {

// rst_ni low for four edges of `reset_edge`, then high for one `edge`; the bus and the memory
// inputs idle.
template <typename Top, typename ResetEdge, typename Edge>
void reset_core(Top& top, ResetEdge&& reset_edge, Edge&& edge) {
  top.csr_valid_i = 0;
  top.mem_req_ready_i = 0;
  top.mem_rsp_valid_i = 0;
  top.mem_wack_valid_i = 0;
  top.clk_i = 0;
  top.rst_ni = 1;
  top.eval();
  top.rst_ni = 0;
  top.eval();
  for (int i = 0; i < 4; ++i) reset_edge();
  top.rst_ni = 1;
  top.eval();
  edge();
}

// A combinational CSR read: no clock edge.
template <typename Top>
std::uint32_t peek_csr(Top& top, std::uint32_t addr) {
  top.csr_valid_i = 1;
  top.csr_write_i = 0;
  top.csr_addr_i = addr;
  top.eval();
  const std::uint32_t value = top.csr_rdata_o;
  top.csr_valid_i = 0;
  top.eval();
  return value;
}

// One clock edge with the CSR bus driven (a write, or a read whose side effect the edge applies).
template <typename Top, typename Edge>
void csr_edge(Top& top, std::uint32_t addr, bool write, std::uint32_t value, Edge&& edge) {
  top.csr_valid_i = 1;
  top.csr_write_i = write;
  top.csr_addr_i = addr;
  top.csr_wdata_i = value;
  edge();
  top.csr_valid_i = 0;
  top.csr_write_i = 0;
  top.eval();
}

}  // namespace tpuemu::sim
