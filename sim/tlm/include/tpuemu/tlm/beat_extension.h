// SPDX-License-Identifier: Apache-2.0
// The timing of a memory beat as a TLM-2.0 extension of the generic payload (SystemC, C++17).
//
// A beat is one transaction: address, TLM_READ_COMMAND or TLM_WRITE_COMMAND, data_length = the
// core's DIM. The target fills the extension with the core cycles at which the beat was accepted
// and its response delivered (BeatTiming); an initiator that does not attach one still gets the
// standard timing: b_transport returns with the delay to the response, and on the AT path END_REQ
// comes at acceptance and BEGIN_RESP at the response.
#pragma once

#include <tlm>

#include "tpuemu/tlm/beat_timing.h"

namespace tpuemu::tlm {

struct BeatExtension final : ::tlm::tlm_extension<BeatExtension> {
  BeatTiming timing;
  ::tlm::tlm_extension_base* clone() const override { return new BeatExtension(*this); }  // TLM's ownership rule
  void copy_from(const ::tlm::tlm_extension_base& other) override {
    timing = static_cast<const BeatExtension&>(other).timing;
  }
};

}  // namespace tpuemu::tlm
