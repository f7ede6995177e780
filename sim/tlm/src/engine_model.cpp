// SPDX-License-Identifier: Apache-2.0
// The engines' fast path of the core model: the cycles in which only the DMA engine and the MXU
// move - a descriptor streams beats to or from memory while the MXU loads weights and streams
// rows, which is most of a tiled matmul - are stepped by a loop that skips what cannot change in
// them. Fetch neither requests, is answered nor dispatches, no queue head issues or faults, the
// vector unit is idle, and at least one engine is busy (so run control only counts). Then the
// wires of fetch, the queue heads and the semaphore bank are the same every cycle until the
// engines' state they read changes (an engine goes idle, a completion class fills or empties, a
// semaphore is signalled): the loop computes them once and again only then, and steps the rest of
// the cycle with the same functions tick() calls, in the same order. So every cycle is exactly
// tick()'s (test_tlm_crosscheck holds every counter to the RTL's on the simple memory, and
// TlmFastPaths every counter and cycle to the model stepped cycle by cycle).
#include <algorithm>

#include "core_impl.h"

namespace tpuemu::tlm {

namespace {

// What comb_heads and comb_issue read of the engines (besides the queue heads and the
// semaphores, which only an issue or a signal changes).
std::uint32_t engine_key(bool dma_busy, const DmaState& d, const MxuState& m) {
  return std::uint32_t{dma_busy} | std::uint32_t{d.active} << 1 | std::uint32_t{d.cls[0].full()} << 2 |
         std::uint32_t{d.cls[1].full()} << 3 | std::uint32_t{m.wl_active} << 4 | std::uint32_t{m.st_active} << 5 |
         std::uint32_t{m.pipe_valid} << 6 | std::uint32_t{m.tags.empty()} << 7;
}

}  // namespace

bool CoreModelImpl::may_step_engines() const {
  return run_.busy && !held_ && run_.deadlock_cnt == 0 && !recording_ && !sem_overflow_ && fast_paths_ &&
         vec_.state == VecState::Idle && !v_rvalid_[2];
}

bool CoreModelImpl::engines_alone(Wires& w) {
  return fetch_and_queues_frozen(w) && (w.eng_busy[0] || w.eng_busy[1]);
}

std::uint64_t CoreModelImpl::step_engines(std::uint64_t max_cycles) {
  if (!may_step_engines()) return 0;
  Wires& frozen = frozen_wires_;
  Wires& w = cycle_wires_;
  std::uint32_t key = 0;
  bool stale = true;
  std::uint64_t n = 0;
  while (n < max_cycles) {
    if (n != 0 && may_stream()) break;  // the streaming loop is cheaper still
    const std::uint32_t now = engine_key(dma_busy(), dma_, mxu_);
    if (stale || now != key) {
      clear_wires(frozen);
      if (!engines_alone(frozen)) break;
      key = now;
      stale = false;
    }
    copy_wires(w, frozen);
    comb_memory_responses(w);
    if (w.f_rsp) break;  // fetch's own response: its edge moves
    comb_dma_port(w);
    comb_memory_port(w);
    comb_dma_local(w);
    comb_mxu(w);
    comb_vmem(w);
    comb_dma_grants(w);
    comb_mxu_grants(w);
    const bool repeats = quiet(w);
    edge_counters(w, false);
    edge_memories(w);
    edge_semaphores(w, Csr{}, false);
    // A signal from an engine's completion moves the semaphores the heads ask for.
    for (bool s : w.sig) stale = stale || s;
    edge_dma(w, false);
    edge_mxu(w, false);
    swap_vmem_read_data();
    end_cycle(w);
    ++n;
    // A signal may overflow (an error in the next cycle's run control); the memory may end the
    // run.
    if (sem_overflow_ || stop_) break;
    if (repeats && n < max_cycles) {
      // As in run(): up to the next timed event, a quiet cycle repeats.
      const std::uint64_t q = std::min(next_event() - cycle_, max_cycles - n);
      repeat_quiet_cycles(q);
      n += q;
    }
  }
  return n;
}

}  // namespace tpuemu::tlm
