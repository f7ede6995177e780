// SPDX-License-Identifier: Apache-2.0
// Whole-core vector-unit tests on the small preset (DIM 8): VQUANT over accumulator rows that hold
// extreme int32 values (INT32_MIN and INT32_MAX reached by 16384 accumulating MATMULs that wrap),
// with immediate scale/shift/relu and with (scale, shift) read from SMEM written through the CSRs,
// compared bit-exactly with the reference requantize().
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

Instruction op(Operation o, std::optional<Wait> wait = std::nullopt,
               std::optional<std::uint8_t> signal = std::nullopt) {
  return Instruction{.op = std::move(o), .wait = wait, .signal = signal};
}

// ACC rows [0, kBigRows) hold values built by kPasses accumulating MATMULs (wrapping), rows
// [kBigRows, kAccRows) hold one ordinary MATMUL (small values, one all-zero row).
constexpr std::uint32_t kPasses = 16384;
constexpr std::uint32_t kBigRows = 4;
constexpr std::uint32_t kAccRows = 12;
constexpr std::uint32_t kAccOut = 0x80000;

class CoreVector : public ::testing::Test {
 protected:
  void SetUp() override {
    core_ = small_core();
    std::mt19937 rng(99);
    auto rnd = [&] { return static_cast<std::int8_t>(rng()); };
    // bank 0: columns 0 and 1 all -128, the rest random; bank 1: W1[0][0] = 0, W1[0][1] = -1
    std::vector<std::int8_t> w0(kDim * kDim), w1(kDim * kDim);
    for (std::uint32_t k = 0; k < kDim; ++k)
      for (std::uint32_t n = 0; n < kDim; ++n) {
        w0[k * kDim + n] = n < 2 ? std::int8_t{-128} : rnd();
        w1[k * kDim + n] = rnd();
      }
    w1[0] = 0;
    w1[1] = -1;
    // big rows: row 0 all -128 (lanes 0 and 1 get 8 * 16384 = 2^17 per pass, 2^31 after 16384)
    std::vector<std::int8_t> a_p(kBigRows * kDim), a_q(kBigRows * kDim), a_s((kAccRows - kBigRows) * kDim);
    for (auto& x : a_p) x = rnd();
    for (std::uint32_t k = 0; k < kDim; ++k) a_p[k] = -128;
    for (auto& x : a_q) x = rnd();
    for (std::uint32_t k = 0; k < kDim; ++k) a_q[k] = k == 0 ? 1 : 0;  // row 0 of Q = e0
    for (auto& x : a_s) x = rnd();
    for (std::uint32_t k = 0; k < kDim; ++k) a_s[2 * kDim + k] = 0;  // ACC row kBigRows+2 is zero
    write_int8(*core_, 0x0, a_p);
    write_int8(*core_, 0x100, a_q);
    write_int8(*core_, 0x200, a_s);
    write_int8(*core_, 0x1000, w0);
    write_int8(*core_, 0x1100, w1);

    Program p;
    auto dma = [](std::uint32_t hbm, std::uint32_t local, std::uint16_t len, DmaPath path,
                  std::optional<Wait> wait, std::optional<std::uint8_t> signal) {
      return op(isa::Dma{.hbm_addr = hbm, .local_addr = local, .len = len, .path = path}, wait, signal);
    };
    p.push_back(dma(0x0, 0, kBigRows, DmaPath::HbmToVmem, std::nullopt, std::nullopt));
    p.push_back(dma(0x100, 8, kBigRows, DmaPath::HbmToVmem, std::nullopt, std::nullopt));
    p.push_back(dma(0x200, 16, kAccRows - kBigRows, DmaPath::HbmToVmem, std::nullopt, std::nullopt));
    p.push_back(dma(0x1000, 64, kDim, DmaPath::HbmToVmem, std::nullopt, std::nullopt));
    p.push_back(dma(0x1100, 72, kDim, DmaPath::HbmToVmem, std::nullopt, std::nullopt));
    p.push_back(op(isa::DmaNop{}, std::nullopt, 0));
    p.push_back(op(isa::LoadW{.vmem_row = 64, .bank = 0}, Wait{0, 1}));
    p.push_back(op(isa::LoadW{.vmem_row = 72, .bank = 1}));
    for (std::uint32_t i = 0; i < kPasses; ++i) {
      p.push_back(op(isa::Matmul{.vmem_row = 0, .acc_row = 0, .rows = kBigRows, .bank = 0, .accumulate = i > 0}));
    }
    p.push_back(op(isa::Matmul{.vmem_row = 8, .acc_row = 0, .rows = kBigRows, .bank = 1, .accumulate = true}));
    p.push_back(op(isa::Matmul{.vmem_row = 16, .acc_row = kBigRows, .rows = kAccRows - kBigRows, .bank = 0},
                   std::nullopt, 1));
    p.push_back(dma(kAccOut, 0, kAccRows, DmaPath::AccToHbm, Wait{1, 1}, std::nullopt));
    p.push_back(op(isa::End{}));
    const auto run = run_core(*core_, p, 10'000'000);
    ASSERT_TRUE(run.done) << "error " << run.error_code << " at pc " << run.error_pc;

    // model of ACC, wrapping
    const auto pp = matmul_int8(a_p, w0, kBigRows, kDim, kDim);
    const auto qq = matmul_int8(a_q, w1, kBigRows, kDim, kDim);
    const auto ss = matmul_int8(a_s, w0, kAccRows - kBigRows, kDim, kDim);
    std::vector<std::int32_t> model(kAccRows * kDim);
    for (std::size_t i = 0; i < kBigRows * kDim; ++i) {
      const std::uint32_t v = static_cast<std::uint32_t>(pp[i]) * kPasses + static_cast<std::uint32_t>(qq[i]);
      model[i] = static_cast<std::int32_t>(v);
    }
    std::copy(ss.begin(), ss.end(), model.begin() + kBigRows * kDim);
    const auto bytes = read_mem(*core_, kAccOut, kAccRows * kDim * 4);
    acc_.resize(kAccRows * kDim);
    std::memcpy(acc_.data(), bytes.data(), bytes.size());
    ASSERT_EQ(acc_, model) << "accumulating MATMULs wrap modulo 2^32";
    ASSERT_EQ(acc_[0], INT32_MIN);
    ASSERT_EQ(acc_[1], INT32_MAX);
    ASSERT_EQ(counter(*core_, 1), kPasses * kBigRows + kAccRows) << "MXU busy: one cycle per row";
  }

