// SPDX-License-Identifier: Apache-2.0
// Unit tests of rtl/dma/dma_engine.sv (Dim 8, 256 VMEM rows, 64 ACC rows, 128 SMEM rows,
// 4 reads in flight) in a C++ environment: an in-order memory with a fixed latency, random
// back-pressure on the memory port and the VMEM port, and SMEM / ACC read combinationally. Every
// descriptor's 2-D copy is checked against a C++ model of the copy, its completion signal
// against the data that has landed, and the in-flight reads against the outstanding limit.
//
// Cycle convention: the test drives a cycle's inputs, evaluates, answers the combinational
// requests (grants, SMEM / ACC data), samples the outputs and applies the rising edge.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <deque>
#include <memory>
#include <optional>
#include <random>
#include <vector>

#include "Vdma_engine.h"
#include "tpuemu/spec/contract.h"
#include "verilated.h"

namespace {

namespace spec = tpuemu::spec;
constexpr unsigned kDim = 8;
constexpr unsigned kVmemRows = 256;
constexpr unsigned kAccRows = 64;
constexpr unsigned kSmemRows = 256 / (kDim / 4);
constexpr unsigned kOutstanding = 4;
constexpr std::size_t kHbmBytes = 1 << 16;

enum Path : std::uint32_t {
  kHbmToVmem = static_cast<std::uint32_t>(spec::DmaPath::HbmToVmem),
  kVmemToHbm = static_cast<std::uint32_t>(spec::DmaPath::VmemToHbm),
  kHbmToSmem = static_cast<std::uint32_t>(spec::DmaPath::HbmToSmem),
  kSmemToHbm = static_cast<std::uint32_t>(spec::DmaPath::SmemToHbm),
  kAccToHbm = static_cast<std::uint32_t>(spec::DmaPath::AccToHbm),
};

struct Desc {
  Path path;
  std::uint32_t hbm, local, len, count, hstride, lstride;
  bool sig_en = true;
  std::uint32_t sig_sem = 1;
  bool nop = false;

  bool is_read() const { return path == kHbmToVmem || path == kHbmToSmem; }
  std::uint32_t beats() const { return len * count * (path == kAccToHbm ? 4 : 1); }
  std::array<std::uint32_t, spec::kInstrWords> words() const {
    std::array<std::uint32_t, spec::kInstrWords> w{};
    namespace h = spec::instr::header;
    namespace d = spec::instr::dma;
    h::opcode.put(w, static_cast<std::uint32_t>(nop ? spec::Opcode::DmaNop : spec::Opcode::Dma));
    h::sig_en.put(w, sig_en);
    h::sig_sem.put(w, sig_sem);
    d::hbm_addr.put(w, hbm);
    d::local_addr.put(w, local);
    d::len.put(w, len);
    d::count.put(w, count);
    d::hbm_stride.put(w, hstride);
    d::local_stride.put(w, lstride);
    d::path.put(w, path);
    return w;
  }
};

using Row = std::array<std::uint8_t, kDim>;

struct Signal {
  unsigned port;  // 0 immediate, 1 read class, 2 write class
  unsigned sem;
};

class DmaEngineTest : public ::testing::Test {
 protected:
  DmaEngineTest()
      : ctx_(std::make_unique<VerilatedContext>()),
        hbm_(kHbmBytes),
        vmem_(kVmemRows),
        smem_(kSmemRows),
        acc_(kAccRows) {
    ctx_->fatalOnError(false);
    m_ = std::make_unique<Vdma_engine>(ctx_.get());
    std::mt19937 fill(99);
    for (auto& b : hbm_) b = static_cast<std::uint8_t>(fill());
    for (auto& r : vmem_) for (auto& b : r) b = static_cast<std::uint8_t>(fill());
    for (auto& r : smem_) for (auto& b : r) b = static_cast<std::uint8_t>(fill());
    for (auto& r : acc_) for (auto& x : r) x = fill();
    m_->clk_i = 0;
    m_->clear_i = 0;
    m_->instr_valid_i = 0;
    m_->sem_gnt_i = 0;
    m_->mem_req_ready_i = 0;
    m_->mem_rsp_valid_i = 0;
    m_->mem_wack_valid_i = 0;
    m_->vmem_gnt_i = 0;
    m_->vmem_rvalid_i = 0;
    m_->rst_ni = 0;
    m_->eval();
    tick();
    m_->rst_ni = 1;
    m_->eval();
  }
  ~DmaEngineTest() override { m_->final(); }

  void tick() {
    m_->clk_i = 1;
    m_->eval();
    m_->clk_i = 0;
    m_->eval();
  }

