// SPDX-License-Identifier: Apache-2.0
// The vector unit (rtl/ctrl/vec_unit.sv, datapath rtl/ctrl/vec_lanes.sv): one instruction at a
// time on its own VMEM port (reads return one cycle after the grant). VQUANT requantises ACC rows
// to int8, one VMEM row per granted cycle, after reading the 4 VMEM rows of int32 biases when asked
// to; VADD reads a, reads b and writes the saturated sum, three granted cycles per row.
#include <cstring>

#include "core_impl.h"
#include "tpuemu/spec/arith.h"

namespace tpuemu::tlm {
namespace {

namespace in = spec::instr;
namespace arith = spec::arith;  // the element arithmetic every model of the core shares

}  // namespace

void CoreModelImpl::quant_row(std::uint8_t* out) {
  const std::int32_t* acc = acc_row(vec_.acc & (shape_.acc_rows - 1));
  for (std::uint32_t n = 0; n < dim_; ++n) {
    std::int32_t bias = 0;  // the lane's int32, little-endian in the bias rows (as on the host)
    if (vec_.bias_en) std::memcpy(&bias, vec_.bias.data() + std::size_t{n} * 4, 4);
    out[n] = static_cast<std::uint8_t>(arith::vquant_biased(acc[n], bias, vec_.scale, vec_.shift, vec_.relu));
  }
}

void CoreModelImpl::add_row(std::uint8_t* out) {
  const std::uint8_t* b = v_rdata_[2].data();  // b's read data, held until the port's next read
  for (std::uint32_t n = 0; n < dim_; ++n) {
    const std::int8_t s = arith::vadd(static_cast<std::int8_t>(vec_.a_data[n]), static_cast<std::int8_t>(b[n]), vec_.relu);
    out[n] = static_cast<std::uint8_t>(s);
  }
}

void CoreModelImpl::comb_vec(Wires& w) {
  const VecState& s = vec_;
  const std::uint32_t mask = shape_.vmem_rows - 1;
  switch (s.state) {
    case VecState::Bias:
      w.v_req[2] = s.bias_req != 4;
      w.v_addr[2] = s.rd & mask;
      break;
    case VecState::Quant:
      w.v_req[2] = w.v_we[2] = true;
      w.v_addr[2] = s.out & mask;
      quant_row(vec_out_.data());
      w.v_wdata[2] = vec_out_.data();
      break;
    case VecState::AddA:
      w.v_req[2] = true;
      w.v_addr[2] = s.rd & mask;
      break;
    case VecState::AddB:
      w.v_req[2] = true;
      w.v_addr[2] = s.b & mask;
      break;
    case VecState::AddW:
      w.v_req[2] = w.v_we[2] = true;
      w.v_addr[2] = s.out & mask;
      add_row(vec_out_.data());
      w.v_wdata[2] = vec_out_.data();
      break;
    case VecState::Idle: break;
  }
}

void CoreModelImpl::comb_vec_grants(Wires& w) {
  Wires::Vec& v = w.vec;
  const VecState& s = vec_;
  w.vec_stall_vmem = w.v_req[2] && !w.v_gnt[2];
  v.row_done = w.v_gnt[2] && (s.state == VecState::Quant || s.state == VecState::AddW);
  v.last_row = v.row_done && s.left == 1;
  w.vec_add_row = w.v_gnt[2] && s.state == VecState::AddW;
  w.sig[7] = v.last_row && s.sig_en;
  w.sig_sem[7] = s.sig_sem;
  const bool empty_start = w.pop[2] && v.empty;
  w.done[2][0] = v.last_row || empty_start;
  w.done_idx[2][0] = empty_start ? q_idx_[2] : s.idx;
}

void CoreModelImpl::edge_vec(const Wires& w, bool clear) {
  const Wires::Vec& v = w.vec;
  VecState& s = vec_;
  if (clear) {
    s.state = VecState::Idle;
    return;
  }
  if (w.pop[2] && !v.empty) {
    const Words& h = head(2).instr;
    s.sig_en = in::header::sig_en.get(h) != 0;
    s.sig_sem = in::header::sig_sem.get(h);
    s.idx = q_idx_[2];
    s.bias_req = s.bias_got = 0;
    s.bias_en = v.quant && in::vquant::bias.get(h) != 0;
    if (in::vquant::smem_params.get(h)) {
      const std::uint32_t word = in::vquant::smem_word.get(h);
      s.scale = static_cast<std::int32_t>(smem_[word & (shape_.smem_words - 1)]);
      s.shift = smem_[(word + 1) & (shape_.smem_words - 1)] & 63u;
    } else {
      s.scale = static_cast<std::int32_t>(in::vquant::scale.get(h));
      s.shift = in::vquant::shift.get(h);
    }
    s.acc = in::vquant::acc_row.get(h);
    if (v.add) {
      s.relu = in::vadd::relu.get(h) != 0;
      s.left = in::vadd::rows.get(h);
      s.state = VecState::AddA;
      s.rd = in::vadd::a_row.get(h);
      s.b = in::vadd::b_row.get(h);
      s.out = in::vadd::out_row.get(h);
    } else {
      s.relu = in::vquant::relu.get(h) != 0;
      s.left = in::vquant::rows.get(h);
      s.state = s.bias_en ? VecState::Bias : VecState::Quant;
      s.rd = in::vquant::bias_row.get(h);
      s.out = in::vquant::vmem_row.get(h);
    }
    return;
  }
  const bool rvalid = v_rvalid_[2];
  switch (s.state) {
    case VecState::Bias:
      if (w.v_gnt[2] && w.v_req[2]) {
        ++s.rd;
        ++s.bias_req;
      }
      if (rvalid) {
        std::memcpy(s.bias.data() + std::size_t{s.bias_got & 3u} * dim_, v_rdata_[2].data(), dim_);
        if (s.bias_got == 3) s.state = VecState::Quant;
        ++s.bias_got;
      }
      break;
    case VecState::AddA:
      if (w.v_gnt[2]) s.state = VecState::AddB;
      break;
    case VecState::AddB:
      if (rvalid) std::memcpy(s.a_data.data(), v_rdata_[2].data(), dim_);  // a's data, the cycle after its grant
      if (w.v_gnt[2]) s.state = VecState::AddW;
      break;
    default: break;
  }
  if (v.row_done) {
    ++s.acc;
    ++s.out;
    ++s.rd;
    ++s.b;
    --s.left;
    if (v.last_row) {
      s.state = VecState::Idle;
    } else if (s.state == VecState::AddW) {
      s.state = VecState::AddA;
    }
  }
}

}  // namespace tpuemu::tlm