  struct Params {
    std::int32_t scale;
    std::uint32_t shift;
    bool relu;
  };

  static std::vector<Params> params_list() {
    std::vector<Params> v = {
        {1, 0, false},          {1, 0, true},           {-1, 0, false},         {0, 0, false},
        {0, 7, true},           {INT32_MAX, 0, false},  {INT32_MIN, 0, false},  {INT32_MIN, 63, false},
        {INT32_MIN, 62, false}, {INT32_MIN, 63, true},  {INT32_MAX, 63, false}, {INT32_MAX, 62, true},
        {INT32_MAX, 40, false}, {1, 1, false},          {-1, 1, false},         {1, 31, false},
        {1, 32, false},         {3, 17, false},         {-3, 17, true},         {12345, 20, false},
        {12345, 20, true},      {-7777, 25, false},     {-7777, 25, true},      {1, 63, false},
    };
    std::mt19937 rng(5);
    for (int i = 0; i < 12; ++i) {
      v.push_back({static_cast<std::int32_t>(rng()), static_cast<std::uint32_t>(rng() % 64), (rng() & 1) != 0});
    }
    return v;
  }

  // Runs one VQUANT per parameter set over ACC rows [0, kAccRows) into VMEM, dumps VMEM and
  // compares with requantize() of the accumulator values read back.
  void run_and_check(const std::vector<Params>& list, bool from_smem) {
    constexpr std::uint32_t kVmemBase = 1024;
    constexpr std::uint32_t kOut = 0x100000;
    Program p;
    std::vector<std::uint32_t> smem_word(list.size());
    if (from_smem) {
      // random junk everywhere, then the pairs at word 3*i+1 (odd and even, crossing SMEM rows);
      // the shift word carries junk above bit 5, which must be ignored
      std::mt19937 rng(77);
      std::vector<std::uint32_t> smem(256);
      for (auto& w : smem) w = rng();
      for (std::size_t i = 0; i < list.size(); ++i) {
        smem_word[i] = static_cast<std::uint32_t>(3 * i + 1);
        smem[smem_word[i]] = static_cast<std::uint32_t>(list[i].scale);
        smem[smem_word[i] + 1] = list[i].shift | (rng() & ~0x3Fu);
      }
      core_->csr_write(csr::kSmemAddr, 0);
      for (auto w : smem) core_->csr_write(csr::kSmemData, w);
      core_->csr_write(csr::kSmemAddr, 0);
      for (std::size_t i = 0; i < smem.size(); ++i) ASSERT_EQ(core_->csr_read(csr::kSmemData), smem[i]);
    }
    for (std::size_t i = 0; i < list.size(); ++i) {
      isa::VQuant q{.acc_row = 0, .vmem_row = static_cast<std::uint32_t>(kVmemBase + kAccRows * i),
                    .rows = kAccRows, .relu = list[i].relu};
      if (from_smem) {
        q.smem_params = smem_word[i];
      } else {
        q.scale = list[i].scale;
        q.shift = static_cast<std::uint8_t>(list[i].shift);
      }
      p.push_back(op(q));
    }
    p.push_back(op(isa::VecNop{}, std::nullopt, 2));
    p.push_back(op(isa::Dma{.hbm_addr = kOut, .local_addr = kVmemBase,
                            .len = static_cast<std::uint16_t>(kAccRows * list.size()), .path = DmaPath::VmemToHbm},
                   Wait{2, 1}));
    p.push_back(op(isa::End{}));
    const auto run = run_core(*core_, p);
    ASSERT_TRUE(run.done) << "error " << run.error_code << " at pc " << run.error_pc;
    const auto got = read_mem(*core_, kOut, kAccRows * kDim * list.size());
    for (std::size_t i = 0; i < list.size(); ++i) {
      const auto want = requantize(acc_, list[i].scale, list[i].shift, list[i].relu);
      int bad = 0;
      for (std::size_t j = 0; j < want.size(); ++j) {
        const auto g = static_cast<std::int8_t>(got[i * want.size() + j]);
        if (g != want[j] && bad++ < 3) {
          ADD_FAILURE() << "scale " << list[i].scale << " shift " << list[i].shift << " relu " << list[i].relu
                        << ": ACC row " << j / kDim << " lane " << j % kDim << " = " << acc_[j] << ": got "
                        << int{g} << ", want " << int{want[j]};
        }
      }
    }
    EXPECT_EQ(counter(*core_, 18), kAccRows * list.size()) << "vector busy: one cycle per row";
    EXPECT_EQ(counter(*core_, 21), 0u) << "nothing else used VMEM";
  }

  std::unique_ptr<sim::CoreSim> core_;
  std::vector<std::int32_t> acc_;
};

TEST_F(CoreVector, ImmediateScaleShiftRelu) { run_and_check(params_list(), false); }

TEST_F(CoreVector, ParamsFromSmemWrittenThroughCsrs) { run_and_check(params_list(), true); }

TEST_F(CoreVector, ReluOnlyClampsNegatives) {
  // same scale/shift with and without ReLU: equal where non-negative, 0 where negative
  run_and_check({{-5, 3, false}, {-5, 3, true}, {5, 3, false}, {5, 3, true}}, false);
  const auto off = read_mem(*core_, 0x100000, kAccRows * kDim);
  const auto on = read_mem(*core_, 0x100000 + kAccRows * kDim, kAccRows * kDim);
  int negatives = 0;
  for (std::size_t j = 0; j < off.size(); ++j) {
    const auto o = static_cast<std::int8_t>(off[j]);
    EXPECT_EQ(static_cast<std::int8_t>(on[j]), o < 0 ? 0 : o);
    negatives += o < 0;
  }
  EXPECT_GT(negatives, 0);
}

}  // namespace
}  // namespace tpuemu::test