  // The copy the engine must make, applied to copies of the memories.
  void model_copy(const Desc& d, std::vector<std::uint8_t>& hbm, std::vector<Row>& vmem,
                  std::vector<Row>& smem) const {
    for (std::uint32_t c = 0; c < d.count; ++c) {
      for (std::uint32_t r = 0; r < d.len; ++r) {
        const std::uint32_t local = d.local + c * d.lstride + r;
        const std::uint32_t row_bytes = d.path == kAccToHbm ? 4 * kDim : kDim;
        std::uint8_t* h = &hbm[d.hbm + c * d.hstride + r * row_bytes];
        switch (d.path) {
          case kHbmToVmem: std::memcpy(vmem[local].data(), h, kDim); break;
          case kVmemToHbm: std::memcpy(h, vmem[local].data(), kDim); break;
          case kHbmToSmem: std::memcpy(smem[local].data(), h, kDim); break;
          case kSmemToHbm: std::memcpy(h, smem[local].data(), kDim); break;
          case kAccToHbm: std::memcpy(h, acc_[local].data(), 4 * kDim); break;
        }
      }
    }
  }

  // One cycle of the environment around the engine.
  void cycle() {
    // registered inputs
    m_->instr_valid_i = !queue_.empty();
    if (!queue_.empty()) {
      const auto w = queue_.front().words();
      for (unsigned i = 0; i < w.size(); ++i) m_->instr_i[i] = w[i];
    }
    const bool rsp = !rsp_q_.empty() && rsp_q_.front().first <= now_;
    m_->mem_rsp_valid_i = rsp;
    if (rsp) m_->mem_rsp_data_i = rsp_q_.front().second;
    const bool wack = !wack_q_.empty() && wack_q_.front() <= now_;
    m_->mem_wack_valid_i = wack;
    m_->vmem_rvalid_i = vread_.has_value();
    if (vread_) m_->vmem_rdata_i = *vread_;
    // SMEM and ACC are synchronous-read memories: the row the engine named last cycle, as it is
    // after last cycle's writes
    std::uint64_t s = 0;
    std::memcpy(&s, smem_[smem_rrow_ % kSmemRows].data(), kDim);
    m_->smem_rdata_i = s;
    for (unsigned i = 0; i < kDim; ++i) m_->acc_rdata_i[i] = acc_[acc_rrow_ % kAccRows][i];
    m_->smem_wait_i = 0;
    m_->mem_req_ready_i = pct_(rng_) >= mem_stall_pct_;
    const bool vmem_free = pct_(rng_) >= vmem_stall_pct_;
    m_->eval();
    // combinational answers
    for (int pass = 0; pass < 2; ++pass) {
      m_->sem_gnt_i = m_->sem_req_o;
      m_->vmem_gnt_i = m_->vmem_req_o && vmem_free;
      m_->eval();
    }

    // sample
    EXPECT_FALSE(m_->err_range_o);
    if (m_->instr_pop_o) {
      started_.push_back(queue_.front());
      queue_.pop_front();
    }
    if (rsp) rsp_q_.pop_front();
    if (wack) {
      wack_q_.pop_front();
      ++acks_;
    }
    vread_.reset();
    if (m_->mem_req_valid_o && m_->mem_req_ready_i) {
      const std::uint32_t a = m_->mem_req_addr_o;
      EXPECT_LT(a + kDim, kHbmBytes + 1);
      if (m_->mem_req_write_o) {
        std::memcpy(&hbm_[a], &m_->mem_req_wdata_o, kDim);
        wack_q_.push_back(now_ + latency_);
        ++writes_;
      } else {
        std::uint64_t v = 0;
        std::memcpy(&v, &hbm_[a], kDim);
        const std::uint64_t at = std::max(now_ + latency_, rsp_q_.empty() ? 0 : rsp_q_.back().first + 1);
        rsp_q_.push_back({at, v});
        ++reads_;
      }
    }
    responses_ += rsp ? 1 : 0;
    EXPECT_LE(reads_ - responses_, kOutstanding) << "reads in flight";
    max_in_flight_ = std::max(max_in_flight_, reads_ - responses_);
    EXPECT_LE(writes_ - acks_, kOutstanding) << "writes in flight";
    if (m_->vmem_req_o && m_->vmem_gnt_i) {
      if (m_->vmem_we_o) {
        std::memcpy(vmem_[m_->vmem_addr_o].data(), &m_->vmem_wdata_o, kDim);
      } else {
        Row r = vmem_[m_->vmem_addr_o];
        std::uint64_t v = 0;
        std::memcpy(&v, r.data(), kDim);
        vread_ = v;
      }
    }
    if (m_->smem_we_o) std::memcpy(smem_[m_->smem_wrow_o].data(), &m_->smem_wdata_o, kDim);
    smem_rrow_ = m_->smem_rrow_next_o;
    acc_rrow_ = m_->acc_raddr_next_o;
    for (unsigned p = 0; p < 5; ++p) beats_[p] += (m_->path_beat_o >> p) & 1;
    for (unsigned s = 0; s < 3; ++s) {
      if ((m_->sig_valid_o >> s) & 1) signals_.push_back({s, (m_->sig_sem_o >> (5 * s)) & 31u});
    }
    stalled_mem_ += m_->stall_mem_o;
    tick();
    ++now_;
  }

