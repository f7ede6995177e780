// SPDX-License-Identifier: Apache-2.0
// The DMA engine (rtl/dma/dma_engine.sv): one descriptor at a time walked one beat per cycle;
// reads keep up to mem_outstanding beats in flight and land in local memory in order as they
// return; writes read local memory into a four-beat buffer and post beats to memory (buffered
// writes before reads on the port). Completion is tracked per descriptor in two in-order classes
// (reads from HBM, writes to HBM) that signal the descriptor's semaphore.
#include <cstring>

#include "core_impl.h"

namespace tpuemu::tlm {
namespace {

namespace in = spec::instr;
using spec::DmaPath;

bool is_read_path(std::uint32_t p) {
  return p == static_cast<std::uint32_t>(DmaPath::HbmToVmem) || p == static_cast<std::uint32_t>(DmaPath::HbmToSmem);
}

}  // namespace

void CoreModelImpl::comb_dma_port(Wires& w) {
  Wires::Dma& d = w.dma;
  // A read the memory holds back stays on the port until it is taken (docs/systemc.md): a write
  // that comes into the buffer meanwhile waits behind it, or the taken read would be counted as
  // that write.
  const bool read_held = held_ && !held_->fetch && !held_->write;
  d.wants_write = !dma_.wbuf.empty() && dma_.wack_pending < shape_.mem_outstanding && !read_held;
  d.wants_read = dma_.active && is_read_path(dma_.path) && !dma_.rtag.full();
  w.d_req = d.wants_write || d.wants_read;
  w.d_write = d.wants_write;
  w.d_addr = d.wants_write ? dma_.wbuf.head().addr : dma_.cur_hbm;
}

void CoreModelImpl::comb_dma_local(Wires& w) {
  Wires::Dma& d = w.dma;
  const std::uint32_t path = dma_.path;
  const bool read_q = is_read_path(path);
  const bool v2h = path == static_cast<std::uint32_t>(DmaPath::VmemToHbm);
  const bool wbuf_space = dma_.wbuf.count() + dma_.vread_pending < 4;
  d.wbuf_pop = d.wants_write && w.d_ready;
  d.issue_read = !d.wants_write && d.wants_read && w.d_ready;
  d.issue_write_direct = dma_.active && !read_q && !v2h && wbuf_space;
  const bool rdat_is_smem = dma_.rtag.head().smem;
  d.rdat_wants_vmem = !dma_.rdat.empty() && !rdat_is_smem;
  d.vread_wants = dma_.active && v2h && wbuf_space && !d.rdat_wants_vmem;
  w.v_req[3] = d.rdat_wants_vmem || d.vread_wants;
  w.v_we[3] = d.rdat_wants_vmem;
  w.v_addr[3] = (d.rdat_wants_vmem ? dma_.rtag.head().row : dma_.cur_local) & (shape_.vmem_rows - 1);
  w.v_wdata[3] = dma_.rdat.head().data();
  d.smem_we = !dma_.rdat.empty() && rdat_is_smem;
  if (d.issue_write_direct) {
    if (path == static_cast<std::uint32_t>(DmaPath::AccToHbm)) {
      // a quarter of an ACC row (DIM/4 int32 lanes) per beat
      const std::int32_t* row = acc_row(dma_.cur_local & (shape_.acc_rows - 1));
      std::memcpy(dma_direct_.data(), row + (dim_ / 4) * dma_.sub, dim_);
    } else {
      std::memcpy(dma_direct_.data(), smem_row(dma_.cur_local & (smem_rows() - 1)), dim_);
    }
  }
  w.dma_stall_mem = (d.wants_write && !w.d_ready) || (dma_.active && read_q && (dma_.rtag.full() || !w.d_ready || d.wants_write));
  if (d.wbuf_pop) w.dma_path_beat |= 1u << dma_.wbuf.head().path;
  if (d.issue_read) w.dma_path_beat |= 1u << path;
}

void CoreModelImpl::comb_dma_grants(Wires& w) {
  Wires::Dma& d = w.dma;
  d.issue_vread = d.vread_wants && w.v_gnt[3];
  d.rdrain = d.smem_we || (d.rdat_wants_vmem && w.v_gnt[3]);
  d.rsp_keep = w.d_rsp && dma_.rd_discard == 0;
  d.wack_keep = w.wack_valid && dma_.wack_discard == 0;
  const std::array<bool, 2> unit_done{d.rdrain, d.wack_keep};
  for (std::uint32_t c = 0; c < 2; ++c) {
    const DmaState::Class& head = dma_.cls[c].head();
    d.cls_pop[c] = unit_done[c] && !dma_.cls[c].empty() && dma_.done_units[c] + 1 == head.units;
    w.sig[1 + c] = d.cls_pop[c] && head.sig_en;
    w.sig_sem[1 + c] = head.sig_sem;
    w.done[0][1 + c] = d.cls_pop[c];
    w.done_idx[0][1 + c] = head.idx;
  }
}

void CoreModelImpl::edge_dma_smem(const Wires& w) {
  if (w.dma.smem_we) {
    std::memcpy(smem_row(dma_.rtag.head().row & (smem_rows() - 1)), dma_.rdat.head().data(), dim_);
  }
}

void CoreModelImpl::advance_dma_walker() {
  DmaState& s = dma_;
  s.cur_hbm += dim_;
  const bool last_sub = s.path != static_cast<std::uint32_t>(DmaPath::AccToHbm) || s.sub == 3;
  if (!last_sub) {
    ++s.sub;
    return;
  }
  s.sub = 0;
  if (s.row + 1 < s.len) {
    ++s.row;
    ++s.cur_local;
    return;
  }
  s.row = 0;
  if (s.chunk + 1 < s.count) {
    ++s.chunk;
    s.chunk_hbm += s.hstride;
    s.cur_hbm = s.chunk_hbm;
    s.chunk_local += s.lstride;
    s.cur_local = s.chunk_local;
  } else {
    s.active = false;
  }
}

void CoreModelImpl::edge_dma(const Wires& w, bool clear) {
  const Wires::Dma& d = w.dma;
  DmaState& s = dma_;
  // Write acknowledgements and read responses are counted across a soft reset too; those of
  // requests issued before it are discarded.
  const std::uint32_t wack_pending = s.wack_pending + d.wbuf_pop - w.wack_valid;
  if (clear) {
    s.wack_discard = wack_pending;
    s.rd_discard = s.rd_discard + static_cast<std::uint32_t>(s.rtag.count() - s.rdat.count()) + d.issue_read - w.d_rsp;
  } else {
    if (w.wack_valid && s.wack_discard != 0) --s.wack_discard;
    if (w.d_rsp && s.rd_discard != 0) --s.rd_discard;
  }
  s.wack_pending = wack_pending;
  if (clear) {
    s.active = false;
    s.vread_pending = false;
    s.rtag.clear();
    s.rdat.clear();
    s.wbuf.clear();
    for (auto& c : s.cls) c.clear();
    s.done_units.fill(0);
    return;
  }

  // FIFO pushes (into the tail slots) before the walker moves: they record this cycle's beat.
  if (d.issue_read) {
    s.rtag.tail() = {s.path == static_cast<std::uint32_t>(DmaPath::HbmToSmem), s.cur_local & 0xFFFFFu};
  }
  if (d.rsp_keep) std::memcpy(s.rdat.tail().data(), w.rsp_data, dim_);
  const bool vmem_rvalid = v_rvalid_[3];
  const bool wbuf_push = d.issue_write_direct || vmem_rvalid;
  if (wbuf_push) {
    DmaState::WriteBeat& b = s.wbuf.tail();
    if (vmem_rvalid) {
      b.addr = s.vread_addr;
      b.path = s.vread_path;
      std::memcpy(b.data.data(), v_rdata_[3].data(), dim_);
    } else {
      b.addr = s.cur_hbm;
      b.path = s.path;
      std::memcpy(b.data.data(), dma_direct_.data(), dim_);
    }
  }
  const Words& h = head(0).instr;
  const bool start = w.pop[0];
  const std::array<bool, 2> cls_push{start && !d.empty && d.is_read, start && !d.empty && !d.is_read};
  if (cls_push[0] || cls_push[1]) {
    const std::uint64_t units = std::uint64_t{in::dma::len.get(h)} * in::dma::count.get(h) *
                                (in::dma::path.get(h) == static_cast<std::uint32_t>(DmaPath::AccToHbm) ? 4 : 1);
    s.cls[cls_push[0] ? 0 : 1].tail() = {q_idx_[0], in::header::sig_en.get(h) != 0, in::header::sig_sem.get(h), units};
  }

  s.vread_pending = d.issue_vread;
  if (d.issue_vread) {
    s.vread_addr = s.cur_hbm;
    s.vread_path = s.path;
  }
  const bool advance = d.issue_read || d.issue_write_direct || d.issue_vread;
  if (start && !d.empty) {
    s.active = true;
    s.path = in::dma::path.get(h);
    s.chunk_hbm = s.cur_hbm = in::dma::hbm_addr.get(h);
    s.hstride = in::dma::hbm_stride.get(h);
    s.chunk_local = s.cur_local = in::dma::local_addr.get(h);
    s.lstride = in::dma::local_stride.get(h);
    s.len = in::dma::len.get(h);
    s.count = in::dma::count.get(h);
    s.row = s.chunk = s.sub = 0;
  } else if (advance) {
    advance_dma_walker();
  }

  s.rtag.update(d.issue_read, d.rdrain);
  s.rdat.update(d.rsp_keep, d.rdrain);
  s.wbuf.update(wbuf_push, d.wbuf_pop);
  for (std::uint32_t c = 0; c < 2; ++c) {
    s.cls[c].update(cls_push[c], d.cls_pop[c]);
    if (d.cls_pop[c]) {
      s.done_units[c] = 0;
    } else if (c == 0 ? d.rdrain : d.wack_keep) {
      ++s.done_units[c];
    }
  }
}

}  // namespace tpuemu::tlm
