// SPDX-License-Identifier: Apache-2.0
// The Verilated RTL core (rtl/tpu_top.sv) of one preset behind a cycle interface for the SystemC
// module RtlCore (rtl_core.h). The implementation is C++20 (it includes the generated contract and
// the Verilated model classes); this header is C++17 and free of SystemC, Verilator and the
// contract, because the SystemC side includes it (docs/systemc-ip.md, "Two language levels").
//
// The core's memory port is a BeatPort (core_model.h): each beat the core presents is one
// request(); the timing returned holds mem_req_ready_i low until `accept` and delivers the read
// data or write acknowledgement at `done`, in order, at most one of each per cycle.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tpuemu/tlm/core_model.h"

namespace tpuemu::tlm {

class RtlCoreModel {
 public:
  virtual ~RtlCoreModel() = default;
  // The Verilated core of `preset` (a name of configs/presets with a core in this build), reset.
  // Throws std::invalid_argument listing the built cores for any other name.
  static std::unique_ptr<RtlCoreModel> make(const std::string& preset, BeatPort& port);
  // The presets this build verilated (at least "small" and "default").
  static std::vector<std::string> presets();

  virtual std::uint32_t dim() const = 0;
  // rst_ni low for four edges, as the Verilator harness does: nothing may be in flight.
  virtual void reset() = 0;
  // Combinational CSR read (the bus driven, no clock edge).
  virtual std::uint32_t csr_peek(std::uint32_t addr) = 0;
  // Whether reading `addr` changes state on the next edge (SMEM_DATA advances SMEM_ADDR).
  virtual bool csr_read_advances(std::uint32_t addr) const = 0;
  // One clock edge with the CSR bus driven: a write, or a read with a side effect.
  virtual void csr_cycle(std::uint32_t addr, bool write, std::uint32_t value) = 0;
  // Up to `cycles` clock edges with an idle CSR bus; returns after the edge that leaves the core
  // not busy when stop_when_idle is set, or after the edge in which stop() was called. Returns the
  // edges run. Throws std::runtime_error ("RTL: file.sv:line: message") when the model fails an
  // assertion or stops.
  virtual std::uint64_t run(std::uint64_t cycles, bool stop_when_idle) = 0;
  // From the memory port's request(): end the current run() after this edge (a memory fault).
  virtual void stop() = 0;
  // Clock edges since construction, reset edges included.
  virtual std::uint64_t cycle() const = 0;
  virtual bool busy() const = 0;
};

}  // namespace tpuemu::tlm