  // Runs descriptors to completion; returns the cycles taken. At each completion signal the
  // descriptor's data must be in place (reads) or every write of it acknowledged (writes).
  std::uint64_t run(const std::vector<Desc>& descs) {
    auto hbm = hbm_;
    auto vmem = vmem_;
    auto smem = smem_;
    std::deque<std::size_t> open_read, open_write;
    std::uint64_t write_beats_done = 0;
    for (std::size_t i = 0; i < descs.size(); ++i) {
      queue_.push_back(descs[i]);
      if (descs[i].len == 0 || descs[i].count == 0 || descs[i].nop) continue;
      (descs[i].is_read() ? open_read : open_write).push_back(i);
    }
    const std::uint64_t start = now_;
    std::size_t seen = 0;
    while ((!queue_.empty() || m_->busy_o) && now_ - start < 200000) {
      cycle();
      for (; seen < signals_.size(); ++seen) {
        const Signal s = signals_[seen];
        if (s.port == 0) continue;
        auto& open = s.port == 1 ? open_read : open_write;
        EXPECT_FALSE(open.empty()) << "completion of no descriptor";
        if (open.empty()) continue;
        const Desc& d = descs[open.front()];
        open.pop_front();
        EXPECT_EQ(s.sem, d.sig_sem);
        model_copy(d, hbm, vmem, smem);
        if (s.port == 1) {
          EXPECT_EQ(vmem, vmem_) << "data not in VMEM at its completion signal";
          EXPECT_EQ(smem, smem_) << "data not in SMEM at its completion signal";
        } else {
          write_beats_done += d.beats();
          EXPECT_EQ(acks_, write_beats_done) << "completion signalled before the last write ack";
        }
      }
      if (HasFailure()) break;
    }
    EXPECT_TRUE(queue_.empty() && !m_->busy_o) << "did not finish";
    EXPECT_TRUE(open_read.empty() && open_write.empty()) << "a completion signal is missing";
    for (const Desc& d : descs) model_copy(d, hbm, vmem, smem);
    EXPECT_EQ(hbm, hbm_);
    EXPECT_EQ(vmem, vmem_);
    EXPECT_EQ(smem, smem_);
    EXPECT_FALSE(ctx_->gotError());
    return now_ - start;
  }

  std::unique_ptr<VerilatedContext> ctx_;
  std::unique_ptr<Vdma_engine> m_;
  std::vector<std::uint8_t> hbm_;
  std::vector<Row> vmem_, smem_;
  std::vector<std::array<std::uint32_t, kDim>> acc_;

  std::mt19937 rng_{0xd3a0u};
  std::uniform_int_distribution<int> pct_{0, 99};
  int mem_stall_pct_ = 0;
  int vmem_stall_pct_ = 0;
  std::uint64_t latency_ = 10;

