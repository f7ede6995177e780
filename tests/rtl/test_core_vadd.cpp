// SPDX-License-Identifier: Apache-2.0
// Whole-core tests of VADD and of VQUANT's bias on the small preset (DIM 8), bit-exact against the
// reference (add_saturate, requantize with a bias): random rows with both saturations, ReLU, in
// place on a and on b, signal semantics (a signal fires when the last row is in VMEM, an empty
// VADD signals at issue) and the cycles per row; biased VQUANT with immediate and SMEM
// parameters, biases that wrap the int32 sum, and the 4-row bias load. Range errors are in
// test_core_errors.cpp.
#include <gtest/gtest.h>

#include <climits>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "core_fixture.h"
#include "tpuemu/compile/reference.h"

namespace tpuemu::test {
namespace {

constexpr std::uint32_t kDim = 8;
namespace cnt = spec::counter;

Instruction op(Operation o, std::optional<Wait> wait = std::nullopt,
               std::optional<std::uint8_t> signal = std::nullopt) {
  return Instruction{.op = std::move(o), .wait = wait, .signal = signal};
}

Instruction dma(std::uint32_t hbm, std::uint32_t local, std::uint32_t len, DmaPath path,
                std::optional<Wait> wait = std::nullopt, std::optional<std::uint8_t> signal = std::nullopt) {
  return op(isa::Dma{.hbm_addr = hbm, .local_addr = local, .len = static_cast<std::uint16_t>(len), .path = path},
            wait, signal);
}

std::vector<std::int8_t> as_int8(const std::vector<std::uint8_t>& v) {
  return std::vector<std::int8_t>(v.begin(), v.end());
}

// ---------------------------------------------------------------------------------------------
// VADD
// ---------------------------------------------------------------------------------------------

constexpr std::uint32_t kRows = 40;
constexpr std::uint32_t kA = 0, kB = 100, kOut = 200;  // VMEM rows
constexpr std::uint32_t kHbmA = 0x0, kHbmB = 0x1000, kHbmOut = 0x10000;

class CoreVadd : public ::testing::Test {
 protected:
  void SetUp() override {
    core_ = small_core();
    std::mt19937 rng(4242);
    a_ = random_int8(kRows * kDim, rng);
    b_ = random_int8(kRows * kDim, rng);
    // rows 0..3: saturation both ways and the exact limits
    for (std::uint32_t n = 0; n < kDim; ++n) {
      a_[0 * kDim + n] = 127, b_[0 * kDim + n] = static_cast<std::int8_t>(1 + 15 * n);   // > 127
      a_[1 * kDim + n] = -128, b_[1 * kDim + n] = static_cast<std::int8_t>(-1 - 15 * n);  // < -128
      a_[2 * kDim + n] = 100, b_[2 * kDim + n] = 27;                                   // 127 exactly
      a_[3 * kDim + n] = -100, b_[3 * kDim + n] = -28;                                 // -128 exactly
    }
    write_int8(*core_, kHbmA, a_);
    write_int8(*core_, kHbmB, b_);
  }

  // Loads a and b into VMEM rows kA and kB, runs `body` on the vector queue (it may wait on s0,
  // the loads' fence) and copies `out_rows` VMEM rows from `out` to kHbmOut once s3 is signalled.
  CoreRun run(const std::vector<Instruction>& body, std::uint32_t out, std::uint32_t out_rows) {
    Program p;
    p.push_back(dma(kHbmA, kA, kRows, DmaPath::HbmToVmem));
    p.push_back(dma(kHbmB, kB, kRows, DmaPath::HbmToVmem));
    p.push_back(op(isa::DmaNop{}, std::nullopt, 0));
    for (const auto& in : body) p.push_back(in);
    p.push_back(op(isa::VecNop{}, std::nullopt, 3));
    p.push_back(dma(kHbmOut, out, out_rows, DmaPath::VmemToHbm, Wait{3, 1}));
    p.push_back(op(isa::End{}));
    return run_core(*core_, p);
  }

  std::vector<std::int8_t> out(std::uint32_t rows) { return as_int8(read_mem(*core_, kHbmOut, rows * kDim)); }

