// SPDX-License-Identifier: Apache-2.0
// The MXU (rtl/ctrl/mxu_ctrl.sv and rtl/mxu/mxu_array.sv). LOADW goes to the weight loader and
// MATMUL to the row streamer, so a weight load into one bank overlaps a matmul on the other; a
// LOADW waits for an older MATMUL on its bank to drain out of the array, a MATMUL for an older
// LOADW of its bank to finish. The array is modelled by its contract, not its PEs: a row presented
// in cycle t with bank tag b leaves in cycle t + 2*DIM as sum_k in[k] * W[b][k][n] (int32,
// wrapping), and a weight push shifts bank b down by one row. The controller guarantees that bank
// b is never pushed while a row tagged b is in the array, so the product can be taken when the row
// enters.
#include <algorithm>
#include <cstring>

#include "core_impl.h"
#include "tpuemu/tlm/mxu_arith.h"

namespace tpuemu::tlm {
namespace {

namespace in = spec::instr;

}  // namespace

void CoreModelImpl::build_weight_pairs(bool bank) {
  mxu_weight_pairs(mxu_.weights[bank].data(), mxu_.weight_top[bank], dim_, mxu_.weight_pairs[bank].data());
  mxu_.pairs_stale[bank] = false;
}

void CoreModelImpl::row_product(const std::uint8_t* input, bool bank, std::int32_t* out) {
  mxu_row_product(input, mxu_.weight_pairs[bank].data(), dim_, out);
}

bool CoreModelImpl::weight_load_can_start() const {
  const MxuState& s = mxu_;
  return !s.wl_wait_st && s.bank_busy[s.wl_bank] == 0 && !(s.pipe_valid && s.pipe_bank == s.wl_bank);
}

void CoreModelImpl::comb_mxu(Wires& w) {
  Wires::Mxu& m = w.mxu;
  MxuState& s = mxu_;
  const bool wl_can_load = s.wl_active && weight_load_can_start();
  m.vw_req = (s.wl_loading || wl_can_load) && s.wl_issued < dim_;
  w.v_req[1] = m.vw_req;
  w.v_addr[1] = (s.wl_base + dim_ - 1 - s.wl_issued) & (shape_.vmem_rows - 1);
  m.st_can_stream = s.st_active && !s.st_wait_wl;
  w.v_req[0] = m.st_can_stream;
  w.v_addr[0] = s.st_vmem & (shape_.vmem_rows - 1);
  w.mxu_stall_w = s.st_active && s.st_wait_wl;
  m.wl_done = s.wl_active && v_rvalid_[1] && s.wl_pushed == dim_ - 1;
  w.sig[4] = m.wl_done && s.wl_sig_en;
  w.sig_sem[4] = s.wl_sig_sem;
  w.done[1][1] = m.wl_done;
  w.done_idx[1][1] = s.wl_idx;
  m.out_valid = !s.flight_empty() && s.flight_front_out() == cycle_;
  const MxuState::Tag& tag = s.tags.head();
  w.sig[5] = m.out_valid && tag.last && tag.sig_en;
  w.sig_sem[5] = tag.sig_sem;
  w.done[1][2] = m.out_valid && tag.last;
  w.done_idx[1][2] = tag.idx;
  w.mxu_row_in = v_rvalid_[0];
  w.mxu_wload = s.wl_loading;
  w.mxu_idle = !w.valid[1] && !m.busy;
}

void CoreModelImpl::comb_mxu_grants(Wires& w) {
  Wires::Mxu& m = w.mxu;
  m.st_issue = m.st_can_stream && w.v_gnt[0];
  m.st_last_issue = m.st_issue && mxu_.st_left == 1;
  w.mxu_stall_vmem = m.st_can_stream && !w.v_gnt[0];
}

void CoreModelImpl::write_result_row(const MxuState::Tag& tag, const std::int32_t* out) {
  std::int32_t* row = acc_row(tag.acc & (shape_.acc_rows - 1));
  const std::uint32_t lanes = dim_;  // a local: a store through row could alias dim_
  if (tag.accum) {
    // acc_write's wrapping add, on unsigned lanes, so that the loop vectorizes
    auto* urow = reinterpret_cast<std::uint32_t*>(row);
    const auto* uout = reinterpret_cast<const std::uint32_t*>(out);
    for (std::uint32_t n = 0; n < lanes; ++n) urow[n] += uout[n];
  } else {
    std::memcpy(row, out, std::size_t{lanes} * sizeof(std::int32_t));
  }
}

void CoreModelImpl::edge_mxu_result(const Wires& w) {
  if (w.mxu.out_valid) write_result_row(mxu_.tags.head(), mxu_.flight_row(mxu_.flight_head));
}

void CoreModelImpl::edge_mxu(const Wires& w, bool clear) {
  const Wires::Mxu& m = w.mxu;
  MxuState& s = mxu_;
  if (w.mxu.out_valid) {
    s.flight_head = (s.flight_head + 1) & (s.flight_out.size() - 1);
    --s.flight_count;
  }
  if (clear) {
    // The RTL's array keeps shifting rows in flight after a soft reset; the model drops them
    // (docs/systemc.md).
    s.wl_active = s.wl_loading = s.st_active = s.pipe_valid = false;
    s.bank_busy.fill(0);
    s.tags.clear();
    s.flight_count = 0;
    return;
  }
  const bool vd_rvalid = v_rvalid_[0], vw_rvalid = v_rvalid_[1];
  const bool old_pipe_bank = s.pipe_bank;

  // ---- the array: a row enters (product with its bank's weights), a weight row is pushed
  if (vd_rvalid) {
    if (s.pairs_stale[old_pipe_bank]) build_weight_pairs(old_pipe_bank);
    const std::size_t slot = (s.flight_head + s.flight_count) & (s.flight_out.size() - 1);
    s.flight_out[slot] = cycle_ + spec::kMxuLatencyPerDim * dim_;
    mxu_row_product(v_rdata_[0].data(), s.weight_pairs[old_pipe_bank].data(), dim_, s.flight_row(slot));
    ++s.flight_count;
    s.tags.tail() = s.pipe_tag;
  }
  s.tags.update(vd_rvalid, m.out_valid);
  if (s.wl_active && vw_rvalid) {
    // shifted in from the top: row k takes row k-1, row 0 the pushed row
    std::uint32_t& top = s.weight_top[s.wl_bank];
    top = (top + dim_ - 1) & (dim_ - 1);
    std::memcpy(s.weights[s.wl_bank].data() + std::size_t{top} * dim_, v_rdata_[1].data(), dim_);
    s.pairs_stale[s.wl_bank] = true;
  }

  // ---- weight loader
  const Words& h = head(1).instr;
  const bool start = w.pop[1];
  const std::uint32_t op_bank = m.loadw ? in::loadw::bank.get(h) : in::matmul::bank.get(h);
  const bool old_wl_active = s.wl_active, old_wl_bank = s.wl_bank;
  const bool old_st_active = s.st_active, old_st_bank = s.st_bank;
  if (start && m.loadw) {
    s.wl_active = true;
    s.wl_loading = false;
    s.wl_bank = op_bank != 0;
    s.wl_base = in::loadw::vmem_row.get(h) & (shape_.vmem_rows - 1);
    s.wl_wait_st = old_st_active && (old_st_bank == s.wl_bank) && !m.st_last_issue;
    s.wl_sig_en = in::header::sig_en.get(h) != 0;
    s.wl_sig_sem = in::header::sig_sem.get(h);
    s.wl_idx = q_idx_[1];
    s.wl_issued = 0;
    s.wl_pushed = 0;
  } else {
    if (m.st_last_issue) s.wl_wait_st = false;
    if (m.vw_req && w.v_gnt[1]) {
      ++s.wl_issued;
      s.wl_loading = true;
    }
    if (s.wl_active && vw_rvalid) ++s.wl_pushed;
    if (m.wl_done) {
      s.wl_active = false;
      s.wl_loading = false;
    }
  }

  // ---- row streamer
  const std::uint32_t st_idx = s.st_idx, st_acc = s.st_acc, st_sig_sem = s.st_sig_sem;
  const bool st_bank = s.st_bank, st_accum = s.st_accum, st_sig_en = s.st_sig_en;
  if (start && m.matmul && !m.empty) {
    s.st_active = true;
    s.st_bank = op_bank != 0;
    s.st_accum = in::matmul::accumulate.get(h) != 0;
    s.st_vmem = in::matmul::vmem_row.get(h) & (shape_.vmem_rows - 1);
    s.st_acc = in::matmul::acc_row.get(h) & (shape_.acc_rows - 1);
    s.st_left = in::matmul::rows.get(h);
    s.st_wait_wl = old_wl_active && (old_wl_bank == s.st_bank) && !m.wl_done;
    s.st_sig_en = in::header::sig_en.get(h) != 0;
    s.st_sig_sem = in::header::sig_sem.get(h);
    s.st_idx = q_idx_[1];
  } else {
    if (m.wl_done) s.st_wait_wl = false;
    if (m.st_issue) {
      s.st_vmem = (s.st_vmem + 1) & (shape_.vmem_rows - 1);
      s.st_acc = (s.st_acc + 1) & (shape_.acc_rows - 1);
      --s.st_left;
      if (m.st_last_issue) s.st_active = false;
    }
  }
  s.pipe_valid = m.st_issue;
  if (m.st_issue) {
    s.pipe_bank = st_bank;
    s.pipe_tag = {st_idx, st_acc, st_accum, m.st_last_issue, st_sig_en, st_sig_sem};
  }
  const std::uint32_t latency = spec::kMxuLatencyPerDim * dim_;
  for (std::uint32_t b = 0; b < 2; ++b) {
    if (vd_rvalid && old_pipe_bank == (b != 0)) {
      s.bank_busy[b] = latency + 1;
    } else if (s.bank_busy[b] != 0) {
      --s.bank_busy[b];
    }
  }
}

}  // namespace tpuemu::tlm
