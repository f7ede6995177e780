// SPDX-License-Identifier: Apache-2.0
// Unit tests of rtl/common/sync_fifo.sv (Width 16, Depth 8) against std::deque.
//
// Cycle convention: the test drives the inputs of a cycle, evaluates, checks the outputs of that
// cycle (head, empty, full, count) and then applies the rising edge that ends the cycle.
#include <gtest/gtest.h>

#include <cstdint>
#include <deque>
#include <memory>
#include <random>

#include "Vsync_fifo.h"
#include "verilated.h"

namespace {

constexpr unsigned kDepth = 8;

class SyncFifoTest : public ::testing::Test {
 protected:
  SyncFifoTest() : ctx_(std::make_unique<VerilatedContext>()) {
    ctx_->fatalOnError(false);  // a failing assertion sets gotError() instead of aborting
    m_ = std::make_unique<Vsync_fifo>(ctx_.get());
    m_->clk_i = 0;
    m_->clear_i = 0;
    m_->push_i = 0;
    m_->pop_i = 0;
    m_->data_i = 0;
    m_->rst_ni = 0;
    m_->eval();
    tick();
    m_->rst_ni = 1;
    m_->eval();
  }
  ~SyncFifoTest() override { m_->final(); }

  void tick() {
    m_->clk_i = 1;
    m_->eval();
    m_->clk_i = 0;
    m_->eval();
  }

  // The outputs of this cycle must match the model before the edge.
  void expect_outputs(const char* where) {
    m_->eval();
    ASSERT_EQ(m_->count_o, model_.size()) << where;
    ASSERT_EQ(m_->empty_o != 0, model_.empty()) << where;
    ASSERT_EQ(m_->full_o != 0, model_.size() == kDepth) << where;
    if (!model_.empty()) {
      ASSERT_EQ(m_->data_o, model_.front()) << where;
    }
  }

  // One cycle: drive, check, clock, update the model.
  void cycle(bool push, std::uint16_t data, bool pop, bool clear = false) {
    m_->push_i = push;
    m_->data_i = data;
    m_->pop_i = pop;
    m_->clear_i = clear;
    expect_outputs("before edge");
    tick();
    if (clear) {
      model_.clear();
    } else {
      if (pop) model_.pop_front();
      if (push) model_.push_back(data);
    }
    m_->push_i = 0;
    m_->pop_i = 0;
    m_->clear_i = 0;
  }

  std::unique_ptr<VerilatedContext> ctx_;
  std::unique_ptr<Vsync_fifo> m_;
  std::deque<std::uint16_t> model_;
};

TEST_F(SyncFifoTest, ResetLeavesItEmpty) {
  m_->eval();
  EXPECT_TRUE(m_->empty_o);
  EXPECT_FALSE(m_->full_o);
  EXPECT_EQ(m_->count_o, 0u);
}

TEST_F(SyncFifoTest, FillsToFullAndDrainsInOrder) {
  for (unsigned i = 0; i < kDepth; ++i) cycle(true, static_cast<std::uint16_t>(0x100 + i), false);
  expect_outputs("full");
  EXPECT_TRUE(m_->full_o);
  EXPECT_EQ(m_->count_o, kDepth);
  // Push and pop together while full: the count stays, the order holds.
  cycle(true, 0xBEEF, true);
  EXPECT_TRUE(m_->full_o);
  for (unsigned i = 0; i < kDepth; ++i) {
    expect_outputs("drain");
    const std::uint16_t want = i + 1 < kDepth ? static_cast<std::uint16_t>(0x101 + i) : 0xBEEF;
    EXPECT_EQ(m_->data_o, want);
    cycle(false, 0, true);
  }
  expect_outputs("drained");
  EXPECT_TRUE(m_->empty_o);
  EXPECT_FALSE(ctx_->gotError());
}

TEST_F(SyncFifoTest, ClearEmptiesItAndWins) {
  for (unsigned i = 0; i < 5; ++i) cycle(true, static_cast<std::uint16_t>(i), false);
  cycle(true, 77, true, /*clear=*/true);  // a push and a pop in the cycle of a clear are dropped
  expect_outputs("after clear");
  EXPECT_TRUE(m_->empty_o);
  cycle(true, 42, false);
  expect_outputs("after clear and push");
  EXPECT_EQ(m_->data_o, 42u);
  EXPECT_EQ(m_->count_o, 1u);
}

TEST_F(SyncFifoTest, RandomPushPopMatchesDeque) {
  std::mt19937 rng(0xf1f0u);
  std::uniform_int_distribution<int> pct(0, 99);
  std::uniform_int_distribution<int> value(0, 0xFFFF);
  unsigned max_seen = 0;
  for (int c = 0; c < 20000; ++c) {
    // Vary the push/pop mix in phases so that both full and empty are visited often.
    const int push_pct = (c / 500) % 2 ? 70 : 35;
    bool push = pct(rng) < push_pct;
    bool pop = !model_.empty() && pct(rng) < 50;
    if (push && model_.size() == kDepth && !pop) push = false;  // never push into a full FIFO
    const bool clear = pct(rng) == 0 && c % 7 == 0;
    cycle(push, static_cast<std::uint16_t>(value(rng)), pop, clear);
    if (HasFatalFailure()) return;
    max_seen = std::max<unsigned>(max_seen, static_cast<unsigned>(model_.size()));
  }
  EXPECT_EQ(max_seen, kDepth);
  EXPECT_FALSE(ctx_->gotError());
}

// The protocol assertions (simulation only, --assert) catch misuse.
TEST_F(SyncFifoTest, AssertionCatchesPopWhileEmpty) {
  tick();  // the checks start with the second edge after reset (chk_en_q is set by the first)
  EXPECT_FALSE(ctx_->gotError());
  m_->pop_i = 1;
  tick();
  EXPECT_TRUE(ctx_->gotError());
}

TEST_F(SyncFifoTest, AssertionCatchesPushWhileFull) {
  for (unsigned i = 0; i < kDepth; ++i) cycle(true, 1, false);
  EXPECT_FALSE(ctx_->gotError());
  m_->push_i = 1;
  tick();
  EXPECT_TRUE(ctx_->gotError());
}

}  // namespace