  std::unique_ptr<sim::CoreSim> core_;
  std::vector<std::int8_t> a_, b_;
};

TEST_F(CoreVadd, RandomRowsSaturateBothWays) {
  for (const bool relu : {false, true}) {
    SCOPED_TRACE(relu ? "relu" : "no relu");
    const auto r = run({op(isa::VAdd{.a_row = kA, .b_row = kB, .out_row = kOut, .rows = kRows, .relu = relu},
                           Wait{0, 1})},
                       kOut, kRows);
    ASSERT_TRUE(r.done) << "error " << r.error_code << " at pc " << r.error_pc;
    const auto want = add_saturate(a_, b_, relu);
    ASSERT_EQ(out(kRows), want);
    // the rows built to saturate did
    EXPECT_EQ(want[0 * kDim + kDim - 1], 127);
    EXPECT_EQ(want[2 * kDim], 127);
    if (!relu) {
      EXPECT_EQ(want[1 * kDim + kDim - 1], -128);
      EXPECT_EQ(want[3 * kDim], -128);
    }
    // one VMEM port: read a, read b, write = 3 cycles per row (nothing else uses VMEM meanwhile)
    EXPECT_EQ(counter(*core_, cnt::vector_stall_bank_conflict), 0u);
    EXPECT_EQ(counter(*core_, cnt::vector_busy), 3u * kRows);
    EXPECT_EQ(counter(*core_, cnt::vector_add_rows), kRows);
  }
}

TEST_F(CoreVadd, InPlaceOnAAndOnB) {
  // out = a, then out = b on the result: b' = sat(b + sat(a + b)), checked row by row
  const auto r = run({op(isa::VAdd{.a_row = kA, .b_row = kB, .out_row = kA, .rows = kRows}, Wait{0, 1}),
                      op(isa::VAdd{.a_row = kA, .b_row = kB, .out_row = kB, .rows = kRows, .relu = true})},
                     kA, 2 * kRows + (kB - kA - kRows));
  ASSERT_TRUE(r.done) << "error " << r.error_code << " at pc " << r.error_pc;
  const auto got = out(2 * kRows + (kB - kA - kRows));
  const auto a1 = add_saturate(a_, b_, false);
  const auto b1 = add_saturate(a1, b_, true);
  EXPECT_EQ(std::vector<std::int8_t>(got.begin(), got.begin() + kRows * kDim), a1);
  EXPECT_EQ(std::vector<std::int8_t>(got.end() - kRows * kDim, got.end()), b1);
  EXPECT_EQ(counter(*core_, cnt::vector_add_rows), 2u * kRows);
}

TEST_F(CoreVadd, SignalsWhenTheLastRowIsWritten) {
  // The DMA that reads the result waits on the VADD's own signal (not on a fence): it must see
  // every row. An empty VADD signals at issue and writes nothing.
  Program p;
  p.push_back(dma(kHbmA, kA, kRows, DmaPath::HbmToVmem));
  p.push_back(dma(kHbmB, kB, kRows, DmaPath::HbmToVmem));
  p.push_back(op(isa::DmaNop{}, std::nullopt, 0));
  p.push_back(op(isa::VAdd{.a_row = kA, .b_row = kB, .out_row = kOut, .rows = kRows}, Wait{0, 1}, 4));
  p.push_back(op(isa::VAdd{.a_row = kA, .b_row = kB, .out_row = kOut + 1, .rows = 0}, std::nullopt, 5));
  p.push_back(dma(kHbmOut, kOut, kRows, DmaPath::VmemToHbm, Wait{4, 1}, 6));
  p.push_back(op(isa::End{}));
  const auto r = run_core(*core_, p);
  ASSERT_TRUE(r.done) << "error " << r.error_code << " at pc " << r.error_pc;
  EXPECT_EQ(out(kRows), add_saturate(a_, b_, false));
  EXPECT_EQ(core_->csr_read(csr::sem(4)), 0u) << "taken by the DMA";
  EXPECT_EQ(core_->csr_read(csr::sem(5)), 1u);
  EXPECT_EQ(core_->csr_read(csr::sem(6)), 1u);
  EXPECT_EQ(counter(*core_, cnt::vector_add_rows), kRows);
}

TEST_F(CoreVadd, LosesBanksToTheMxuAndStillAddsExactly) {
  // MATMULs read VMEM rows on port 0 while the VADD runs: every lost grant is one more busy cycle.
  Program p;
  p.push_back(dma(kHbmA, kA, kRows, DmaPath::HbmToVmem));
  p.push_back(dma(kHbmB, kB, kRows, DmaPath::HbmToVmem));
  p.push_back(op(isa::DmaNop{}, std::nullopt, 0));
  p.push_back(op(isa::LoadW{.vmem_row = kA, .bank = 0}, Wait{0, 1}, 1));
  for (std::uint32_t k = 0; k < 8; ++k) {
    p.push_back(op(isa::Matmul{.vmem_row = kB + k, .acc_row = 0, .rows = 32, .bank = 0},
                   k == 0 ? std::optional<Wait>(Wait{2, 1}) : std::nullopt));
  }
  p.push_back(op(isa::VecNop{}, Wait{1, 1}, 2));
  p.push_back(op(isa::VAdd{.a_row = kA, .b_row = kB, .out_row = kOut, .rows = kRows}, std::nullopt, 3));
  p.push_back(dma(kHbmOut, kOut, kRows, DmaPath::VmemToHbm, Wait{3, 1}));
  p.push_back(op(isa::End{}));
  const auto r = run_core(*core_, p);
  ASSERT_TRUE(r.done) << "error " << r.error_code << " at pc " << r.error_pc;
  EXPECT_EQ(out(kRows), add_saturate(a_, b_, false));
  const std::uint64_t lost = counter(*core_, cnt::vector_stall_bank_conflict);
  EXPECT_GT(lost, 0u);
  EXPECT_EQ(counter(*core_, cnt::vector_busy), 3u * kRows + lost);
}

// ---------------------------------------------------------------------------------------------
// VQUANT with bias
// ---------------------------------------------------------------------------------------------

constexpr std::uint32_t kAccRows = 24;
constexpr std::uint32_t kBiasSets = 4;
constexpr std::uint32_t kBiasRow = 128;  // VMEM rows of bias set i: kBiasRow + 4i .. +3
constexpr std::uint32_t kQuantOut = 1024;
constexpr std::uint32_t kHbmAcc = 0x20000, kHbmQ = 0x30000, kHbmBias = 0x3000;

struct BiasCase {
  std::int32_t scale;
  std::uint32_t shift;
  bool relu;
  std::uint32_t bias_set;
  bool from_smem;
};

class CoreVquantBias : public ::testing::Test {
 protected:
  void SetUp() override {
    core_ = small_core();
    std::mt19937 rng(1234);
    x_ = random_int8(kAccRows * kDim, rng);
    w_ = random_int8(kDim * kDim, rng);
    // bias sets: random full-range; extremes that wrap the int32 sum; zero; small
    bias_.assign(kBiasSets, std::vector<std::int32_t>(kDim));
    for (auto& v : bias_[0]) v = static_cast<std::int32_t>(rng());
    for (std::uint32_t n = 0; n < kDim; ++n) bias_[1][n] = n % 2 ? INT32_MAX : INT32_MIN;
    for (std::uint32_t n = 0; n < kDim; ++n) bias_[3][n] = static_cast<std::int32_t>(rng() % 20001) - 10000;
    std::vector<std::uint8_t> bytes(kBiasSets * 4 * kDim);
    for (std::uint32_t i = 0; i < kBiasSets; ++i) std::memcpy(bytes.data() + i * 4 * kDim, bias_[i].data(), 4 * kDim);
    write_int8(*core_, 0x0, x_);
    write_int8(*core_, 0x1000, w_);
    core_->mem_write(kHbmBias, bytes);
  }

