// SPDX-License-Identifier: Apache-2.0
#include "functional_core.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>
#include <utility>

#include "tpuemu/spec/arith.h"

namespace tpuemu::fake {
namespace {

namespace csr = spec::csr;
namespace instr = spec::instr;
namespace arith = spec::arith;  // the element arithmetic every model of the core shares

constexpr std::uint32_t kInstrBytes = spec::kInstrWidth / 8;
constexpr std::uint32_t kSemMax = (1u << spec::kSemWidth) - 1;

std::uint32_t log2u(std::uint64_t x) { return static_cast<std::uint32_t>(std::bit_width(x) - 1); }

// [first, first + count) lies inside [0, limit).
bool in_range(std::uint64_t first, std::uint64_t count, std::uint64_t limit) {
  return first <= limit && count <= limit - first;
}

std::uint8_t opcode_of(const std::array<std::uint32_t, spec::kInstrWords>& w) {
  return static_cast<std::uint8_t>(instr::header::opcode.get(w));
}

spec::Queue queue_of_opcode(std::uint8_t opcode) { return static_cast<spec::Queue>(opcode >> 4); }

bool known_opcode(std::uint8_t opcode) {
  return std::any_of(spec::kOpcodes.begin(), spec::kOpcodes.end(),
                     [&](const spec::OpcodeInfo& o) { return static_cast<std::uint8_t>(o.value) == opcode; });
}

}  // namespace

FunctionalCore::FunctionalCore(const DeviceShape& shape)
    : shape_(shape),
      hbm_(shape.hbm_bytes, 0),
      vmem_(std::size_t{shape.vmem_rows} * shape.dim, 0),
      acc_(std::size_t{shape.acc_rows} * shape.dim, 0),
      smem_(shape.smem_words, 0) {
  for (auto& w : weights_) w.assign(std::size_t{shape.dim} * shape.dim, 0);
  hal_.ctx = this;
  hal_.csr_read = [](void* c, std::uint32_t a) { return static_cast<FunctionalCore*>(c)->csr_read(a); };
  hal_.csr_write = [](void* c, std::uint32_t a, std::uint32_t v) {
    static_cast<FunctionalCore*>(c)->csr_write(a, v);
  };
  hal_.mem_write = [](void* c, std::uint64_t a, const std::uint8_t* d, std::size_t n) {
    return static_cast<FunctionalCore*>(c)->mem_write(a, d, n);
  };
  hal_.mem_read = [](void* c, std::uint64_t a, std::uint8_t* d, std::size_t n) {
    return static_cast<FunctionalCore*>(c)->mem_read(a, d, n);
  };
  hal_.wait_cycles = [](void* c, std::uint64_t n) { return static_cast<FunctionalCore*>(c)->wait(n); };
  hal_.mem_capacity = [](void* c) { return static_cast<FunctionalCore*>(c)->shape_.hbm_bytes; };
  hal_.failed = nullptr;
  hal_.smem_words = [](void* c) { return static_cast<FunctionalCore*>(c)->shape_.smem_words; };
}

// ---------------------------------------------------------------------------------------------
// CSRs and memory
// ---------------------------------------------------------------------------------------------

std::uint32_t FunctionalCore::csr_read(std::uint32_t a) {
  switch (a) {
    case csr::kId: return spec::kIdValue;
    case csr::kConfig:
      return csr::config::dim.put(shape_.dim) | csr::config::log2_vmem_rows.put(log2u(shape_.vmem_rows)) |
             csr::config::log2_acc_rows.put(log2u(shape_.acc_rows));
    case csr::kStatus:
      return csr::status::busy.put(busy_) | csr::status::done.put(done_) | csr::status::error.put(error_) |
             csr::status::error_code.put(error_code_);
    case csr::kProgBase: return prog_base_;
    case csr::kErrorInfo: return error_info_;
    case csr::kQueueState: return queue_state_;
    case csr::kHeadWait: return head_wait_;
    case csr::kPc: return pc_;
    case csr::kSmemAddr: return smem_addr_;
    case csr::kSmemData: {
      const std::uint32_t v = smem_addr_ < smem_.size() ? smem_[smem_addr_] : 0;
      ++smem_addr_;
      return v;
    }
    default: break;
  }
  if (a >= csr::sem(0) && a < csr::sem(spec::kNumSems) && a % 4 == 0) {
    return sems_[(a - csr::sem(0)) / csr::kSemStride];
  }
  if (a >= csr::counter_lo(0) && a < csr::counter_lo(spec::kNumCounters) && a % 4 == 0) {
    const std::uint64_t v = counters_[(a - csr::counter_lo(0)) / csr::kCounterStride];
    return (a % csr::kCounterStride == 0) ? static_cast<std::uint32_t>(v) : static_cast<std::uint32_t>(v >> 32);
  }
  return 0;
}

void FunctionalCore::csr_write(std::uint32_t a, std::uint32_t v) {
  if (a == csr::kCtrl) {
    if (csr::ctrl::soft_reset.get(v)) soft_reset();
    if (csr::ctrl::start.get(v) && !busy_) start();
  } else if (a == csr::kProgBase) {
    prog_base_ = v;
  } else if (a == csr::kSmemAddr) {
    smem_addr_ = v;
  } else if (a == csr::kSmemData) {
    if (smem_addr_ < smem_.size()) smem_[smem_addr_] = v;
    ++smem_addr_;
  } else if (a >= csr::sem(0) && a < csr::sem(spec::kNumSems) && a % 4 == 0) {
    sems_[(a - csr::sem(0)) / csr::kSemStride] = v & kSemMax;
  }
}

int FunctionalCore::mem_write(std::uint64_t a, const std::uint8_t* d, std::size_t n) {
  if (!in_range(a, n, hbm_.size())) return FW_ST_OUT_OF_RANGE;
  std::memcpy(hbm_.data() + a, d, n);
  return FW_ST_OK;
}

int FunctionalCore::mem_read(std::uint64_t a, std::uint8_t* d, std::size_t n) {
  if (!in_range(a, n, hbm_.size())) return FW_ST_OUT_OF_RANGE;
  std::memcpy(d, hbm_.data() + a, n);
  return FW_ST_OK;
}

// ---------------------------------------------------------------------------------------------
// Run control
// ---------------------------------------------------------------------------------------------

void FunctionalCore::soft_reset() {
  busy_ = done_ = error_ = false;
  error_code_ = error_info_ = pc_ = queue_state_ = head_wait_ = 0;
  sems_.fill(0);
  counters_.fill(0);
  dma_q_.clear();
  mxu_q_.clear();
  vec_q_.clear();
}

void FunctionalCore::start() {
  busy_ = true;
  done_ = error_ = false;
  error_code_ = error_info_ = 0;
  counters_.fill(0);
  dma_q_.clear();
  mxu_q_.clear();
  vec_q_.clear();
  issued_.fill(0);
  waiting_.fill(false);
  fetch_program();
  update_queue_csrs();
}

// Fetch runs ahead of execution in the RTL (queues fill long before the engines drain them), so
// the model fetches the whole program at once; an illegal opcode therefore fails the run before
// anything executes.
void FunctionalCore::fetch_program() {
  for (pc_ = 0;; ++pc_) {
    const std::uint64_t addr = std::uint64_t{prog_base_} + std::uint64_t{kInstrBytes} * pc_;
    Words w{};
    if (!in_range(addr, kInstrBytes, hbm_.size())) return fail(spec::ErrorCode::AddressRange, pc_);
    std::memcpy(w.data(), hbm_.data() + addr, kInstrBytes);  // little-endian words, as in HBM
    counters_[spec::counter::mem_read_beats] += kInstrBytes / shape_.dim;
    const std::uint8_t op = opcode_of(w);
    if (!known_opcode(op)) return fail(spec::ErrorCode::IllegalOpcode, pc_);
    if (op == static_cast<std::uint8_t>(spec::Opcode::End)) {
      ++pc_;
      return;
    }
    ++counters_[spec::counter::instructions_fetched];
    queue_of(queue_of_opcode(op)).push_back({w, pc_});
  }
}

std::deque<FunctionalCore::Queued>& FunctionalCore::queue_of(spec::Queue q) {
  switch (q) {
    case spec::Queue::Dma: return dma_q_;
    case spec::Queue::Mxu: return mxu_q_;
    default: return vec_q_;
  }
}

bool FunctionalCore::head_can_start(const std::deque<Queued>& q) const {
  if (q.empty()) return false;
  const Words& w = q.front().words;
  if (instr::header::wait_en.get(w) && sems_[instr::header::wait_sem.get(w)] < instr::header::wait_cnt.get(w)) {
    return false;
  }
  // A MATMUL waits until its weight bank has been loaded (the RTL keeps that order itself).
  if (opcode_of(w) == static_cast<std::uint8_t>(spec::Opcode::Matmul)) {
    return weights_loaded_[instr::matmul::bank.get(w)];
  }
  return true;
}

std::uint64_t FunctionalCore::wait(std::uint64_t n) {
  std::uint64_t used = 0;
  while (busy_ && used < n) {
    if (dma_q_.empty() && mxu_q_.empty() && vec_q_.empty()) {
      busy_ = false;
      done_ = true;
      break;
    }
    const std::uint64_t c = step();
    if (c == 0) {
      // No head can start. If every waiting head waits on a semaphore, nothing can ever signal
      // it: a deadlock (error 2). Otherwise (a MATMUL on a never-loaded bank) the core hangs
      // until the firmware's watchdog ends the run.
      auto sem_blocked = [&](const std::deque<Queued>& q) {
        return q.empty() || instr::header::wait_en.get(q.front().words) != 0;
      };
      if (sem_blocked(dma_q_) && sem_blocked(mxu_q_) && sem_blocked(vec_q_)) {
        counters_[spec::counter::cycles] += 1;
        fail(spec::ErrorCode::Deadlock, pc_);
        return used + 1;
      }
      counters_[spec::counter::cycles] += n - used;
      return n;
    }
    counters_[spec::counter::cycles] += c;
    used += c;
  }
  update_queue_csrs();
  return used;
}

void FunctionalCore::start_timeline() {
  timeline_.clear();
  recording_ = true;
}

std::vector<TimelineEvent> FunctionalCore::stop_timeline() {
  const std::uint64_t now = counters_[spec::counter::cycles];
  for (const spec::Queue q : {spec::Queue::Dma, spec::Queue::Mxu, spec::Queue::Vector}) {
    if (waiting_[static_cast<std::size_t>(q)]) record(q, TimelineEvent::WaitEnd, now);  // the run ended waiting
  }
  recording_ = false;
  std::stable_sort(timeline_.begin(), timeline_.end(),
                   [](const TimelineEvent& a, const TimelineEvent& b) { return a.cycle < b.cycle; });
  return std::exchange(timeline_, {});
}

void FunctionalCore::record(spec::Queue q, TimelineEvent::Kind kind, std::uint64_t cycle) {
  if (kind == TimelineEvent::WaitBegin) waiting_[static_cast<std::size_t>(q)] = true;
  if (kind == TimelineEvent::WaitEnd) waiting_[static_cast<std::size_t>(q)] = false;
  if (recording_) timeline_.push_back({.cycle = cycle, .queue = q, .kind = kind, .queue_index = issued_[static_cast<std::size_t>(q)]});
}

// Heads that wait on their semaphore now start waiting (WaitBegin once per head).
void FunctionalCore::note_waits() {
  for (const spec::Queue q : {spec::Queue::Dma, spec::Queue::Mxu, spec::Queue::Vector}) {
    const std::deque<Queued>& d = queue_of(q);
    if (d.empty() || waiting_[static_cast<std::size_t>(q)]) continue;
    const Words& w = d.front().words;
    if (instr::header::wait_en.get(w) && sems_[instr::header::wait_sem.get(w)] < instr::header::wait_cnt.get(w)) {
      record(q, TimelineEvent::WaitBegin, counters_[spec::counter::cycles]);
    }
  }
}

std::uint64_t FunctionalCore::step() {
  note_waits();
  for (const spec::Queue qn : {spec::Queue::Dma, spec::Queue::Mxu, spec::Queue::Vector}) {
    std::deque<Queued>* q = &queue_of(qn);
    if (!head_can_start(*q)) continue;
    const Queued in = q->front();
    q->pop_front();
    const std::uint64_t now = counters_[spec::counter::cycles];
    const auto qi = static_cast<std::size_t>(qn);
    if (waiting_[qi]) record(qn, TimelineEvent::WaitEnd, now);
    record(qn, TimelineEvent::Issue, now);
    if (instr::header::wait_en.get(in.words)) sems_[instr::header::wait_sem.get(in.words)] -= instr::header::wait_cnt.get(in.words);
    const std::uint64_t cycles = execute(in);
    if (error_) {
      ++issued_[qi];
      return std::max<std::uint64_t>(cycles, 1);
    }
    // A NOP (and anything empty) completes as it starts, everything else after its cycles.
    const spec::Opcode op = static_cast<spec::Opcode>(opcode_of(in.words));
    const bool at_issue = op == spec::Opcode::DmaNop || op == spec::Opcode::MxuNop || op == spec::Opcode::VecNop;
    record(qn, TimelineEvent::Done, at_issue ? now : now + std::max<std::uint64_t>(cycles, 1));
    ++issued_[qi];
    signal(in.words);
    update_queue_csrs();
    return std::max<std::uint64_t>(cycles, 1);
  }
  update_queue_csrs();
  return 0;
}

void FunctionalCore::signal(const Words& w) {
  if (!instr::header::sig_en.get(w)) return;
  std::uint32_t& s = sems_[instr::header::sig_sem.get(w)];
  if (s == kSemMax) return fail(spec::ErrorCode::SemOverflow, pc_);
  ++s;
}

void FunctionalCore::fail(spec::ErrorCode code, std::uint32_t pc) {
  busy_ = false;
  done_ = false;
  error_ = true;
  error_code_ = static_cast<std::uint32_t>(code);
  error_info_ = pc;
  update_queue_csrs();
}

void FunctionalCore::update_queue_csrs() {
  auto entries = [](const std::deque<Queued>& q) { return static_cast<std::uint32_t>(std::min<std::size_t>(q.size(), 255)); };
  auto waits = [&](const std::deque<Queued>& q) {
    return !q.empty() && instr::header::wait_en.get(q.front().words) &&
           sems_[instr::header::wait_sem.get(q.front().words)] < instr::header::wait_cnt.get(q.front().words);
  };
  auto sem = [](const std::deque<Queued>& q) { return q.empty() ? 0u : instr::header::wait_sem.get(q.front().words); };
  queue_state_ = csr::queue_state::dma_entries.put(entries(dma_q_)) | csr::queue_state::mxu_entries.put(entries(mxu_q_)) |
                 csr::queue_state::vec_entries.put(entries(vec_q_)) | csr::queue_state::fetch_stopped.put(1) |
                 csr::queue_state::dma_waits.put(waits(dma_q_)) | csr::queue_state::mxu_waits.put(waits(mxu_q_)) |
                 csr::queue_state::vec_waits.put(waits(vec_q_));
  const std::deque<Queued>* first = waits(dma_q_) ? &dma_q_ : waits(mxu_q_) ? &mxu_q_ : &vec_q_;
  head_wait_ = csr::head_wait::dma_sem.put(sem(dma_q_)) | csr::head_wait::mxu_sem.put(sem(mxu_q_)) |
               csr::head_wait::vec_sem.put(sem(vec_q_)) |
               csr::head_wait::wait_cnt.put(first->empty() ? 0 : instr::header::wait_cnt.get(first->front().words));
}

// ---------------------------------------------------------------------------------------------
// Instructions
// ---------------------------------------------------------------------------------------------

std::uint64_t FunctionalCore::execute(const Queued& in) {
  switch (static_cast<spec::Opcode>(opcode_of(in.words))) {
    case spec::Opcode::Dma: return execute_dma(in);
    case spec::Opcode::LoadW: return execute_loadw(in);
    case spec::Opcode::Matmul: return execute_matmul(in);
    case spec::Opcode::VQuant: return execute_vquant(in);
    case spec::Opcode::VAdd: return execute_vadd(in);
    default: return 1;  // the NOP fences: everything before them has completed in this model
  }
}

std::uint64_t FunctionalCore::execute_dma(const Queued& in) {
  const Words& w = in.words;
  const std::uint64_t hbm = instr::dma::hbm_addr.get(w), hbm_stride = instr::dma::hbm_stride.get(w);
  const std::uint32_t local = instr::dma::local_addr.get(w), local_stride = instr::dma::local_stride.get(w);
  const std::uint32_t len = instr::dma::len.get(w), count = instr::dma::count.get(w);
  const auto path = static_cast<spec::DmaPath>(instr::dma::path.get(w));
  const std::uint32_t dim = shape_.dim;
  // Local row bytes and the local memory's rows, per path.
  std::uint32_t row_bytes = dim, local_rows = 0, counter = 0;
  bool to_hbm = false;
  switch (path) {
    case spec::DmaPath::HbmToVmem: local_rows = shape_.vmem_rows; counter = spec::counter::bytes_hbm_to_vmem; break;
    case spec::DmaPath::VmemToHbm: local_rows = shape_.vmem_rows; counter = spec::counter::bytes_vmem_to_hbm; to_hbm = true; break;
    case spec::DmaPath::HbmToSmem: local_rows = shape_.smem_words / (dim / 4); counter = spec::counter::bytes_hbm_to_smem; break;
    case spec::DmaPath::SmemToHbm: local_rows = shape_.smem_words / (dim / 4); counter = spec::counter::bytes_smem_to_hbm; to_hbm = true; break;
    case spec::DmaPath::AccToHbm: local_rows = shape_.acc_rows; row_bytes = 4 * dim; counter = spec::counter::bytes_acc_to_hbm; to_hbm = true; break;
    default: fail(spec::ErrorCode::IllegalOpcode, in.pc); return 1;
  }
  std::vector<std::uint8_t> row(row_bytes);
  for (std::uint32_t i = 0; i < count; ++i) {
    const std::uint64_t h = hbm + i * hbm_stride;
    const std::uint64_t l = std::uint64_t{local} + std::uint64_t{i} * local_stride;
    if (!in_range(l, len, local_rows) || !in_range(h, std::uint64_t{len} * row_bytes, hbm_.size())) {
      fail(spec::ErrorCode::AddressRange, in.pc);
      return 1;
    }
    for (std::uint32_t r = 0; r < len; ++r) {
      std::uint8_t* hp = hbm_.data() + h + std::uint64_t{r} * row_bytes;
      const auto lr = static_cast<std::uint32_t>(l + r);
      switch (path) {
        case spec::DmaPath::HbmToVmem: std::memcpy(vmem(lr), hp, dim); break;
        case spec::DmaPath::VmemToHbm: std::memcpy(hp, vmem(lr), dim); break;
        case spec::DmaPath::HbmToSmem: std::memcpy(smem_.data() + std::size_t{lr} * (dim / 4), hp, dim); break;
        case spec::DmaPath::SmemToHbm: std::memcpy(hp, smem_.data() + std::size_t{lr} * (dim / 4), dim); break;
        default: std::memcpy(hp, &acc(lr, 0), row_bytes); break;  // lanes little-endian int32
      }
    }
  }
  const std::uint64_t bytes = std::uint64_t{count} * len * row_bytes;
  counters_[counter] += bytes;
  counters_[to_hbm ? spec::counter::mem_write_beats : spec::counter::mem_read_beats] += bytes / dim;
  return bytes / dim;  // one beat per cycle
}

std::uint64_t FunctionalCore::execute_loadw(const Queued& in) {
  const std::uint32_t row = instr::loadw::vmem_row.get(in.words), bank = instr::loadw::bank.get(in.words);
  if (!in_range(row, shape_.dim, shape_.vmem_rows)) {
    fail(spec::ErrorCode::AddressRange, in.pc);
    return 1;
  }
  std::memcpy(weights_[bank].data(), vmem(row), std::size_t{shape_.dim} * shape_.dim);
  weights_loaded_[bank] = true;
  counters_[spec::counter::weight_load_busy] += shape_.dim;
  return shape_.dim;
}

std::uint64_t FunctionalCore::execute_matmul(const Queued& in) {
  const Words& w = in.words;
  const std::uint32_t vrow = instr::matmul::vmem_row.get(w), arow = instr::matmul::acc_row.get(w);
  const std::uint32_t rows = instr::matmul::rows.get(w);
  const auto& wt = weights_[instr::matmul::bank.get(w)];
  const bool accumulate = instr::matmul::accumulate.get(w) != 0;
  if (!in_range(vrow, rows, shape_.vmem_rows) || !in_range(arow, rows, shape_.acc_rows)) {
    fail(spec::ErrorCode::AddressRange, in.pc);
    return 1;
  }
  const std::uint32_t dim = shape_.dim;
  for (std::uint32_t r = 0; r < rows; ++r) {
    const auto* x = reinterpret_cast<const std::int8_t*>(vmem(vrow + r));
    for (std::uint32_t n = 0; n < dim; ++n) {
      std::int32_t& out = acc(arow + r, n);
      out = arith::acc_write(out, arith::mxu_lane(x, &wt[n], dim, dim), accumulate);
    }
  }
  counters_[spec::counter::mxu_busy] += rows;
  return rows;
}

std::uint64_t FunctionalCore::execute_vquant(const Queued& in) {
  const Words& w = in.words;
  const std::uint32_t arow = instr::vquant::acc_row.get(w), vrow = instr::vquant::vmem_row.get(w);
  const std::uint32_t rows = instr::vquant::rows.get(w);
  auto scale = static_cast<std::int32_t>(instr::vquant::scale.get(w));
  std::uint32_t shift = instr::vquant::shift.get(w);
  if (instr::vquant::smem_params.get(w)) {
    const std::uint32_t word = instr::vquant::smem_word.get(w);
    if (!in_range(word, 2, smem_.size())) {
      fail(spec::ErrorCode::AddressRange, in.pc);
      return 1;
    }
    scale = static_cast<std::int32_t>(smem_[word]);
    shift = smem_[word + 1] & instr::vquant::shift.bits.mask();
  }
  if (!in_range(arow, rows, shape_.acc_rows) || !in_range(vrow, rows, shape_.vmem_rows)) {
    fail(spec::ErrorCode::AddressRange, in.pc);
    return 1;
  }
  // The bias: DIM int32 lanes, little-endian, in the 4 VMEM rows from bias_row (lane n in row
  // n / (dim/4)); zero without the flag.
  constexpr std::uint32_t kBiasRows = 4;
  std::vector<std::int32_t> bias(shape_.dim, 0);
  const bool with_bias = instr::vquant::bias.get(w) != 0;
  if (with_bias) {
    const std::uint32_t brow = instr::vquant::bias_row.get(w);
    if (!in_range(brow, kBiasRows, shape_.vmem_rows)) {
      fail(spec::ErrorCode::AddressRange, in.pc);
      return 1;
    }
    std::memcpy(bias.data(), vmem(brow), std::size_t{kBiasRows} * shape_.dim);
  }
  const bool relu = instr::vquant::relu.get(w) != 0;
  for (std::uint32_t r = 0; r < rows; ++r) {
    for (std::uint32_t n = 0; n < shape_.dim; ++n) {
      const std::int8_t q = arith::vquant_biased(acc(arow + r, n), bias[n], scale, shift, relu);
      vmem(vrow + r)[n] = static_cast<std::uint8_t>(q);
    }
  }
  counters_[spec::counter::vector_busy] += rows;
  return rows + (with_bias && rows > 0 ? kBiasRows : 0);
}

std::uint64_t FunctionalCore::execute_vadd(const Queued& in) {
  const Words& w = in.words;
  const std::uint32_t a = instr::vadd::a_row.get(w), b = instr::vadd::b_row.get(w);
  const std::uint32_t out = instr::vadd::out_row.get(w), rows = instr::vadd::rows.get(w);
  if (!in_range(a, rows, shape_.vmem_rows) || !in_range(b, rows, shape_.vmem_rows) ||
      !in_range(out, rows, shape_.vmem_rows)) {
    fail(spec::ErrorCode::AddressRange, in.pc);
    return 1;
  }
  const bool relu = instr::vadd::relu.get(w) != 0;
  // Row by row, reads before the write, as the hardware: out == a or out == b is in place.
  for (std::uint32_t r = 0; r < rows; ++r) {
    for (std::uint32_t n = 0; n < shape_.dim; ++n) {
      const std::int8_t sum = arith::vadd(static_cast<std::int8_t>(vmem(a + r)[n]),
                                          static_cast<std::int8_t>(vmem(b + r)[n]), relu);
      vmem(out + r)[n] = static_cast<std::uint8_t>(sum);
    }
  }
  constexpr std::uint64_t kCyclesPerRow = 3;  // read a, read b, write: one VMEM port
  counters_[spec::counter::vector_busy] += kCyclesPerRow * rows;
  counters_[spec::counter::vector_add_rows] += rows;
  return kCyclesPerRow * rows;
}

}  // namespace tpuemu::fake
