// SPDX-License-Identifier: Apache-2.0
// The queue heads: each engine's decode and its issue_gate (rtl/ctrl/issue_gate.sv). A head the
// engine can take asks the semaphore bank when it waits and issues once granted; a head with an
// operand out of range raises the engine's error instead. The DMA asks before its range is known
// to be good (CheckBeforeWait = 0), the MXU and the vector unit after.
#include "core_impl.h"

namespace tpuemu::tlm {
namespace {

namespace in = spec::instr;

bool rows_past(std::uint64_t first, std::uint64_t count, std::uint64_t size) { return first + count > size; }

}  // namespace

bool CoreModelImpl::dma_busy() const {
  return dma_.active || !dma_.cls[0].empty() || !dma_.cls[1].empty() || !dma_.wbuf.empty() || dma_.vread_pending ||
         !dma_.rtag.empty() || dma_.wack_pending != 0;
}

HeadInfo CoreModelImpl::decode_head(std::uint32_t queue, const Words& h) const {
  HeadInfo i;
  i.wait_en = in::header::wait_en.get(h) != 0;
  i.wait_sem = in::header::wait_sem.get(h);
  i.wait_cnt = in::header::wait_cnt.get(h);
  i.sig_en = in::header::sig_en.get(h) != 0;
  i.sig_sem = in::header::sig_sem.get(h);
  const auto op = static_cast<spec::Opcode>(in::header::opcode.get(h));
  if (queue == 0) {  // DMA (dma_engine.sv)
    const std::uint64_t len = in::dma::len.get(h), count = in::dma::count.get(h);
    const auto path = static_cast<spec::DmaPath>(in::dma::path.get(h));
    i.nop = op == spec::Opcode::DmaNop;
    i.dma_read = path == spec::DmaPath::HbmToVmem || path == spec::DmaPath::HbmToSmem;
    i.empty = i.nop || len == 0 || count == 0;
    std::uint64_t rows = 0;
    switch (path) {
      case spec::DmaPath::HbmToVmem:
      case spec::DmaPath::VmemToHbm: rows = shape_.vmem_rows; break;
      case spec::DmaPath::HbmToSmem:
      case spec::DmaPath::SmemToHbm: rows = smem_rows(); break;
      case spec::DmaPath::AccToHbm: rows = shape_.acc_rows; break;
      default: rows = 0; break;
    }
    if (!i.empty) {
      const std::uint64_t last_row = std::uint64_t{in::dma::local_addr.get(h)} +
                                     (count - 1) * in::dma::local_stride.get(h) + len - 1;
      i.bad = last_row >= rows;
    }
  } else if (queue == 1) {  // MXU (mxu_ctrl.sv)
    i.loadw = op == spec::Opcode::LoadW;
    i.matmul = op == spec::Opcode::Matmul;
    i.nop = !i.loadw && !i.matmul;
    if (i.loadw) i.bad = rows_past(in::loadw::vmem_row.get(h), dim_, shape_.vmem_rows);
    if (i.matmul) {
      const std::uint64_t rows = in::matmul::rows.get(h);
      i.bad = rows_past(in::matmul::vmem_row.get(h), rows, shape_.vmem_rows) ||
              rows_past(in::matmul::acc_row.get(h), rows, shape_.acc_rows);
      i.empty = rows == 0;
    }
  } else {  // vector unit (vec_unit.sv)
    i.quant = op == spec::Opcode::VQuant;
    i.add = op == spec::Opcode::VAdd;
    if (i.quant) {
      const std::uint64_t rows = in::vquant::rows.get(h);
      i.bad = rows_past(in::vquant::acc_row.get(h), rows, shape_.acc_rows) ||
              rows_past(in::vquant::vmem_row.get(h), rows, shape_.vmem_rows) ||
              (in::vquant::smem_params.get(h) && rows_past(in::vquant::smem_word.get(h), 2, shape_.smem_words)) ||
              (in::vquant::bias.get(h) && rows_past(in::vquant::bias_row.get(h), 4, shape_.vmem_rows));
      i.empty = rows == 0;
    } else if (i.add) {
      const std::uint64_t rows = in::vadd::rows.get(h);
      i.bad = rows_past(in::vadd::a_row.get(h), rows, shape_.vmem_rows) ||
              rows_past(in::vadd::b_row.get(h), rows, shape_.vmem_rows) ||
              rows_past(in::vadd::out_row.get(h), rows, shape_.vmem_rows);
      i.empty = rows == 0;
    } else {
      i.empty = true;
    }
  }
  return i;
}

void CoreModelImpl::comb_heads(Wires& w) {
  for (std::uint32_t q = 0; q < 3; ++q) {
    const HeadInfo& h = head(q).info;
    w.valid[q] = !queues_[q].empty();
    w.wait_sem[q] = h.wait_sem;
    w.wait_cnt[q] = h.wait_cnt;
  }
  {  // DMA
    const HeadInfo& h = head(0).info;
    Wires::Dma& d = w.dma;
    d.nop = h.nop;
    d.is_read = h.dma_read;
    d.empty = h.empty;
    d.bad = !h.empty && h.bad;
    const bool busy = dma_busy();
    d.can_start = w.valid[0] && !dma_.active && (d.nop ? !busy : (d.empty || !dma_.cls[d.is_read ? 0 : 1].full()));
    d.wait_en = h.wait_en;
    w.sem_req[0] = d.can_start && d.wait_en;
    w.eng_busy[0] = busy;
  }
  {  // MXU
    const HeadInfo& h = head(1).info;
    Wires::Mxu& m = w.mxu;
    m.loadw = h.loadw;
    m.matmul = h.matmul;
    m.nop = h.nop;
    m.bad = h.bad;
    m.empty = h.empty;
    m.busy = mxu_.wl_active || mxu_.st_active || mxu_.pipe_valid || !mxu_.tags.empty();
    m.unit_free = m.loadw ? !mxu_.wl_active : (m.matmul ? !mxu_.st_active : !m.busy);
    m.wait_en = h.wait_en;
    w.sem_req[1] = w.valid[1] && m.unit_free && !m.bad && m.wait_en;
    w.eng_busy[1] = m.busy;
  }
  {  // vector unit
    const HeadInfo& h = head(2).info;
    Wires::Vec& v = w.vec;
    v.quant = h.quant;
    v.add = h.add;
    v.bad = h.bad;
    v.empty = h.empty;
    v.wait_en = h.wait_en;
    const bool active = vec_.state != VecState::Idle;
    w.sem_req[2] = w.valid[2] && !active && !v.bad && v.wait_en;
    w.eng_busy[2] = active;
  }
}

void CoreModelImpl::comb_issue(Wires& w) {
  const auto sig_of = [&](std::uint32_t q, std::uint32_t slot, bool fire) {
    const HeadInfo& h = head(q).info;
    w.sig[slot] = fire && h.sig_en;
    w.sig_sem[slot] = h.sig_sem;
  };
  {  // DMA: asks while its range is unchecked
    const Wires::Dma& d = w.dma;
    w.pop[0] = d.can_start && (!d.wait_en || w.sem_gnt[0]) && !d.bad;
    w.stall_sem[0] = d.can_start && d.wait_en && !w.sem_gnt[0];
    w.err[0] = d.can_start && d.bad;
    sig_of(0, 0, w.pop[0] && d.empty);
    w.done[0][0] = w.pop[0] && d.empty;
    w.done_idx[0][0] = q_idx_[0];
  }
  {
    const Wires::Mxu& m = w.mxu;
    const bool ask = w.valid[1] && m.unit_free && !m.bad;
    w.pop[1] = ask && (!m.wait_en || w.sem_gnt[1]);
    w.stall_sem[1] = ask && m.wait_en && !w.sem_gnt[1];
    w.err[1] = w.valid[1] && m.unit_free && m.bad;
    sig_of(1, 3, w.pop[1] && (m.nop || m.empty));
    w.done[1][0] = w.pop[1] && (m.nop || m.empty);
    w.done_idx[1][0] = q_idx_[1];
  }
  {
    const Wires::Vec& v = w.vec;
    const bool ask = w.valid[2] && vec_.state == VecState::Idle && !v.bad;
    w.pop[2] = ask && (!v.wait_en || w.sem_gnt[2]);
    w.stall_sem[2] = ask && v.wait_en && !w.sem_gnt[2];
    w.err[2] = w.valid[2] && vec_.state == VecState::Idle && v.bad;
    sig_of(2, 6, w.pop[2] && v.empty);
  }
}

}  // namespace tpuemu::tlm
