// SPDX-License-Identifier: Apache-2.0
// The streaming fast path of the core model: the cycles in which the MXU streams a long MATMUL,
// perhaps with a weight load into the other bank and the DMA reading a descriptor into VMEM,
// while the vector unit waits on a semaphore or has nothing queued and fetch is blocked, are
// stepped by a loop that does only what those cycles do (VMEM reads on the streamer's port, which
// wins every bank, and on the weight loader's; a row into the array, a weight row pushed, a row
// out into ACC; the DMA's read issued, its response taken, its oldest data written to VMEM on
// port 3 where its bank is free). It ends before anything else could happen: the stream's last
// row issues, an instruction completes (a row tagged last leaves, the weight load's last row is
// pushed, the DMA's last row of a descriptor is written), a write's acknowledgement falls due
// while reading, fetch's response arrives while fetch could move on (a stalled or stopped fetch
// takes it in the loop), the walker issues its last beat, the memory holds a request back, the
// grant runs out. Every cycle it steps is exactly what
// tick() would have done (test_tlm_fast_paths compares the whole report with the model stepped
// cycle by cycle, test_tlm_crosscheck every counter and the timeline with the RTL's); while a
// trace is recorded it is off, so the trace port is sampled every cycle.
#include <cstring>

#include "core_impl.h"