  // Loads x, W and the bias sets, one MATMUL into ACC rows [0, kAccRows), the ACC rows out to
  // kHbmAcc, one VQUANT per case, and the results out to kHbmQ; checks them against requantize().
  void run_and_check(const std::vector<BiasCase>& cases) {
    std::mt19937 rng(8);
    std::vector<std::uint32_t> smem(256);
    for (auto& w : smem) w = rng();
    for (std::size_t i = 0; i < cases.size(); ++i) {
      smem[2 * i + 3] = static_cast<std::uint32_t>(cases[i].scale);
      smem[2 * i + 4] = cases[i].shift | (rng() & ~0x3Fu);
    }
    core_->csr_write(csr::kSmemAddr, 0);
    for (auto w : smem) core_->csr_write(csr::kSmemData, w);

    Program p;
    p.push_back(dma(0x0, 0, kAccRows, DmaPath::HbmToVmem));
    p.push_back(dma(0x1000, 64, kDim, DmaPath::HbmToVmem));
    p.push_back(dma(kHbmBias, kBiasRow, 4 * kBiasSets, DmaPath::HbmToVmem));
    p.push_back(op(isa::DmaNop{}, std::nullopt, 0));
    p.push_back(op(isa::LoadW{.vmem_row = 64, .bank = 0}, Wait{0, 1}));
    p.push_back(op(isa::Matmul{.vmem_row = 0, .acc_row = 0, .rows = kAccRows, .bank = 0}, std::nullopt, 1));
    p.push_back(op(isa::MxuNop{}, std::nullopt, 2));
    p.push_back(dma(kHbmAcc, 0, kAccRows, DmaPath::AccToHbm, Wait{1, 1}));
    for (std::size_t i = 0; i < cases.size(); ++i) {
      const BiasCase& c = cases[i];
      isa::VQuant q{.acc_row = 0, .vmem_row = static_cast<std::uint32_t>(kQuantOut + kAccRows * i),
                    .rows = kAccRows, .relu = c.relu, .bias = true, .bias_row = kBiasRow + 4 * c.bias_set};
      if (c.from_smem) {
        q.smem_params = static_cast<std::uint32_t>(2 * i + 3);
      } else {
        q.scale = c.scale;
        q.shift = static_cast<std::uint8_t>(c.shift);
      }
      p.push_back(op(q, i == 0 ? std::optional<Wait>(Wait{2, 1}) : std::nullopt));
    }
    p.push_back(op(isa::VecNop{}, std::nullopt, 3));
    p.push_back(dma(kHbmQ, kQuantOut, static_cast<std::uint32_t>(kAccRows * cases.size()), DmaPath::VmemToHbm,
                    Wait{3, 1}));
    p.push_back(op(isa::End{}));
    const auto r = run_core(*core_, p);
    ASSERT_TRUE(r.done) << "error " << r.error_code << " at pc " << r.error_pc;

    const auto acc = read_int32(*core_, kHbmAcc, kAccRows * kDim);
    ASSERT_EQ(acc, matmul_int8(x_, w_, kAccRows, kDim, kDim));
    const auto got = as_int8(read_mem(*core_, kHbmQ, kAccRows * kDim * cases.size()));
    for (std::size_t i = 0; i < cases.size(); ++i) {
      const BiasCase& c = cases[i];
      SCOPED_TRACE(::testing::Message() << "case " << i << ": scale " << c.scale << " shift " << c.shift
                                        << " relu " << c.relu << " bias set " << c.bias_set << " smem "
                                        << c.from_smem);
      const auto want = requantize(acc, bias_[c.bias_set], c.scale, c.shift, c.relu);
      EXPECT_EQ(std::vector<std::int8_t>(got.begin() + i * want.size(), got.begin() + (i + 1) * want.size()), want);
    }
    // the bias load costs 5 cycles (4 reads, the last one's data a cycle later) before the rows
    EXPECT_EQ(counter(*core_, cnt::vector_stall_bank_conflict), 0u);
    EXPECT_EQ(counter(*core_, cnt::vector_busy), (kAccRows + 5) * cases.size());
  }