  std::uint64_t now_ = 0;
  std::deque<Desc> queue_;
  std::vector<Desc> started_;
  std::deque<std::pair<std::uint64_t, std::uint64_t>> rsp_q_;
  std::deque<std::uint64_t> wack_q_;
  std::optional<std::uint64_t> vread_;
  std::uint32_t smem_rrow_ = 0, acc_rrow_ = 0;  // rows the engine named for the next cycle
  std::uint64_t reads_ = 0, responses_ = 0, writes_ = 0, acks_ = 0;
  std::uint64_t max_in_flight_ = 0, stalled_mem_ = 0;
  std::array<std::uint64_t, 5> beats_{};
  std::vector<Signal> signals_;
};

// One strided descriptor per path: 3 chunks of 5 rows, local stride 7 rows, HBM stride 0x300.
TEST_F(DmaEngineTest, TwoDimensionalStridesOnEveryPath) {
  const std::vector<Desc> descs = {
      {kHbmToVmem, 0x1000, 10, 5, 3, 0x300, 7},
      {kHbmToSmem, 0x2000, 2, 5, 3, 0x300, 7},
      {kVmemToHbm, 0x4000, 100, 5, 3, 0x300, 7},
      {kSmemToHbm, 0x6000, 64, 5, 3, 0x300, 7},
      {kAccToHbm, 0x8000, 20, 5, 3, 0x300, 7},
  };
  run(descs);
  for (const Desc& d : descs) EXPECT_EQ(beats_[d.path], d.beats()) << "path " << d.path;
  ASSERT_EQ(started_.size(), descs.size());
}

TEST_F(DmaEngineTest, RandomBackPressureKeepsEveryCopyExact) {
  mem_stall_pct_ = 50;
  vmem_stall_pct_ = 40;
  std::mt19937 rng(0xbacc);
  std::vector<Desc> descs;
  std::uniform_int_distribution<std::uint32_t> len(1, 6), count(1, 4), lstride(6, 9);
  for (int i = 0; i < 30; ++i) {
    const auto path = static_cast<Path>(i % 5);
    Desc d{path, 0x400u * (i + 1), 0, len(rng), count(rng), 0x100, lstride(rng)};
    // Copies into and out of a local memory use disjoint halves of it: the engine orders
    // descriptors only within a direction (reads from HBM, writes to HBM).
    const std::uint32_t rows = path == kAccToHbm ? kAccRows
                               : (path == kHbmToSmem || path == kSmemToHbm) ? kSmemRows / 2 : kVmemRows / 2;
    const std::uint32_t base = (path == kVmemToHbm ? kVmemRows / 2 : path == kSmemToHbm ? kSmemRows / 2 : 0);
    const std::uint32_t span = (d.count - 1) * d.lstride + d.len;
    d.local = base + (i * 13) % (rows - span + 1);
    d.sig_sem = static_cast<std::uint32_t>(i % 32);
    descs.push_back(d);
  }
  run(descs);
  EXPECT_GT(stalled_mem_, 0u);
}

// With a long memory latency the engine keeps exactly Outstanding reads in flight, and stalls.
TEST_F(DmaEngineTest, ReadsInFlightReachButNeverExceedTheLimit) {
  latency_ = 40;
  const std::uint64_t cycles = run({{kHbmToVmem, 0x0, 0, 32, 1, 0, 0}});
  EXPECT_EQ(max_in_flight_, kOutstanding);
  EXPECT_GT(stalled_mem_, 0u);
  // 32 beats, 4 per round trip of ~40 cycles.
  EXPECT_GE(cycles, 32u / kOutstanding * latency_);
}

// An empty descriptor completes at issue: its signal comes on the immediate port, in that cycle.
TEST_F(DmaEngineTest, EmptyDescriptorAndNopSignalAtIssue) {
  Desc empty{kHbmToVmem, 0, 0, 0, 1, 0, 0};
  empty.sig_sem = 9;
  Desc nop{kHbmToVmem, 0, 0, 0, 0, 0, 0};
  nop.nop = true;
  nop.sig_sem = 10;
  run({empty, {kHbmToVmem, 0x100, 0, 4, 1, 0, 0}, nop});
  ASSERT_EQ(signals_.size(), 3u);
  EXPECT_EQ(signals_[0].port, 0u);
  EXPECT_EQ(signals_[0].sem, 9u);
  EXPECT_EQ(signals_[1].port, 1u);
  // the NOP is a fence: it issues only after the copy before it has completed
  EXPECT_EQ(signals_[2].port, 0u);
  EXPECT_EQ(signals_[2].sem, 10u);
}

// A descriptor past the end of its local memory is refused at the queue head.
TEST_F(DmaEngineTest, OutOfRangeDescriptorRaisesErrorAndStays) {
  queue_.push_back({kHbmToVmem, 0, kVmemRows - 2, 3, 1, 0, 0});
  m_->instr_valid_i = 1;
  const auto w = queue_.front().words();
  for (unsigned i = 0; i < w.size(); ++i) m_->instr_i[i] = w[i];
  m_->eval();
  EXPECT_TRUE(m_->err_range_o);
  EXPECT_FALSE(m_->instr_pop_o);
  queue_.clear();
}

// The protocol assertions (simulation only, --assert) catch a memory that answers what the engine
// never asked: a read response or a write acknowledge with nothing outstanding.
TEST_F(DmaEngineTest, AssertionCatchesAReadResponseWithoutARead) {
  tick();  // the checks start with the second edge after reset (chk_en_q is set by the first)
  EXPECT_FALSE(ctx_->gotError());
  m_->mem_rsp_valid_i = 1;
  tick();
  m_->mem_rsp_valid_i = 0;
  EXPECT_TRUE(ctx_->gotError());
}

TEST_F(DmaEngineTest, AssertionCatchesAWriteAcknowledgeWithoutAWrite) {
  tick();
  EXPECT_FALSE(ctx_->gotError());
  m_->mem_wack_valid_i = 1;
  tick();
  m_->mem_wack_valid_i = 0;
  EXPECT_TRUE(ctx_->gotError());
}

}  // namespace
