// SPDX-License-Identifier: Apache-2.0
// The timing of the memory behind a core's port, as the TLM models see it: one call per beat
// (DIM bytes, the core's memory port width), in the order the core presents them.
//
// This header is C++17 and free of SystemC and of the generated contract, because it is included
// by both sides of the language split (docs/systemc.md, "Two language levels"): the SystemC
// modules (C++17: Debian's SystemC is built for C++17) and the core and memory timing models
// (C++20, they use the contract).
#pragma once

#include <cstdint>

namespace tpuemu::tlm {

// When a beat the core presented in core cycle `cycle` was accepted by the memory (>= cycle: the
// cycles in between are back-pressure, the port's valid && !ready) and when its response reaches
// the core: the read data, or the write acknowledgement (> accept). A model returns the read
// responses, and separately the write acknowledgements, in request order and at most one of
// each per core cycle, as the core's port expects (tpu_top.sv, docs/systemc.md).
struct BeatTiming {
  std::uint64_t accept = 0;
  std::uint64_t done = 0;
};

class BeatTimingModel {
 public:
  virtual ~BeatTimingModel() = default;
  // A beat presented in core cycle `cycle`; calls come in non-decreasing cycle order, and the
  // next call's cycle is after the previous accept (the port holds one request at a time).
  // `addr` is the beat's byte address (beat aligned, inside the memory's capacity).
  virtual BeatTiming access(std::uint64_t cycle, bool write, std::uint64_t addr) = 0;
  // The run ended at core cycle `cycle` (e.g. the HBM model checks its refresh deadline).
  virtual void finish(std::uint64_t /*cycle*/) {}
  // The first violation the model detected (a DRAM timing rule, a refresh deadline), or nullptr.
  virtual const char* fault() const { return nullptr; }
};

}  // namespace tpuemu::tlm