  std::unique_ptr<sim::CoreSim> core_;
  std::vector<std::int8_t> x_, w_;
  std::vector<std::vector<std::int32_t>> bias_;
};

std::vector<BiasCase> bias_cases(bool from_smem) {
  std::vector<BiasCase> v = {
      {1, 0, false, 3, from_smem},     {1, 0, true, 3, from_smem},      {3, 10, false, 3, from_smem},
      {1, 24, false, 0, from_smem},    {-1, 24, true, 0, from_smem},    {1, 31, false, 1, from_smem},
      {-1, 31, false, 1, from_smem},   {12345, 20, false, 2, from_smem}, {INT32_MAX, 62, false, 1, from_smem},
      {INT32_MIN, 63, false, 0, from_smem},
  };
  std::mt19937 rng(from_smem ? 31 : 30);
  for (int i = 0; i < 8; ++i) {
    v.push_back({static_cast<std::int32_t>(rng()), static_cast<std::uint32_t>(rng() % 64), (rng() & 1) != 0,
                 static_cast<std::uint32_t>(rng() % kBiasSets), from_smem});
  }
  return v;
}

TEST_F(CoreVquantBias, ImmediateParams) { run_and_check(bias_cases(false)); }

TEST_F(CoreVquantBias, SmemParams) { run_and_check(bias_cases(true)); }

TEST_F(CoreVquantBias, ZeroBiasEqualsNoBiasAndEveryLaneHasItsOwn) {
  run_and_check({{5, 6, false, 2, false}, {5, 6, false, 3, false}});
  const auto acc = read_int32(*core_, kHbmAcc, kAccRows * kDim);
  const auto got = as_int8(read_mem(*core_, kHbmQ, 2 * kAccRows * kDim));
  EXPECT_EQ(std::vector<std::int8_t>(got.begin(), got.begin() + kAccRows * kDim), requantize(acc, 5, 6, false));
  // lane n of set 3 shifts lane n only: the biased result differs from the unbiased in every lane
  // whose bias rounds to a nonzero step
  std::uint32_t lanes_moved = 0;
  for (std::uint32_t n = 0; n < kDim; ++n) lanes_moved += requantize(0, bias_[3][n], 5, 6, false) != 0;
  EXPECT_GT(lanes_moved, kDim / 2);
}

}  // namespace
}  // namespace tpuemu::test
