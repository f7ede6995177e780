// SPDX-License-Identifier: Apache-2.0
// Unit tests of rtl/ctrl/sem_bank.sv (3 waiters: 0 DMA, 1 MXU, 2 vector; 8 signal ports) against
// a C++ model: a waiter is granted when what the granted higher-priority waiters leave of its
// semaphore is at least its count, takes subtract, signals add one each (with overflow), and a
// CSR write, applied last, sets a value.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <memory>
#include <random>

#include "Vsem_bank.h"
#include "tpuemu/spec/contract.h"
#include "verilated.h"

namespace {

namespace spec = tpuemu::spec;
constexpr unsigned kWaiters = 3;
constexpr unsigned kSignals = 8;
constexpr unsigned kSems = spec::kNumSems;
constexpr std::uint32_t kMax = (1u << spec::kSemWidth) - 1;

struct Inputs {
  std::array<bool, kWaiters> req{};
  std::array<unsigned, kWaiters> sem{};
  std::array<unsigned, kWaiters> cnt{};
  std::array<bool, kWaiters> take{};
  std::array<bool, kSignals> sig{};
  std::array<unsigned, kSignals> sig_sem{};
  bool csr_we = false;
  unsigned csr_sem = 0;
  std::uint32_t csr_value = 0;
};

struct Model {
  std::array<std::uint32_t, kSems> value{};

  std::array<bool, kWaiters> grants(const Inputs& in) const {
    std::array<bool, kWaiters> gnt{};
    for (unsigned w = 0; w < kWaiters; ++w) {
      std::int64_t left = value[in.sem[w]];
      for (unsigned v = 0; v < w; ++v) {
        if (gnt[v] && in.sem[v] == in.sem[w]) left -= in.cnt[v];
      }
      gnt[w] = in.req[w] && left >= static_cast<std::int64_t>(in.cnt[w]);
    }
    return gnt;
  }

  // Applies one clock edge; returns whether a signal overflowed a semaphore.
  bool step(const Inputs& in) {
    const auto gnt = grants(in);
    bool overflow = false;
    for (unsigned w = 0; w < kWaiters; ++w) {
      if (in.take[w] && gnt[w]) value[in.sem[w]] = (value[in.sem[w]] - in.cnt[w]) & kMax;
    }
    for (unsigned s = 0; s < kSignals; ++s) {
      if (!in.sig[s]) continue;
      const std::uint32_t sum = value[in.sig_sem[s]] + 1;
      if (sum > kMax) overflow = true;
      value[in.sig_sem[s]] = sum & kMax;
    }
    if (in.csr_we) value[in.csr_sem] = in.csr_value;
    return overflow;
  }
};

class SemBankTest : public ::testing::Test {
 protected:
  SemBankTest() : ctx_(std::make_unique<VerilatedContext>()) {
    m_ = std::make_unique<Vsem_bank>(ctx_.get());
    drive(Inputs{});
    m_->clk_i = 0;
    m_->clear_i = 0;
    m_->rst_ni = 0;
    m_->eval();
    tick();
    m_->rst_ni = 1;
    m_->eval();
  }
  ~SemBankTest() override { m_->final(); }

  void tick() {
    m_->clk_i = 1;
    m_->eval();
    m_->clk_i = 0;
    m_->eval();
  }

  void drive(const Inputs& in) {
    std::uint32_t req = 0, take = 0, sem = 0, cnt = 0, sig = 0;
    std::uint64_t sig_sem = 0;
    for (unsigned w = 0; w < kWaiters; ++w) {
      req |= std::uint32_t{in.req[w]} << w;
      take |= std::uint32_t{in.take[w]} << w;
      sem |= in.sem[w] << (5 * w);
      cnt |= in.cnt[w] << (8 * w);
    }
    for (unsigned s = 0; s < kSignals; ++s) {
      sig |= std::uint32_t{in.sig[s]} << s;
      sig_sem |= std::uint64_t{in.sig_sem[s]} << (5 * s);
    }
    m_->wait_req_i = req;
    m_->wait_sem_i = sem;
    m_->wait_cnt_i = cnt;
    m_->take_i = take;
    m_->sig_valid_i = sig;
    m_->sig_sem_i = sig_sem;
    m_->csr_we_i = in.csr_we;
    m_->csr_sem_i = in.csr_sem;
    m_->csr_wdata_i = in.csr_value;
    m_->eval();
  }

  std::uint32_t value(unsigned i) const {
    const std::uint32_t word = m_->value_o[i / 2];
    return (word >> (16 * (i % 2))) & 0xFFFF;
  }

  std::array<bool, kWaiters> grants() const {
    std::array<bool, kWaiters> g{};
    for (unsigned w = 0; w < kWaiters; ++w) g[w] = (m_->wait_gnt_o >> w) & 1;
    return g;
  }

  // One cycle: drive, compare grants and overflow with the model, clock, compare the values.
  void cycle(const Inputs& in) {
    drive(in);
    ASSERT_EQ(grants(), model_.grants(in));
    const bool overflow = model_.step(in);
    ASSERT_EQ(m_->overflow_o != 0, overflow);
    tick();
    for (unsigned i = 0; i < kSems; ++i) ASSERT_EQ(value(i), model_.value[i]) << "sem " << i;
  }

