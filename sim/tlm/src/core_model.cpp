// SPDX-License-Identifier: Apache-2.0
// The core model's cycle (core_impl.h): tpu_top's wiring, the semaphore bank, run control, the
// CSR block and the performance counters. The engines are in fetch_model.cpp, dma_model.cpp,
// mxu_model.cpp and vec_model.cpp.
#include <algorithm>
#include <bit>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>

#include "core_impl.h"

namespace tpuemu::tlm {
namespace {

namespace csr = spec::csr;

std::uint32_t clog2(std::uint64_t x) { return x <= 1 ? 0 : static_cast<std::uint32_t>(std::bit_width(x - 1)); }

void require(bool ok, const std::string& what) {
  if (!ok) throw std::invalid_argument("tlm core: " + what);
}

}  // namespace

std::unique_ptr<CoreModel> CoreModel::make(const CoreShape& shape, BeatPort& port) {
  return std::make_unique<CoreModelImpl>(shape, port);
}

CoreModelImpl::CoreModelImpl(const CoreShape& shape, BeatPort& port) : shape_(shape), dim_(shape.dim), port_(port) {
  // The RTL's elaboration checks, so that the model never runs a core the RTL could not build.
  require(dim_ >= 8 && std::has_single_bit(dim_), "dim " + std::to_string(dim_) + " must be a power of two >= 8");
  require(std::has_single_bit(shape.vmem_rows) && std::has_single_bit(shape.acc_rows),
          "vmem_rows and acc_rows must be powers of two");
  require(shape.vmem_banks >= 1 && std::has_single_bit(shape.vmem_banks) && shape.vmem_banks <= shape.vmem_rows,
          "vmem_banks must be a power of two <= vmem_rows");
  require(std::has_single_bit(shape.smem_words) && shape.smem_words >= dim_ / 4, "smem_words must be a power of two >= dim/4");
  require(shape.queue_depth >= 2 && std::has_single_bit(shape.queue_depth), "queue_depth must be a power of two >= 2");
  require(shape.mem_outstanding >= 2 && std::has_single_bit(shape.mem_outstanding),
          "mem_outstanding must be a power of two >= 2");
  vmem_.assign(std::size_t{shape.vmem_rows} * dim_, 0);
  acc_.assign(std::size_t{shape.acc_rows} * dim_, 0);
  smem_.assign(shape.smem_words, 0);
  for (auto& r : v_rdata_) r.assign(dim_, 0);
  for (auto& r : v_rdata_next_) r.assign(dim_, 0);
  for (auto& q : queues_) q = RingFifo<QueueEntry>(shape.queue_depth);
  route_depth_ = 1u << clog2(std::uint64_t{shape.mem_outstanding} + 32);
  read_ring_.assign(std::size_t{route_depth_} * dim_, 0);
  write_beat_.assign(dim_, 0);
  const std::uint32_t beats_per_instr = dim_ >= 32 ? 1 : 32 / dim_;
  const std::uint32_t slot_bytes = dim_ >= 32 ? 32 : dim_;
  fetch_.buf.assign(std::size_t{8} * beats_per_instr * slot_bytes, 0);
  dma_.rtag = RingFifo<DmaState::Tag>(shape.mem_outstanding);
  dma_.rdat = RingFifo<std::vector<std::uint8_t>>(shape.mem_outstanding);
  for (std::size_t i = 0; i < shape.mem_outstanding; ++i) {
    dma_.rdat.tail().assign(dim_, 0);
    dma_.rdat.update(true, false);
  }
  dma_.rdat.clear();
  dma_.wbuf = RingFifo<DmaState::WriteBeat>(4);
  for (int i = 0; i < 4; ++i) {
    dma_.wbuf.tail().data.assign(dim_, 0);
    dma_.wbuf.update(true, false);
  }
  dma_.wbuf.clear();
  for (auto& c : dma_.cls) c = RingFifo<DmaState::Class>(8);
  mxu_.tags = RingFifo<MxuState::Tag>(std::size_t{1} << clog2(2ull * dim_ + 4));
  for (auto& w : mxu_.weights) w.assign(std::size_t{dim_} * dim_, 0);
  for (auto& w : mxu_.weight_pairs) w.assign(std::size_t{dim_} * dim_, 0);
  // at most 2*DIM + 1 rows in flight; a power of two, so that the ring wraps by a mask
  const std::size_t flight = std::size_t{1} << clog2(2ull * dim_ + 4);
  mxu_.flight_out.assign(flight, 0);
  mxu_.flight_rows.assign(flight * dim_, 0);
  mxu_.flight_row_len = dim_;
  vec_.bias.assign(std::size_t{4} * dim_, 0);
  vec_.a_data.assign(dim_, 0);
  dma_direct_.assign(dim_, 0);
  vec_out_.assign(dim_, 0);
  reset();
}

void CoreModelImpl::clear_state() {
  // Run control, queues, semaphores, counters and the engines' control state; the memories and
  // the datapath registers keep their contents, as in the RTL.
  run_ = RunState{};
  for (auto& q : queues_) q.clear();
  q_idx_.fill(0);
  sems_.fill(0);
  counters_.fill(0);
  fetch_.rd = fetch_.wr = fetch_.buffered = fetch_.inflight = 0;
  fetch_.pc = fetch_.req_pc = fetch_.rsp_pc = fetch_.req_beat = fetch_.rsp_beat = 0;
  fetch_.running = false;
  dma_.active = false;
  dma_.vread_pending = false;
  dma_.rtag.clear();
  dma_.rdat.clear();
  dma_.wbuf.clear();
  for (auto& c : dma_.cls) c.clear();
  dma_.done_units.fill(0);
  mxu_.wl_active = mxu_.wl_loading = mxu_.st_active = mxu_.pipe_valid = false;
  mxu_.bank_busy.fill(0);
  mxu_.tags.clear();
  vec_.state = VecState::Idle;
  v_rvalid_.fill(false);
  v_rvalid_next_.fill(false);
  prog_base_ = smem_addr_ = 0;
  fetch_.outstanding = fetch_.discard = 0;
  dma_.wack_pending = dma_.wack_discard = dma_.rd_discard = 0;
}

void CoreModelImpl::reset() {
  // The harness holds rst_ni low for four edges and releases it for one more (core_sim_impl.h).
  // The model is reset only when nothing is in flight (at construction); whatever the memory
  // still owed is dropped with the core's state, as are rows in the array.
  clear_state();
  mxu_.flight_count = 0;
  held_.reset();
  route_.clear();
  reads_.due.clear();
  acks_.due.clear();
  reads_delivered_ = reads_issued_;
  cycle_ += 5;
}

// ---------------------------------------------------------------------------------------------
// One cycle
// ---------------------------------------------------------------------------------------------

std::uint64_t CoreModelImpl::run(std::uint64_t cycles, bool stop_when_idle) {
  const Csr idle{};
  std::uint64_t i = 0;
  stop_ = false;
  while (i < cycles) {
    if (const std::uint64_t n = stream(cycles - i); n != 0) {
      i += n;
      if (stop_) return i;
      continue;
    }
    if (const std::uint64_t n = step_engines(cycles - i); n != 0) {
      i += n;
      if (stop_) return i;
      continue;
    }
    const bool repeats = tick(idle);
    ++i;
    if (stop_ || (stop_when_idle && !run_.busy)) return i;
    if (repeats && fast_paths_ && i < cycles) {
      // Quiet cycles (the core waits for memory, a countdown or a semaphore) are not simulated
      // one by one: up to the next timed event they are the same cycle again.
      const std::uint64_t n = std::min(next_event() - cycle_, cycles - i);
      repeat_quiet_cycles(n);
      i += n;
    }
  }
  return cycles;
}

bool CoreModelImpl::quiet(const Wires& w) const {
  // A request the memory holds back keeps the port as it is until its acceptance (next_event).
  if (w.rsp_valid || w.wack_valid || (w.mem_valid && !w.mem_held_wait) || w.f_dispatch || w.f_stop || w.f_illegal) {
    return false;
  }
  for (std::uint32_t q = 0; q < 3; ++q) {
    if (w.pop[q] || w.err[q]) return false;
  }
  for (std::uint32_t p = 0; p < 4; ++p) {
    if (w.v_req[p] || v_rvalid_[p]) return false;
  }
  for (bool s : w.sig) {
    if (s) return false;
  }
  // A bank's busy countdown that ends at this edge frees the bank for a waiting weight load in
  // the next cycle: that cycle differs (next_event() only sees countdowns still running).
  if (mxu_.bank_busy[0] == 1 || mxu_.bank_busy[1] == 1) return false;
  return !w.mxu.out_valid && !w.mxu.wl_done && !w.dma.issue_write_direct && !w.dma.smem_we && !dma_.vread_pending &&
         !mxu_.pipe_valid;
}

// The first cycle whose wires may differ from a quiet cycle's: a memory response or an
// acceptance falls due, a row leaves the array, a bank's busy countdown ends.
std::uint64_t CoreModelImpl::next_event() const {
  std::uint64_t e = ~std::uint64_t{0};
  if (!reads_.due.empty()) e = std::min(e, reads_.due.front());
  if (!acks_.due.empty()) e = std::min(e, acks_.due.front());
  if (held_) e = std::min(e, held_->accept);
  if (!mxu_.flight_empty()) e = std::min(e, mxu_.flight_front_out());
  for (std::uint32_t b : mxu_.bank_busy) {
    if (b != 0) e = std::min(e, cycle_ + b);
  }
  return std::max(e, cycle_);
}

void CoreModelImpl::repeat_quiet_cycles(std::uint64_t n) {
  for (std::size_t j = 0; j < counters_.size(); ++j) counters_[j] += n * increments_[j];
  for (std::uint32_t& b : mxu_.bank_busy) b = b > n ? static_cast<std::uint32_t>(b - n) : 0;
  cycle_ += n;
}

void CoreModelImpl::csr_cycle(std::uint32_t addr, bool write, std::uint32_t value) {
  tick(Csr{true, write, addr, value});
}

bool CoreModelImpl::tick(const Csr& csr) {
  Wires& w = cycle_wires_;
  clear_wires(w);
  const bool csr_wr = csr.valid && csr.write;
  const bool ctrl = csr_wr && csr.addr == csr::kCtrl;
  const bool start = ctrl && csr::ctrl::start.get(csr.wdata) != 0 && !run_.busy;
  const bool clear = ctrl && csr::ctrl::soft_reset.get(csr.wdata) != 0;

  comb_memory_responses(w);
  comb_fetch(w);
  comb_heads(w);
  comb_semaphores(w);
  comb_issue(w);
  comb_dma_port(w);
  comb_memory_port(w);
  comb_dma_local(w);
  comb_mxu(w);
  comb_vec(w);
  comb_vmem(w);
  comb_dma_grants(w);
  comb_mxu_grants(w);
  comb_vec_grants(w);

  if (recording_) sample_trace(w);
  const bool repeats = !csr.valid && quiet(w) && run_.deadlock_cnt == 0;
  const RunState run_before = run_;
  edge_counters(w, clear || start);
  // Memories first: their write data are the engines' registers of this cycle.
  edge_memories(w);
  edge_semaphores(w, csr, clear);
  edge_run(w, start, clear);
  // The engines read their heads before the queues move; the fetch unit's buffer is read by the
  // push before it moves.
  edge_dma(w, clear);
  edge_mxu(w, clear);
  edge_vec(w, clear);
  swap_vmem_read_data();

  // queues (cleared by start and soft reset), their indices
  for (std::uint32_t q = 0; q < 3; ++q) {
    if (clear || start) {
      queues_[q].clear();
      q_idx_[q] = 0;
      continue;
    }
    const bool push = w.f_dispatch && w.f_queue == q;
    if (push) {
      QueueEntry& e = queues_[q].tail();
      const std::uint32_t slot_bytes = dim_ >= 32 ? 32 : dim_;
      const std::uint32_t beats = dim_ >= 32 ? 1 : 32 / dim_;
      const std::uint32_t depth = 8 * beats;
      std::uint8_t bytes[32];
      for (std::uint32_t b = 0; b < beats; ++b) {
        std::memcpy(bytes + b * slot_bytes, fetch_.buf.data() + std::size_t{(fetch_.rd + b) % depth} * slot_bytes, slot_bytes);
      }
      std::memcpy(e.instr.data(), bytes, 32);
      e.pc = fetch_.pc;
      e.info = decode_head(q, e.instr);
    }
    queues_[q].update(push, w.pop[q]);
    if (w.pop[q]) ++q_idx_[q];
  }
  edge_fetch(w, start, clear);

  // CSR-held state
  if (csr_wr && csr.addr == csr::kProgBase) prog_base_ = csr.wdata;
  if (csr.valid && csr.addr == csr::kSmemAddr && csr.write) {
    smem_addr_ = csr.wdata & (shape_.smem_words - 1);
  } else if (csr.valid && csr.addr == csr::kSmemData) {
    if (csr.write) smem_[smem_addr_] = csr.wdata;
    smem_addr_ = (smem_addr_ + 1) & (shape_.smem_words - 1);
  }

  end_cycle(w);
  return repeats && run_.busy == run_before.busy && run_.done == run_before.done && run_.err == run_before.err &&
         run_.deadlock_cnt == 0;
}

void CoreModelImpl::swap_vmem_read_data() {
  for (std::uint32_t p = 0; p < 4; ++p) {
    if (v_rvalid_next_[p]) std::swap(v_rdata_[p], v_rdata_next_[p]);
  }
  v_rvalid_ = v_rvalid_next_;
}

void CoreModelImpl::end_cycle(const Wires& w) {
  // memory responses consumed this cycle
  if (w.rsp_valid) {
    reads_.due.pop_front();
    route_.pop_front();
    ++reads_delivered_;
  }
  if (w.wack_valid) acks_.due.pop_front();
  ++cycle_;
}

// ---------------------------------------------------------------------------------------------
// Memory port: mem_arbiter (fetch first) in front of the port the model is bound to
// ---------------------------------------------------------------------------------------------

void CoreModelImpl::comb_memory_responses(Wires& w) {
  if (!reads_.due.empty() && reads_.due.front() <= cycle_) {
    w.rsp_valid = true;
    w.rsp_data = read_ring_.data() + std::size_t{reads_delivered_ & (route_depth_ - 1)} * dim_;
    w.f_rsp = route_.front();
    w.d_rsp = !w.f_rsp;
  }
  w.wack_valid = !acks_.due.empty() && acks_.due.front() <= cycle_;
}

void CoreModelImpl::comb_memory_port(Wires& w) {
  const bool route_full = route_.size() >= route_depth_;
  bool fetch_owner = w.f_req;
  if (held_) {
    // A request the memory has not accepted yet stays on the port (docs/systemc.md).
    w.mem_valid = true;
    w.mem_write = held_->write;
    fetch_owner = held_->fetch;
    w.mem_ready = cycle_ >= held_->accept;
    w.mem_held_wait = !w.mem_ready;
  } else {
    w.mem_valid = w.f_req ? !route_full : (w.d_req && (w.d_write || !route_full));
    w.mem_write = !w.f_req && w.d_write;
    if (w.mem_valid) {
      const std::uint64_t addr = w.f_req ? fetch_req_addr() : w.d_addr;
      BeatRequest beat{w.mem_write, addr, nullptr, dim_};
      if (w.mem_write) {
        beat.data = dma_.wbuf.head().data.data();
      } else {
        beat.data = read_ring_.data() + std::size_t{reads_issued_ & (route_depth_ - 1)} * dim_;
      }
      const BeatTiming t = port_.request(cycle_, beat);
      PendingResponses& r = w.mem_write ? acks_ : reads_;
      const std::uint64_t due = std::max(t.done, std::max(r.last + 1, std::max(t.accept, cycle_) + 1));
      r.due.push_back(due);
      r.last = due;
      if (!w.mem_write) ++reads_issued_;
      w.mem_ready = t.accept <= cycle_;
      if (!w.mem_ready) held_ = HeldRequest{w.f_req, w.mem_write, addr, t.accept};
    }
  }
  const bool accepted = w.mem_valid && w.mem_ready;
  w.f_ready = accepted && fetch_owner;
  w.d_ready = accepted && !fetch_owner;
  if (accepted) {
    if (!w.mem_write) route_.push_back(fetch_owner);
    held_.reset();
  }
}

// ---------------------------------------------------------------------------------------------
// Semaphore bank: priority grants (DMA, MXU, vector), takes, signals, CSR writes
// ---------------------------------------------------------------------------------------------

void CoreModelImpl::comb_semaphores(Wires& w) {
  for (std::uint32_t i = 0; i < 3; ++i) {
    std::int64_t left = sems_[w.wait_sem[i]];
    for (std::uint32_t v = 0; v < i; ++v) {
      if (w.sem_gnt[v] && w.wait_sem[v] == w.wait_sem[i]) left -= w.wait_cnt[v];
    }
    w.sem_gnt[i] = w.sem_req[i] && left >= static_cast<std::int64_t>(w.wait_cnt[i]);
  }
}

void CoreModelImpl::edge_semaphores(const Wires& w, const Csr& csr, bool clear) {
  // Most cycles neither take, signal nor write one: the bank keeps its values.
  bool any = clear || csr.valid || w.pop[0] || w.pop[1] || w.pop[2];
  for (bool s : w.sig) any = any || s;
  if (!any) {
    sem_overflow_ = false;
    return;
  }
  std::array<std::uint32_t, spec::kNumSems> value = sems_;
  for (std::uint32_t i = 0; i < 3; ++i) {
    if (w.pop[i] && w.sem_gnt[i]) value[w.wait_sem[i]] = (value[w.wait_sem[i]] - w.wait_cnt[i]) & 0xFFFFu;
  }
  bool overflow = false;
  for (std::uint32_t s = 0; s < 8; ++s) {
    if (!w.sig[s]) continue;
    const std::uint32_t sum = value[w.sig_sem[s]] + 1;
    overflow = overflow || sum > 0xFFFFu;
    value[w.sig_sem[s]] = sum & 0xFFFFu;
  }
  const bool csr_sem = csr.valid && csr.write && csr.addr >= csr::kSem &&
                       csr.addr < csr::kSem + csr::kSemStride * spec::kNumSems && (csr.addr & 3u) == 0;
  if (csr_sem) value[(csr.addr - csr::kSem) / csr::kSemStride] = csr.wdata & 0xFFFFu;
  sem_overflow_ = overflow;
  if (clear) value.fill(0);
  sems_ = value;
}

// ---------------------------------------------------------------------------------------------
// Run control (run_ctrl.sv)
// ---------------------------------------------------------------------------------------------

void CoreModelImpl::edge_run(const Wires& w, bool start, bool clear) {
  const bool any_busy = w.eng_busy[0] || w.eng_busy[1] || w.eng_busy[2];
  const bool all_empty = queues_[0].empty() && queues_[1].empty() && queues_[2].empty();
  const bool fetch_idle = fetch_.outstanding == 0;
  const bool all_drained = !fetch_.running && fetch_idle && all_empty && !any_busy;
  bool deadlock_now = run_.busy && fetch_idle && (!fetch_.running || w.f_stall) && !any_busy &&
                      (!all_empty || w.f_stall);
  for (std::uint32_t q = 0; q < 3; ++q) {
    if (!queues_[q].empty() && !w.stall_sem[q]) deadlock_now = false;
  }
  using spec::ErrorCode;
  bool err_now = true;
  ErrorCode code = ErrorCode::None;
  std::uint32_t pc = fetch_.pc;
  if (w.f_illegal) {
    code = ErrorCode::IllegalOpcode;
  } else if (w.err[0] || w.err[1] || w.err[2]) {
    const std::uint32_t q = w.err[0] ? 0 : w.err[1] ? 1 : 2;
    code = ErrorCode::AddressRange;
    pc = head(q).pc;
  } else if (sem_overflow_) {
    code = ErrorCode::SemOverflow;
  } else if (run_.deadlock_cnt == 15) {
    code = ErrorCode::Deadlock;
  } else {
    err_now = false;
  }
  if (clear) {
    run_ = RunState{};
  } else if (start) {
    run_.busy = true;
    run_.done = run_.err = false;
    run_.err_code = 0;
    run_.deadlock_cnt = 0;
  } else if (run_.busy) {
    run_.deadlock_cnt = deadlock_now ? (run_.deadlock_cnt + 1) & 0xFu : 0;
    if (err_now) {
      run_.busy = false;
      run_.err = true;
      run_.err_code = static_cast<std::uint32_t>(code);
      run_.err_pc = pc;
    } else if (all_drained) {
      run_.busy = false;
      run_.done = true;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Performance counters (perf_counters.sv): the events of the cycle, cleared by start and reset
// ---------------------------------------------------------------------------------------------

std::uint32_t CoreModelImpl::bytes_counter_of(std::uint32_t path) const {
  namespace c = spec::counter;
  switch (static_cast<spec::DmaPath>(path)) {
    case spec::DmaPath::HbmToVmem: return c::bytes_hbm_to_vmem;
    case spec::DmaPath::VmemToHbm: return c::bytes_vmem_to_hbm;
    case spec::DmaPath::HbmToSmem: return c::bytes_hbm_to_smem;
    case spec::DmaPath::SmemToHbm: return c::bytes_smem_to_hbm;
    case spec::DmaPath::AccToHbm: return c::bytes_acc_to_hbm;
  }
  throw std::logic_error("tlm core: DMA path " + std::to_string(path) + " has no byte counter");
}

void CoreModelImpl::edge_counters(const Wires& w, bool clear_counters) {
  namespace c = spec::counter;
  const auto beat = [&](spec::DmaPath p) -> std::uint64_t {
    return (w.dma_path_beat >> static_cast<std::uint32_t>(p)) & 1u ? dim_ : 0;
  };
  std::array<std::uint64_t, spec::kNumCounters>& inc = increments_;
  inc[c::cycles] = run_.busy;
  inc[c::mxu_busy] = w.mxu_row_in;
  inc[c::mxu_stall_semaphore] = w.stall_sem[1];
  inc[c::mxu_stall_weights] = w.mxu_stall_w;
  inc[c::mxu_stall_bank_conflict] = w.mxu_stall_vmem;
  inc[c::dma_stall_semaphore] = w.stall_sem[0];
  inc[c::dma_stall_memory] = w.dma_stall_mem;
  inc[c::vector_stall_semaphore] = w.stall_sem[2];
  inc[c::fetch_stall] = w.f_stall;
  inc[c::bytes_hbm_to_vmem] = beat(spec::DmaPath::HbmToVmem);
  inc[c::bytes_vmem_to_hbm] = beat(spec::DmaPath::VmemToHbm);
  inc[c::bytes_hbm_to_smem] = beat(spec::DmaPath::HbmToSmem);
  inc[c::bytes_smem_to_hbm] = beat(spec::DmaPath::SmemToHbm);
  inc[c::bytes_acc_to_hbm] = beat(spec::DmaPath::AccToHbm);
  inc[c::vmem_bank_conflicts] = w.v_conflicts;
  inc[c::instructions_fetched] = w.f_dispatch;
  inc[c::mem_read_beats] = w.rsp_valid;
  inc[c::mem_write_beats] = w.mem_valid && w.mem_ready && w.mem_write;
  inc[c::vector_busy] = w.eng_busy[2];
  inc[c::weight_load_busy] = w.mxu_wload;
  inc[c::mxu_idle_empty] = run_.busy && w.mxu_idle;
  inc[c::vector_stall_bank_conflict] = w.vec_stall_vmem;
  inc[c::vector_add_rows] = w.vec_add_row;
  if (clear_counters) {
    counters_.fill(0);
    return;
  }
  for (std::size_t j = 0; j < counters_.size(); ++j) counters_[j] += inc[j];
}

// ---------------------------------------------------------------------------------------------
// CSR reads (csr_block.sv's read mux)
// ---------------------------------------------------------------------------------------------

std::uint32_t CoreModelImpl::csr_peek(std::uint32_t addr) {
  // QUEUE_STATE and HEAD_WAIT show which heads wait this cycle: the heads' wires (they read state
  // only).
  Wires w;
  comb_heads(w);
  comb_semaphores(w);
  comb_issue(w);
  std::uint32_t v = 0;
  switch (addr) {
    case csr::kId: return spec::kIdValue;
    case csr::kConfig:
      v |= csr::config::dim.put(dim_);
      v |= csr::config::log2_vmem_rows.put(clog2(shape_.vmem_rows));
      v |= csr::config::log2_acc_rows.put(clog2(shape_.acc_rows));
      return v;
    case csr::kStatus:
      v |= csr::status::busy.put(run_.busy);
      v |= csr::status::done.put(run_.done);
      v |= csr::status::error.put(run_.err);
      v |= csr::status::error_code.put(run_.err_code);
      return v;
    case csr::kProgBase: return prog_base_;
    case csr::kErrorInfo: return run_.err_pc;
    case csr::kQueueState:
      v |= csr::queue_state::dma_entries.put(static_cast<std::uint32_t>(queues_[0].count()));
      v |= csr::queue_state::mxu_entries.put(static_cast<std::uint32_t>(queues_[1].count()));
      v |= csr::queue_state::vec_entries.put(static_cast<std::uint32_t>(queues_[2].count()));
      v |= csr::queue_state::fetch_stopped.put(!fetch_.running);
      v |= csr::queue_state::dma_waits.put(w.stall_sem[0]);
      v |= csr::queue_state::mxu_waits.put(w.stall_sem[1]);
      v |= csr::queue_state::vec_waits.put(w.stall_sem[2]);
      return v;
    case csr::kHeadWait:
      v |= csr::head_wait::dma_sem.put(w.wait_sem[0]);
      v |= csr::head_wait::mxu_sem.put(w.wait_sem[1]);
      v |= csr::head_wait::vec_sem.put(w.wait_sem[2]);
      v |= csr::head_wait::wait_cnt.put(w.stall_sem[0] ? w.wait_cnt[0] : w.stall_sem[1] ? w.wait_cnt[1] : w.wait_cnt[2]);
      return v;
    case csr::kPc: return fetch_.pc;
    case csr::kSmemAddr: return smem_addr_;
    case csr::kSmemData: return smem_[smem_addr_];
    default: break;
  }
  if (addr >= csr::kSem && addr < csr::kSem + csr::kSemStride * spec::kNumSems && (addr & 3u) == 0) {
    return sems_[(addr - csr::kSem) / csr::kSemStride];
  }
  if (addr >= csr::kCounter && addr < csr::kCounter + csr::kCounterStride * spec::kNumCounters) {
    const std::uint32_t off = addr - csr::kCounter;
    const std::uint64_t c = counters_[off / csr::kCounterStride];
    return (off & 4u) ? static_cast<std::uint32_t>(c >> 32) : static_cast<std::uint32_t>(c);
  }
  return 0;
}

// ---------------------------------------------------------------------------------------------
// Trace port, sampled before the edge as the Verilated harness does (core_sim_impl.h)
// ---------------------------------------------------------------------------------------------

void CoreModelImpl::record_trace(bool on) {
  recording_ = on;
  if (on) {
    trace_.clear();
    issued_.fill(0);
    stalled_.fill(false);
    trace_start_.reset();
  }
}

std::vector<CoreTraceEvent> CoreModelImpl::take_trace() {
  for (std::uint8_t k = 0; k < 3; ++k) {  // a wait the run ended in (deadlock)
    if (stalled_[k]) trace_.push_back({cycle_, k, CoreTraceEvent::WaitEnd, issued_[k]});
  }
  stalled_.fill(false);
  return std::exchange(trace_, {});
}

void CoreModelImpl::sample_trace(const Wires& w) {
  if (!trace_start_ && run_.busy) trace_start_ = cycle_;
  static constexpr std::array<std::uint32_t, 3> kPorts{3, 3, 1};
  for (std::uint8_t k = 0; k < 3; ++k) {
    if (w.stall_sem[k] != stalled_[k]) {
      stalled_[k] = w.stall_sem[k];
      trace_.push_back({cycle_, k, w.stall_sem[k] ? CoreTraceEvent::WaitBegin : CoreTraceEvent::WaitEnd, issued_[k]});
    }
    if (w.pop[k]) trace_.push_back({cycle_, k, CoreTraceEvent::Issue, issued_[k]++});
    for (std::uint32_t p = 0; p < kPorts[k]; ++p) {
      if (w.done[k][p]) trace_.push_back({cycle_, k, CoreTraceEvent::Done, w.done_idx[k][p]});
    }
  }
}

// ---------------------------------------------------------------------------------------------
// VMEM: fixed-priority ports per bank; reads return one cycle after the grant
// ---------------------------------------------------------------------------------------------

void CoreModelImpl::comb_vmem(Wires& w) {
  const std::uint32_t banks = shape_.vmem_banks;
  for (std::uint32_t p = 0; p < 4; ++p) {
    w.v_gnt[p] = w.v_req[p];
    for (std::uint32_t q = 0; q < p && w.v_gnt[p]; ++q) {
      if (w.v_req[q] && w.v_addr[q] % banks == w.v_addr[p] % banks) w.v_gnt[p] = false;
    }
    if (w.v_req[p] && !w.v_gnt[p]) ++w.v_conflicts;
  }
}

void CoreModelImpl::edge_memories(const Wires& w) {
  // VMEM: every granted read samples the row before this edge's writes (one port per bank).
  for (std::uint32_t p = 0; p < 4; ++p) {
    v_rvalid_next_[p] = w.v_gnt[p] && !w.v_we[p];
    if (v_rvalid_next_[p]) std::memcpy(v_rdata_next_[p].data(), vmem_row(w.v_addr[p]), dim_);
  }
  for (std::uint32_t p = 0; p < 4; ++p) {
    if (w.v_gnt[p] && w.v_we[p]) std::memcpy(vmem_row(w.v_addr[p]), w.v_wdata[p], dim_);
  }
  edge_mxu_result(w);
  edge_dma_smem(w);
}

}  // namespace tpuemu::tlm
