// SPDX-License-Identifier: Apache-2.0
// The RTL is the arbiter of the core's element arithmetic: the Verilated small core (DIM 8) runs
// VQUANT and VADD at the extremes, and every element it writes is compared bit for bit with the
// one C++ definition, tpuemu/spec/arith.h, that the reference model, the fake backend and the TLM
// model call.
//   VQUANT: accumulators INT32_MIN + v (16384 accumulating MATMULs that wrap, then a small v),
//           zero, small values and +-2^17-ish rows; biases INT32_MIN, INT32_MAX, -1, ... that wrap
//           the int32 sum; scale +-(2^31-1), INT32_MIN, +-1; every shift 0 ... 63; ReLU off and
//           on; bias off and on: 1280 instructions, 51200 elements.
//   VADD:   every pair of 16 int8 values at and around the limits, ReLU off and on.
#include <gtest/gtest.h>

#include <climits>
#include <cstring>
#include <vector>

#include "core_fixture.h"
#include "tpuemu/spec/arith.h"

namespace tpuemu::test {
namespace {

namespace arith = spec::arith;
constexpr std::uint32_t kDim = 8;

Instruction op(Operation o, std::optional<Wait> wait = std::nullopt,
               std::optional<std::uint8_t> signal = std::nullopt) {
  return Instruction{.op = std::move(o), .wait = wait, .signal = signal};
}

Instruction dma(std::uint32_t hbm, std::uint32_t local, std::uint32_t len, DmaPath path,
                std::optional<Wait> wait = std::nullopt,
                std::optional<std::uint8_t> signal = std::nullopt) {
  return op(isa::Dma{.hbm_addr = hbm,
                     .local_addr = local,
                     .len = static_cast<std::uint16_t>(len),
                     .path = path},
            wait, signal);
}

// HBM byte addresses of the inputs and outputs, VMEM rows of the operands.
constexpr std::uint32_t kHbmBig = 0x0, kHbmSmall = 0x100, kHbmW0 = 0x1000, kHbmW1 = 0x1100,
                        kHbmBias = 0x2000;
constexpr std::uint32_t kHbmVaddA = 0x3000, kHbmVaddB = 0x4000, kHbmAcc = 0x10000,
                        kHbmOut = 0x100000;
constexpr std::uint32_t kVBig = 0, kVSmall = 8, kVW0 = 64, kVW1 = 72, kVBias = 80, kVA = 128,
                        kVB = 192;
constexpr std::uint32_t kVOut = 1024;  // VQUANT results, then VADD results

// ACC rows: 0 = INT32_MIN + kOffset[n]; 1 = 0; 2 = kSmall[n]; 3 = 2^17; 4 = 127 * -128 * 8.
constexpr std::uint32_t kAccRows = 5;
constexpr std::uint32_t kPasses = 16384;  // 8 * (-128)^2 = 2^17 per pass: 2^31 after 16384
constexpr std::int8_t kOffset[kDim] = {0, -1, 1, -2, 127, -128, 2, 64};
constexpr std::int8_t kSmall[kDim] = {1, -1, 127, -128, 0, 5, -5, 100};
constexpr std::int32_t kBias[kDim] = {INT32_MIN, INT32_MAX, 0,         -1,
                                      1,         INT32_MAX, INT32_MIN, 0x4000'0000};
constexpr std::int32_t kScales[] = {INT32_MAX, -INT32_MAX, INT32_MIN, 1, -1};

// VADD: all pairs of these, 256 lanes = 32 rows.
constexpr std::int8_t kAddValues[] = {-128, -127, -126, -65, -64, -2,  -1,  0,
                                      1,    2,    63,   64,  65,  100, 126, 127};
constexpr std::uint32_t kAddRows = 16 * 16 / kDim;

struct Quant {
  std::int32_t scale;
  unsigned shift;
  bool relu;
  bool bias;
};

std::vector<Quant> quant_grid() {
  std::vector<Quant> v;
  for (std::int32_t scale : kScales)
    for (unsigned shift = 0; shift < 64; ++shift)
      for (bool relu : {false, true})
        for (bool bias : {false, true}) v.push_back({scale, shift, relu, bias});
  return v;
}

class CoreArith : public ::testing::Test {
 protected:
  void SetUp() override {
    core_ = small_core();
    std::vector<std::int8_t> big(2 * kDim), small(4 * kDim, 0), w0(kDim * kDim, -128),
        w1(kDim * kDim, 0);
    // big row 0: all -128 (times W0: 2^17 per lane); row 1: kOffset (times the identity W1)
    for (std::uint32_t n = 0; n < kDim; ++n) {
      big[n] = -128;
      big[kDim + n] = kOffset[n];
      w1[n * kDim + n] = 1;
    }
    // small rows, in ACC rows 1 ... 4: zero (W1), kSmall (W1), then -128s and 127s (W0)
    for (std::uint32_t n = 0; n < kDim; ++n) {
      small[kDim + n] = kSmall[n];
      small[2 * kDim + n] = -128;
      small[3 * kDim + n] = 127;
    }
    std::vector<std::uint8_t> bias_bytes(sizeof kBias);
    std::memcpy(bias_bytes.data(), kBias,
                sizeof kBias);  // little-endian int32 lanes, as the contract's
    write_int8(*core_, kHbmBig, big);
    write_int8(*core_, kHbmSmall, small);
    write_int8(*core_, kHbmW0, w0);
    write_int8(*core_, kHbmW1, w1);
    core_->mem_write(kHbmBias, bias_bytes);

    // VADD operands: a[i] = kAddValues[i / 16], b[i] = kAddValues[i % 16]
    std::vector<std::int8_t> a(kAddRows * kDim), b(kAddRows * kDim);
    for (std::size_t i = 0; i < a.size(); ++i) {
      a[i] = kAddValues[i / 16];
      b[i] = kAddValues[i % 16];
    }
    write_int8(*core_, kHbmVaddA, a);
    write_int8(*core_, kHbmVaddB, b);
    add_a_ = a;
    add_b_ = b;

    // ACC as the model computes it: the MXU's arithmetic of the same header
    acc_model_.assign(kAccRows * kDim, 0);
    for (std::uint32_t n = 0; n < kDim; ++n) {
      std::int32_t x = 0;
      for (std::uint32_t i = 0; i < kPasses; ++i) {
        x = arith::acc_write(x, arith::mxu_lane(&big[0], &w0[n], kDim, kDim), i > 0);
      }
      acc_model_[n] = arith::acc_write(x, arith::mxu_lane(&big[kDim], &w1[n], kDim, kDim), true);
      acc_model_[kDim + n] = arith::mxu_lane(&small[0], &w1[n], kDim, kDim);
      acc_model_[2 * kDim + n] = arith::mxu_lane(&small[kDim], &w1[n], kDim, kDim);
      acc_model_[3 * kDim + n] = arith::mxu_lane(&small[2 * kDim], &w0[n], kDim, kDim);
      acc_model_[4 * kDim + n] = arith::mxu_lane(&small[3 * kDim], &w0[n], kDim, kDim);
    }
  }

  std::unique_ptr<sim::CoreSim> core_;
  std::vector<std::int32_t> acc_model_;
  std::vector<std::int8_t> add_a_, add_b_;
};

TEST_F(CoreArith, VquantAndVaddAtTheExtremesMatchTheHeaderBitForBit) {
  const std::vector<Quant> grid = quant_grid();
  const std::uint32_t quant_out_rows = static_cast<std::uint32_t>(grid.size()) * kAccRows;
  const std::uint32_t add_out = kVOut + quant_out_rows;
  ASSERT_LE(add_out + 2 * kAddRows, 8192u) << "the small preset's VMEM";

  Program p;
  p.push_back(dma(kHbmBig, kVBig, 2, DmaPath::HbmToVmem));
  p.push_back(dma(kHbmSmall, kVSmall, 4, DmaPath::HbmToVmem));
  p.push_back(dma(kHbmW0, kVW0, kDim, DmaPath::HbmToVmem));
  p.push_back(dma(kHbmW1, kVW1, kDim, DmaPath::HbmToVmem));
  p.push_back(dma(kHbmBias, kVBias, 4, DmaPath::HbmToVmem));
  p.push_back(dma(kHbmVaddA, kVA, kAddRows, DmaPath::HbmToVmem));
  p.push_back(dma(kHbmVaddB, kVB, kAddRows, DmaPath::HbmToVmem));
  p.push_back(op(isa::DmaNop{}, std::nullopt, 0));
  // the MXU: ACC row 0 wraps to INT32_MIN, then + kOffset; rows 1 ... 4 from one MATMUL each
  p.push_back(op(isa::LoadW{.vmem_row = kVW0, .bank = 0}, Wait{0, 1}));
  p.push_back(op(isa::LoadW{.vmem_row = kVW1, .bank = 1}));
  for (std::uint32_t i = 0; i < kPasses; ++i) {
    p.push_back(op(
        isa::Matmul{.vmem_row = kVBig, .acc_row = 0, .rows = 1, .bank = 0, .accumulate = i > 0}));
  }
  p.push_back(op(
      isa::Matmul{.vmem_row = kVBig + 1, .acc_row = 0, .rows = 1, .bank = 1, .accumulate = true}));
  p.push_back(op(isa::Matmul{.vmem_row = kVSmall, .acc_row = 1, .rows = 2, .bank = 1}));
  p.push_back(op(isa::Matmul{.vmem_row = kVSmall + 2, .acc_row = 3, .rows = 2, .bank = 0},
                 std::nullopt, 1));
  // ACC to HBM once the MXU is done; the fence after it releases the vector unit
  p.push_back(dma(kHbmAcc, 0, kAccRows, DmaPath::AccToHbm, Wait{1, 1}));
  p.push_back(op(isa::DmaNop{}, std::nullopt, 2));
  // the vector unit: the VQUANT grid over all ACC rows, then VADD of all pairs, ReLU off and on
  for (std::size_t i = 0; i < grid.size(); ++i) {
    const Quant& q = grid[i];
    p.push_back(op(isa::VQuant{.acc_row = 0,
                               .vmem_row = kVOut + static_cast<std::uint32_t>(i) * kAccRows,
                               .rows = kAccRows,
                               .scale = q.scale,
                               .shift = static_cast<std::uint8_t>(q.shift),
                               .relu = q.relu,
                               .bias = q.bias,
                               .bias_row = q.bias ? kVBias : 0},
                   i == 0 ? std::optional<Wait>(Wait{2, 1}) : std::nullopt));
  }
  p.push_back(op(
      isa::VAdd{.a_row = kVA, .b_row = kVB, .out_row = add_out, .rows = kAddRows, .relu = false}));
  p.push_back(op(isa::VAdd{
      .a_row = kVA, .b_row = kVB, .out_row = add_out + kAddRows, .rows = kAddRows, .relu = true}));
  p.push_back(op(isa::VecNop{}, std::nullopt, 3));
  p.push_back(dma(kHbmOut, kVOut, quant_out_rows + 2 * kAddRows, DmaPath::VmemToHbm, Wait{3, 1}));
  p.push_back(op(isa::End{}));
  const CoreRun run = run_core(*core_, p, 10'000'000);
  ASSERT_TRUE(run.done) << "error " << run.error_code << " at pc " << run.error_pc;

  // The accumulators the vector unit read: the extremes this test is about, as the MXU made them.
  const std::vector<std::int32_t> acc = read_int32(*core_, kHbmAcc, kAccRows * kDim);
  ASSERT_EQ(acc, acc_model_);
  ASSERT_EQ(acc[0], INT32_MIN);
  ASSERT_EQ(acc[1], INT32_MAX);
  ASSERT_EQ(acc[kDim], 0);

  const std::vector<std::uint8_t> out =
      read_mem(*core_, kHbmOut, std::size_t{quant_out_rows + 2 * kAddRows} * kDim);
  int bad = 0;
  std::size_t checked = 0;
  for (std::size_t i = 0; i < grid.size(); ++i) {
    const Quant& q = grid[i];
    for (std::size_t j = 0; j < kAccRows * kDim; ++j) {
      const std::int32_t bias = q.bias ? kBias[j % kDim] : 0;
      const std::int8_t want = q.bias ? arith::vquant_biased(acc[j], bias, q.scale, q.shift, q.relu)
                                      : arith::vquant(acc[j], q.scale, q.shift, q.relu);
      const auto got = static_cast<std::int8_t>(out[i * kAccRows * kDim + j]);
      ++checked;
      if (got != want && bad++ < 10) {
        ADD_FAILURE() << "VQUANT scale " << q.scale << " shift " << q.shift << " relu " << q.relu
                      << " bias " << q.bias << " (" << bias << "), acc " << acc[j] << " (row "
                      << j / kDim << " lane " << j % kDim << "): RTL " << int{got} << ", arith.h "
                      << int{want};
      }
    }
  }
  for (bool relu : {false, true}) {
    const std::size_t base = (std::size_t{quant_out_rows} + (relu ? kAddRows : 0)) * kDim;
    for (std::size_t j = 0; j < add_a_.size(); ++j) {
      const std::int8_t want = arith::vadd(add_a_[j], add_b_[j], relu);
      const auto got = static_cast<std::int8_t>(out[base + j]);
      ++checked;
      if (got != want && bad++ < 10) {
        ADD_FAILURE() << "VADD " << int{add_a_[j]} << " + " << int{add_b_[j]} << " relu " << relu
                      << ": RTL " << int{got} << ", arith.h " << int{want};
      }
    }
  }
  EXPECT_EQ(bad, 0) << "of " << checked << " elements";
  EXPECT_EQ(checked, grid.size() * kAccRows * kDim + 2 * add_a_.size());
}

// The one case where the rounding add wraps (x = scale = INT32_MIN, shift 63), and the bias wraps
// that reach it, are in the grid above; this pins that the grid really holds them, so that a
// change of the test's values cannot silently drop the extremes.
TEST(CoreArithGrid, HoldsTheWrappingCases) {
  const auto grid = quant_grid();
  bool wrap = false;
  for (const Quant& q : grid) wrap |= q.scale == INT32_MIN && q.shift == 63;
  EXPECT_TRUE(wrap);
  EXPECT_EQ(grid.size(), 5u * 64 * 2 * 2);
  EXPECT_EQ(arith::vquant(INT32_MIN, INT32_MIN, 63, false), -1);
  // x + bias wraps for ACC row 0 lane 0 (INT32_MIN + INT32_MIN) and row 1 lane 0 is INT32_MIN
  // itself
  EXPECT_EQ(arith::add_wrap32(INT32_MIN, kBias[0]), 0);
}

}  // namespace
}  // namespace tpuemu::test
