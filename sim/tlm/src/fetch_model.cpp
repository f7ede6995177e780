// SPDX-License-Identifier: Apache-2.0
// Instruction fetch (rtl/ctrl/fetch_unit.sv): up to eight instructions requested ahead through
// the shared memory port, dispatched in order into the DMA, MXU and vector queues; a full queue
// stalls dispatch, END stops fetching and drops what was prefetched. Below DIM 32 an instruction
// is several beats; from DIM 32 each instruction is requested as the aligned beat holding it.
#include <cstring>

#include "core_impl.h"

namespace tpuemu::tlm {
namespace {

struct FetchGeometry {
  std::uint32_t beats_per_instr, slot_bytes, depth;
};
FetchGeometry geometry(std::uint32_t dim) {
  const std::uint32_t beats = dim >= 32 ? 1 : 32 / dim;
  return {beats, dim >= 32 ? 32u : dim, 8 * beats};
}

// The queue an opcode dispatches to (0 DMA, 1 MXU, 2 vector), or nothing for END and unknown
// opcodes, from the contract's opcode table.
std::optional<std::uint32_t> queue_of(std::uint8_t opcode, bool& is_end) {
  is_end = opcode == static_cast<std::uint8_t>(spec::Opcode::End);
  if (is_end) return std::nullopt;
  for (const spec::OpcodeInfo& o : spec::kOpcodes) {
    if (static_cast<std::uint8_t>(o.value) == opcode && o.queue != spec::Queue::Control) {
      return static_cast<std::uint32_t>(o.queue) - static_cast<std::uint32_t>(spec::Queue::Dma);
    }
  }
  return std::nullopt;
}

}  // namespace

std::uint64_t CoreModelImpl::fetch_req_addr() const {
  const std::uint32_t instr_addr = prog_base_ + (fetch_.req_pc << 5);
  if (dim_ >= 32) return instr_addr & ~(dim_ - 1);
  return static_cast<std::uint32_t>(instr_addr + fetch_.req_beat * dim_);
}

void CoreModelImpl::comb_fetch(Wires& w) {
  const FetchGeometry g = geometry(dim_);
  const bool halt = !run_.busy;
  w.f_req = fetch_.running && !halt && fetch_.inflight < g.depth;
  const bool head_ready = fetch_.running && !halt && fetch_.buffered >= g.beats_per_instr;
  if (!head_ready) return;
  bool is_end = false;
  const std::uint8_t opcode = fetch_.buf[std::size_t{fetch_.rd} * g.slot_bytes];
  const std::optional<std::uint32_t> q = queue_of(opcode, is_end);
  if (is_end) {
    w.f_stop = true;
    return;
  }
  if (!q) {
    w.f_illegal = true;
    return;
  }
  w.f_queue = *q;
  const bool full = queues_[*q].full();
  w.f_dispatch = !full;
  w.f_stall = full;
}

void CoreModelImpl::edge_fetch(const Wires& w, bool start, bool clear) {
  const FetchGeometry g = geometry(dim_);
  FetchState& f = fetch_;
  const bool req_fire = w.f_ready;
  const bool rsp = w.f_rsp;
  const bool rsp_keep = rsp && f.running && f.discard == 0;
  // The memory answers every accepted request, even across a soft reset or a new start: count
  // them all, and drop the responses that belong to an earlier program.
  const std::uint32_t outstanding = f.outstanding + req_fire - rsp;
  if (clear || start) {
    f.discard = outstanding;
  } else if (rsp && f.discard != 0) {
    --f.discard;
  }
  f.outstanding = outstanding;
  if (rsp_keep) {
    std::uint8_t* slot = f.buf.data() + std::size_t{f.wr} * g.slot_bytes;
    if (dim_ >= 32) {
      const std::uint32_t rsp_addr = prog_base_ + (f.rsp_pc << 5);
      std::memcpy(slot, w.rsp_data + rsp_addr % dim_, 32);
    } else {
      std::memcpy(slot, w.rsp_data, dim_);
    }
  }
  if (clear || start) {
    f.running = start && !clear;
    f.rd = f.wr = f.buffered = f.inflight = 0;
    f.pc = f.req_pc = f.rsp_pc = f.req_beat = f.rsp_beat = 0;
    return;
  }
  if (w.f_stop) {
    f.running = false;
    f.buffered = 0;
    f.inflight = 0;
    return;
  }
  if (!f.running) return;
  if (req_fire) {
    if (f.req_beat == g.beats_per_instr - 1) {
      f.req_beat = 0;
      ++f.req_pc;
    } else {
      ++f.req_beat;
    }
  }
  if (rsp_keep) {
    f.wr = (f.wr + 1) % g.depth;
    if (f.rsp_beat == g.beats_per_instr - 1) {
      f.rsp_beat = 0;
      ++f.rsp_pc;
    } else {
      ++f.rsp_beat;
    }
  }
  if (w.f_dispatch) {
    f.rd = (f.rd + g.beats_per_instr) % g.depth;
    ++f.pc;
  }
  f.buffered = f.buffered + rsp_keep - (w.f_dispatch ? g.beats_per_instr : 0);
  f.inflight = f.inflight + req_fire - (w.f_dispatch ? g.beats_per_instr : 0);
}

}  // namespace tpuemu::tlm