  void set(unsigned sem, std::uint32_t v) {
    Inputs in;
    in.csr_we = true;
    in.csr_sem = sem;
    in.csr_value = v;
    cycle(in);
  }

  std::unique_ptr<VerilatedContext> ctx_;
  std::unique_ptr<Vsem_bank> m_;
  Model model_;
};

TEST_F(SemBankTest, WaitIsGrantedAtCountAndTakeDecrements) {
  set(3, 5);
  Inputs in;
  in.req[0] = true;
  in.sem[0] = 3;
  in.cnt[0] = 6;
  drive(in);
  EXPECT_FALSE(m_->wait_gnt_o & 1) << "6 > 5";
  in.cnt[0] = 5;
  drive(in);
  EXPECT_TRUE(m_->wait_gnt_o & 1) << "5 >= 5";
  cycle(in);  // granted but not taken: nothing changes
  EXPECT_EQ(value(3), 5u);
  in.take[0] = true;
  in.cnt[0] = 2;
  cycle(in);
  EXPECT_EQ(value(3), 3u);
}

TEST_F(SemBankTest, PriorityIsDmaThenMxuThenVector) {
  set(7, 2);
  Inputs in;
  for (unsigned w = 0; w < kWaiters; ++w) {
    in.req[w] = true;
    in.sem[w] = 7;
    in.cnt[w] = 2;
  }
  drive(in);
  EXPECT_EQ(m_->wait_gnt_o, 0b001u);
  in.cnt = {1, 1, 1};
  drive(in);
  EXPECT_EQ(m_->wait_gnt_o, 0b011u);
  // A higher-priority waiter that cannot be satisfied does not block a lower one.
  in.cnt = {3, 2, 1};
  drive(in);
  EXPECT_EQ(m_->wait_gnt_o, 0b010u);
  in.req[1] = false;
  drive(in);
  EXPECT_EQ(m_->wait_gnt_o, 0b100u);
  // All granted ones take in one cycle.
  in.req = {true, true, true};
  in.cnt = {1, 1, 0};
  in.take = {true, true, true};
  cycle(in);
  EXPECT_EQ(value(7), 0u);
}

TEST_F(SemBankTest, SignalsAddUpAndCsrWriteWins) {
  Inputs in;
  for (unsigned s = 0; s < kSignals; ++s) {
    in.sig[s] = true;
    in.sig_sem[s] = s < 5 ? 4 : 9;
  }
  cycle(in);
  EXPECT_EQ(value(4), 5u);
  EXPECT_EQ(value(9), 3u);
  in.csr_we = true;
  in.csr_sem = 9;
  in.csr_value = 100;
  cycle(in);
  EXPECT_EQ(value(4), 10u);
  EXPECT_EQ(value(9), 100u);
}

TEST_F(SemBankTest, OverflowIsFlaggedAndWraps) {
  set(31, kMax);
  Inputs in;
  in.sig[6] = true;
  in.sig_sem[6] = 31;
  drive(in);
  EXPECT_TRUE(m_->overflow_o);
  cycle(in);
  EXPECT_EQ(value(31), 0u);
  drive(Inputs{});
  EXPECT_FALSE(m_->overflow_o);
}

TEST_F(SemBankTest, ClearZeroesEverySemaphore) {
  for (unsigned i = 0; i < kSems; ++i) set(i, i + 1);
  m_->clear_i = 1;
  tick();
  m_->clear_i = 0;
  m_->eval();
  for (unsigned i = 0; i < kSems; ++i) EXPECT_EQ(value(i), 0u);
}

TEST_F(SemBankTest, RandomTrafficMatchesModel) {
  std::mt19937 rng(0x5e3au);
  std::uniform_int_distribution<int> pct(0, 99);
  std::uniform_int_distribution<unsigned> few_sems(0, 3);  // few semaphores: many collisions
  std::uniform_int_distribution<unsigned> any_sem(0, kSems - 1);
  std::uniform_int_distribution<unsigned> small_cnt(0, 4);
  unsigned grants = 0;
  for (int c = 0; c < 5000; ++c) {
    Inputs in;
    for (unsigned w = 0; w < kWaiters; ++w) {
      in.req[w] = pct(rng) < 70;
      in.sem[w] = few_sems(rng);
      in.cnt[w] = small_cnt(rng);
      in.take[w] = pct(rng) < 60;
    }
    for (unsigned s = 0; s < kSignals; ++s) {
      in.sig[s] = pct(rng) < 15;
      in.sig_sem[s] = pct(rng) < 90 ? few_sems(rng) : any_sem(rng);
    }
    if (pct(rng) < 3) {
      in.csr_we = true;
      in.csr_sem = few_sems(rng);
      in.csr_value = pct(rng) < 10 ? kMax : static_cast<std::uint32_t>(pct(rng));
    }
    for (bool g : model_.grants(in)) grants += g;
    cycle(in);
    if (HasFatalFailure()) return;
  }
  EXPECT_GT(grants, 1000u);
}

}  // namespace
