// SPDX-License-Identifier: Apache-2.0
// Unit tests of rtl/mem/vmem.sv (Dim 8, 256 rows in 4 banks, 4 ports) against a C++ model: row r
// lives in bank r % 4; per bank the lowest requesting port wins and every other requester of that
// bank is denied and counted as a conflict; a granted read returns its row one cycle later.
//
// Cycle convention: the test drives a cycle's requests, evaluates, checks grants and conflicts of
// that cycle and the read data due in it, then applies the rising edge.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <vector>

#include "Vvmem.h"
#include "verilated.h"

namespace {

constexpr unsigned kRows = 256;
constexpr unsigned kBanks = 4;
constexpr unsigned kPorts = 4;

struct Req {
  bool valid = false;
  bool write = false;
  unsigned addr = 0;
  std::uint64_t data = 0;
};
using Cycle = std::array<Req, kPorts>;

class VmemTest : public ::testing::Test {
 protected:
  VmemTest() : ctx_(std::make_unique<VerilatedContext>()), mem_(kRows, 0) {
    m_ = std::make_unique<Vvmem>(ctx_.get());
    m_->clk_i = 0;
    m_->req_i = 0;
    m_->rst_ni = 0;
    m_->eval();
    tick();
    m_->rst_ni = 1;
    m_->eval();
    // The SRAM has no reset: give every row a known value first, one bank per port.
    for (unsigned r = 0; r < kRows; r += kPorts) {
      Cycle c;
      for (unsigned p = 0; p < kPorts; ++p) c[p] = {true, true, r + p, 0x1111'0000'0000'0000ull + r + p};
      step(c);
    }
  }
  ~VmemTest() override { m_->final(); }

  void tick() {
    m_->clk_i = 1;
    m_->eval();
    m_->clk_i = 0;
    m_->eval();
  }

  static std::array<bool, kPorts> model_grants(const Cycle& c) {
    std::array<bool, kPorts> g{};
    for (unsigned p = 0; p < kPorts; ++p) {
      g[p] = c[p].valid;
      for (unsigned q = 0; q < p; ++q) {
        if (c[q].valid && c[q].addr % kBanks == c[p].addr % kBanks) g[p] = false;
      }
    }
    return g;
  }

  // One cycle; returns the grants the RTL gave.
  std::array<bool, kPorts> step(const Cycle& c) {
    std::uint32_t req = 0, we = 0, addr = 0;
    for (unsigned p = 0; p < kPorts; ++p) {
      req |= std::uint32_t{c[p].valid} << p;
      we |= std::uint32_t{c[p].write} << p;
      addr |= c[p].addr << (8 * p);
      m_->wdata_i[2 * p] = static_cast<std::uint32_t>(c[p].data);
      m_->wdata_i[2 * p + 1] = static_cast<std::uint32_t>(c[p].data >> 32);
    }
    m_->req_i = req;
    m_->we_i = we;
    m_->addr_i = addr;
    m_->eval();

    // read data due in this cycle: the reads granted in the previous one
    for (unsigned p = 0; p < kPorts; ++p) {
      EXPECT_EQ(static_cast<unsigned>((m_->rvalid_o >> p) & 1), pending_[p].has_value() ? 1u : 0u) << "port " << p;
      if (pending_[p]) {
        const std::uint64_t got =
            std::uint64_t{m_->rdata_o[2 * p]} | (std::uint64_t{m_->rdata_o[2 * p + 1]} << 32);
        EXPECT_EQ(got, *pending_[p]) << "port " << p;
      }
    }
    const auto want = model_grants(c);
    std::array<bool, kPorts> got{};
    unsigned conflicts = 0;
    for (unsigned p = 0; p < kPorts; ++p) {
      got[p] = (m_->gnt_o >> p) & 1;
      EXPECT_EQ(got[p], want[p]) << "port " << p;
      conflicts += c[p].valid && !want[p];
    }
    EXPECT_EQ(m_->conflicts_o, conflicts);

    tick();
    for (unsigned p = 0; p < kPorts; ++p) {
      pending_[p].reset();
      if (!want[p]) continue;
      if (c[p].write) {
        mem_[c[p].addr] = c[p].data;
      } else {
        pending_[p] = mem_[c[p].addr];  // banks differ, so no write of this cycle can hit it
      }
    }
    return got;
  }

  std::unique_ptr<VerilatedContext> ctx_;
  std::unique_ptr<Vvmem> m_;
  std::vector<std::uint64_t> mem_;
  std::array<std::optional<std::uint64_t>, kPorts> pending_{};
};

TEST_F(VmemTest, SameBankGoesToTheLowestPort) {
  Cycle c;
  c[0] = {true, false, 4};   // bank 0
  c[1] = {true, false, 8};   // bank 0: conflict
  c[2] = {true, true, 12, 7};  // bank 0: conflict
  c[3] = {true, false, 1};   // bank 1
  const auto g = step(c);
  EXPECT_EQ(g, (std::array<bool, kPorts>{true, false, false, true}));
  c[0].valid = false;  // port 1 now wins bank 0
  EXPECT_EQ(step(c), (std::array<bool, kPorts>{false, true, false, true}));
}

TEST_F(VmemTest, AllBanksDifferentMeansNoConflict) {
  Cycle c;
  for (unsigned p = 0; p < kPorts; ++p) c[p] = {true, p % 2 == 0, 40 + p, 0xabc0u + p};
  EXPECT_EQ(step(c), (std::array<bool, kPorts>{true, true, true, true}));
  step(Cycle{});
}

TEST_F(VmemTest, ReadReturnsOneCycleAfterTheGrantWithTheWrittenData) {
  Cycle w;
  w[3] = {true, true, 77, 0x0123'4567'89ab'cdefull};
  step(w);
  Cycle r;
  r[2] = {true, false, 77};
  step(r);  // the data is checked in the next cycle, not in this one
  step(Cycle{});
  Cycle idle;
  step(idle);  // rvalid is a one-cycle pulse
}

TEST_F(VmemTest, RandomTrafficMatchesModel) {
  std::mt19937 rng(0x7e3u);
  std::uniform_int_distribution<int> pct(0, 99);
  std::uniform_int_distribution<unsigned> row(0, kRows - 1);
  std::uniform_int_distribution<std::uint64_t> data;
  unsigned conflicts = 0;
  for (int n = 0; n < 5000; ++n) {
    Cycle c;
    for (unsigned p = 0; p < kPorts; ++p) {
      c[p] = {pct(rng) < 60, pct(rng) < 40, row(rng), data(rng)};
    }
    const auto g = step(c);
    for (unsigned p = 0; p < kPorts; ++p) conflicts += c[p].valid && !g[p];
    if (HasFailure()) return;
  }
  EXPECT_GT(conflicts, 500u);
  // Read every row back through port 0 and compare with the model.
  for (unsigned r = 0; r < kRows; ++r) {
    Cycle c;
    c[0] = {true, false, r};
    step(c);
  }
  step(Cycle{});
}

}  // namespace