namespace tpuemu::tlm {

CoreModelImpl::StreamDma CoreModelImpl::stream_dma_mode() const {
  using spec::DmaPath;
  const DmaState& d = dma_;
  if (d.vread_pending) return StreamDma::Other;
  // Reading into VMEM: a descriptor's walker issuing reads, their data drained in order; the
  // acknowledgements of earlier writes may still come (the loop ends before the first is due).
  if (d.wbuf.empty() && d.rd_discard == 0 && (!d.active || d.path == static_cast<std::uint32_t>(DmaPath::HbmToVmem))) {
    return StreamDma::Reads;
  }
  // Writing from ACC: the walker filling the write buffer a quarter row a beat, the buffer posting
  // beats to memory, their acknowledgements counted; no read of the DMA's outstanding.
  if (d.rtag.empty() && d.rdat.empty() && d.wack_discard == 0 &&
      (!d.active || d.path == static_cast<std::uint32_t>(DmaPath::AccToHbm))) {
    return StreamDma::Writes;
  }
  return StreamDma::Other;
}

bool CoreModelImpl::may_stream() const {
  // The MXU streams without waiting, with at least two rows to go; only a weight load may be in
  // flight besides.
  if (!run_.busy || held_ || run_.deadlock_cnt != 0 || recording_ || !fast_paths_) return false;
  const MxuState& m = mxu_;
  if (!m.st_active || m.st_wait_wl || m.st_left < 2) return false;
  if (vec_.state != VecState::Idle || stream_dma_mode() == StreamDma::Other) return false;
  return (!v_rvalid_[1] || m.wl_active) && !v_rvalid_[2] && !v_rvalid_[3];
}

bool CoreModelImpl::fetch_and_queues_frozen(Wires& w) {
  // No head issues, no head faults, fetch neither requests nor dispatches: those wires stay as
  // they are while only the streamer moves (no semaphore changes, no queue pops).
  comb_fetch(w);
  if (w.f_req || w.f_dispatch || w.f_stop || w.f_illegal) return false;
  comb_heads(w);
  comb_semaphores(w);
  comb_issue(w);
  for (std::uint32_t q = 0; q < 3; ++q) {
    if (w.pop[q] || w.err[q]) return false;
  }
  return true;
}

std::uint64_t CoreModelImpl::stream(std::uint64_t max_cycles) {
  if (!may_stream()) return 0;
  Wires& w = cycle_wires_;
  clear_wires(w);
  if (!fetch_and_queues_frozen(w)) return 0;
  MxuState& m = mxu_;
  const std::uint32_t latency = spec::kMxuLatencyPerDim * dim_;
  const bool writing = stream_dma_mode() == StreamDma::Writes;
  // Reading, no write is issued: the first acknowledgement due ends the loop.
  const std::uint64_t ack_due = writing || acks_.due.empty() ? ~std::uint64_t{0} : acks_.due.front();
  const bool walking = dma_.active;
  // The increments of the frozen engines, every cycle alike (edge_counters' rules).
  namespace c = spec::counter;
  const std::uint64_t dma_wait = w.stall_sem[0], mxu_wait = w.stall_sem[1], vec_wait = w.stall_sem[2];
  const std::uint64_t fetch_stall = w.f_stall;
  std::uint64_t n = 0, rows_in = 0, wl_busy = 0, conflicts = 0, read_beats = 0, issued_beats = 0, dma_stalls = 0;
  std::uint64_t write_beats = 0;
  const std::uint32_t banks = shape_.vmem_banks, rows_mask = shape_.vmem_rows - 1;
  for (; n < max_cycles; ++n) {
    const std::uint64_t t = cycle_;
    if (t >= ack_due || m.st_left < 2) break;
    const bool out_valid = !m.flight_empty() && m.flight_front_out() == t;
    if (out_valid && m.tags.head().last) break;  // an instruction completes: its signal, its trace
    // A weight load into the other bank (a load into the streamed bank waits for the stream's
    // last row): its reads on VMEM port 1, which the streamer's port beats on a shared bank, and
    // its pushes, as comb_mxu and edge_mxu step them. Its last push completes it: the loop ends.
    const bool wl_push = m.wl_active && v_rvalid_[1];
    if (wl_push && m.wl_pushed == dim_ - 1) break;
    const bool wl_req = m.wl_active && (m.wl_loading || weight_load_can_start()) && m.wl_issued < dim_;
    const std::uint32_t wl_row = (m.wl_base + dim_ - 1 - m.wl_issued) & rows_mask;
    const bool wl_gnt = wl_req && wl_row % banks != (m.st_vmem & rows_mask) % banks;
    // The DMA reading into VMEM (comb_dma_port, comb_memory_port, comb_dma_local, comb_vmem and
    // comb_dma_grants for that path): a response taken into the read FIFO, the FIFO's head
    // written to VMEM on port 3 where no other port holds its bank, the walker's next read.
    const bool rsp = !reads_.due.empty() && reads_.due.front() <= t;
    // Fetch's response goes into its buffer (edge_fetch) when fetch stays as it is: stalled on a
    // full queue with its head instruction ready, or stopped.
    const bool rsp_fetch = rsp && route_.front();
    if (rsp_fetch && !(w.f_stall || !fetch_.running)) break;
    const bool rsp_dma = rsp && !rsp_fetch;
    // The DMA writing from ACC (the same functions for that path): a beat posted from the write
    // buffer, an acknowledgement counted, the walker's next quarter row into the buffer.
    const bool ack = writing && !acks_.due.empty() && acks_.due.front() <= t;
    if (ack && !dma_.cls[1].empty() && dma_.done_units[1] + 1 == dma_.cls[1].head().units) break;  // completes it
    const bool direct = writing && dma_.active && dma_.wbuf.count() < 4;
    const bool wants_write = writing && !dma_.wbuf.empty() && dma_.wack_pending < shape_.mem_outstanding;
    const bool rdat_any = !dma_.rdat.empty();
    if (rdat_any && dma_.rtag.head().smem) break;
    const std::uint32_t drain_row = dma_.rtag.head().row & rows_mask;
    const std::uint32_t drain_bank = drain_row % banks;
    const bool drain = rdat_any && drain_bank != (m.st_vmem & rows_mask) % banks && !(wl_req && drain_bank == wl_row % banks);
    if (drain && !dma_.cls[0].empty() && dma_.done_units[0] + 1 == dma_.cls[0].head().units) break;  // completes it
    // ---- no break below this line: the memory sees the request
    bool issued = false;
    if (!writing && dma_.active && !dma_.rtag.full() && route_.size() < route_depth_) {
      BeatRequest beat{false, dma_.cur_hbm, read_ring_.data() + std::size_t{reads_issued_ & (route_depth_ - 1)} * dim_, dim_};
      const BeatTiming bt = port_.request(t, beat);
      const std::uint64_t rsp_due = std::max(bt.done, std::max(reads_.last + 1, std::max(bt.accept, t) + 1));
      reads_.due.push_back(rsp_due);
      reads_.last = rsp_due;
      ++reads_issued_;
      issued = bt.accept <= t;
      if (issued) {
        route_.push_back(false);
      } else {
        held_ = HeldRequest{false, false, dma_.cur_hbm, bt.accept};
      }
    }
    bool written = false;
    if (wants_write) {
      DmaState::WriteBeat& b = dma_.wbuf.head();
      BeatRequest beat{true, b.addr, b.data.data(), dim_};
      const BeatTiming bt = port_.request(t, beat);
      const std::uint64_t ack_at = std::max(bt.done, std::max(acks_.last + 1, std::max(bt.accept, t) + 1));
      acks_.due.push_back(ack_at);
      acks_.last = ack_at;
      written = bt.accept <= t;
      if (written) {
        counters_[bytes_counter_of(b.path)] += dim_;
      } else {
        held_ = HeldRequest{false, true, b.addr, bt.accept};
      }
    }
    if (direct) {  // ACC is read before this cycle's result row is written into it
      DmaState::WriteBeat& b = dma_.wbuf.tail();
      b.addr = dma_.cur_hbm;
      b.path = dma_.path;
      std::memcpy(b.data.data(), acc_row(dma_.cur_local & (shape_.acc_rows - 1)) + (dim_ / 4) * dma_.sub, dim_);
    }
    write_beats += written;
    dma_stalls += (dma_.active && !writing && !issued) || (wants_write && !written);
    issued_beats += issued;
    read_beats += rsp;
    wl_busy += m.wl_loading;
    conflicts += (wl_req && !wl_gnt) + (rdat_any && !drain);
    const bool vd_rvalid = v_rvalid_[0];
    // ---- edge: ACC takes the leaving row, VMEM answers the streamer's read
    if (out_valid) {
      write_result_row(m.tags.head(), m.flight_row(m.flight_head));
      m.flight_head = (m.flight_head + 1) & (m.flight_out.size() - 1);
      --m.flight_count;
    }
    std::memcpy(v_rdata_next_[0].data(), vmem_row(m.st_vmem & rows_mask), dim_);
    if (wl_gnt) std::memcpy(v_rdata_next_[1].data(), vmem_row(wl_row), dim_);
    // ---- edge: VMEM takes the DMA's row after the reads sampled theirs; the read FIFOs move
    if (drain) std::memcpy(vmem_row(drain_row), dma_.rdat.head().data(), dim_);
    if (issued) dma_.rtag.tail() = {false, dma_.cur_local & 0xFFFFFu};
    const std::uint8_t* rsp_data = read_ring_.data() + std::size_t{reads_delivered_ & (route_depth_ - 1)} * dim_;
    if (rsp_dma) std::memcpy(dma_.rdat.tail().data(), rsp_data, dim_);
    if (rsp_fetch) {
      w.f_rsp = true;
      w.rsp_data = rsp_data;
      edge_fetch(w, false, false);
      w.f_rsp = false;
    }
    if (issued) advance_dma_walker();
    dma_.rtag.update(issued, drain);
    dma_.rdat.update(rsp_dma, drain);
    if (drain) ++dma_.done_units[0];
    if (writing) {
      dma_.wack_pending = dma_.wack_pending + written - ack;
      if (direct) advance_dma_walker();
      dma_.wbuf.update(direct, written);
      if (ack) {
        ++dma_.done_units[1];
        acks_.due.pop_front();
      }
    }
    if (rsp) {
      reads_.due.pop_front();
      route_.pop_front();
      ++reads_delivered_;
    }
    // ---- edge: the array takes last cycle's row (the weights of its bank tag)
    const bool old_pipe_bank = m.pipe_bank;
    if (vd_rvalid) {
      if (m.pairs_stale[old_pipe_bank]) {
        build_weight_pairs(old_pipe_bank);
      }
      const std::size_t slot = (m.flight_head + m.flight_count) & (m.flight_out.size() - 1);
      m.flight_out[slot] = t + latency;
      row_product(v_rdata_[0].data(), old_pipe_bank, m.flight_row(slot));
      ++m.flight_count;
      m.tags.tail() = m.pipe_tag;
      ++rows_in;
    }
    m.tags.update(vd_rvalid, out_valid);
    if (wl_push) {  // shifted in from the top (edge_mxu)
      std::uint32_t& top = m.weight_top[m.wl_bank];
      top = (top + dim_ - 1) & (dim_ - 1);
      std::memcpy(m.weights[m.wl_bank].data() + std::size_t{top} * dim_, v_rdata_[1].data(), dim_);
      m.pairs_stale[m.wl_bank] = true;
      ++m.wl_pushed;
    }
    if (wl_gnt) {
      ++m.wl_issued;
      m.wl_loading = true;
    }
    // ---- edge: the streamer issues its next row
    m.pipe_bank = m.st_bank;
    m.pipe_tag = {m.st_idx, m.st_acc, m.st_accum, false, m.st_sig_en, m.st_sig_sem};
    m.pipe_valid = true;
    m.st_vmem = (m.st_vmem + 1) & (shape_.vmem_rows - 1);
    m.st_acc = (m.st_acc + 1) & (shape_.acc_rows - 1);
    --m.st_left;
    for (std::uint32_t b = 0; b < 2; ++b) {
      if (vd_rvalid && old_pipe_bank == (b != 0)) {
        m.bank_busy[b] = latency + 1;
      } else if (m.bank_busy[b] != 0) {
        --m.bank_busy[b];
      }
    }
    std::swap(v_rdata_[0], v_rdata_next_[0]);
    v_rvalid_[0] = true;
    if (wl_gnt) std::swap(v_rdata_[1], v_rdata_next_[1]);
    v_rvalid_[1] = wl_gnt;
    ++cycle_;
    // The memory held the request back, or the walker issued its last read (the DMA's head may
    // start next cycle), or the memory ended the run: tick() takes over.
    if (held_ || (walking && !dma_.active) || stop_) {
      ++n;
      break;
    }
  }
  if (n == 0) return 0;
  counters_[c::cycles] += n;
  counters_[c::mxu_busy] += rows_in;
  counters_[c::dma_stall_semaphore] += n * dma_wait;
  counters_[c::mxu_stall_semaphore] += n * mxu_wait;
  counters_[c::vector_stall_semaphore] += n * vec_wait;
  counters_[c::fetch_stall] += n * fetch_stall;
  counters_[c::weight_load_busy] += wl_busy;
  counters_[c::mem_read_beats] += read_beats;
  counters_[c::bytes_hbm_to_vmem] += issued_beats * dim_;
  counters_[c::dma_stall_memory] += dma_stalls;
  counters_[c::mem_write_beats] += write_beats;
  counters_[c::vmem_bank_conflicts] += conflicts;
  return n;
}

}  // namespace tpuemu::tlm
