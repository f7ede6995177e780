// SPDX-License-Identifier: Apache-2.0
// Whole-core MXU tests on the small preset (DIM 8, 4 VMEM banks): shadow weights (a LOADW into
// one bank overlapping a long MATMUL on the other), the MXU's own ordering of LOADW and MATMUL on
// the same bank, MXU.NOP as a fence, and VMEM bank conflicts between the MXU and the DMA
// (counted, harmless) versus a single active port (none).
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "core_fixture.h"
#include "tpuemu/compile/reference.h"

namespace tpuemu::test {
namespace {

constexpr std::uint32_t kDim = 8;

template <typename T>
std::vector<T> slice(const std::vector<T>& v, std::size_t begin, std::size_t n) {
  return std::vector<T>(v.begin() + static_cast<std::ptrdiff_t>(begin), v.begin() + static_cast<std::ptrdiff_t>(begin + n));
}

// ------------------------------------------------------------------------------------------------
// Shadow weights
// ------------------------------------------------------------------------------------------------
TEST(CoreMxu, LoadwOfBankOneOverlapsALongMatmulOnBankZero) {
  constexpr std::uint32_t m = 96;
  std::mt19937 rng(31);
  const auto a = random_int8(m * kDim, rng);
  const auto w0 = random_int8(kDim * kDim, rng);
  const auto w1 = random_int8(kDim * kDim, rng);
  auto core = small_core();
  write_int8(*core, 0x0, a);
  write_int8(*core, 0x10000, w0);
  write_int8(*core, 0x10040, w1);
  const auto run = run_core(*core, assemble(
      "dma hbm=0x10000 local=1000 len=16 path=hbm2vmem signal=s1\n"  // both weight matrices
      "dma hbm=0x0 local=0 len=96 path=hbm2vmem signal=s0\n"
      "loadw vmem=1000 bank=0 wait=s1>=1\n"
      "matmul vmem=0 acc=0 rows=96 bank=0 wait=s0>=1 signal=s3\n"
      "loadw vmem=1008 bank=1\n"   // overlaps the MATMUL above
      "matmul vmem=0 acc=96 rows=96 bank=1 signal=s4\n"
      "dma hbm=0x20000 local=0 len=96 path=acc2hbm wait=s3>=1\n"
      "dma hbm=0x30000 local=96 len=96 path=acc2hbm wait=s4>=1\n"
      "end\n"));
  ASSERT_TRUE(run.done) << "error " << run.error_code;
  EXPECT_EQ(read_int32(*core, 0x20000, m * kDim), matmul_int8(a, w0, m, kDim, kDim));
  EXPECT_EQ(read_int32(*core, 0x30000, m * kDim), matmul_int8(a, w1, m, kDim, kDim));
  EXPECT_EQ(counter(*core, 1), 2 * m) << "MXU busy: one cycle per row";
  // only the first MATMUL may wait (for the first LOADW, DIM rows); the second finds bank 1 loaded
  EXPECT_LE(counter(*core, 3), kDim + 4) << "MXU stall waiting for weights";
  EXPECT_GE(counter(*core, 19), 2 * kDim) << "weight-load busy covers two loads";
  // the weight port shares VMEM banks with the data port: their conflicts are counted, and the
  // data port (highest priority) is never stalled
  EXPECT_EQ(counter(*core, 4), 0u);
}

TEST(CoreMxu, SecondMatmulDoesNotWaitForItsShadowLoad) {
  // Same program, but the timing is checked directly: the second MATMUL's rows enter the array
  // right after the first's. Compare a run with the LOADW of bank 1 before the first MATMUL
  // (nothing to overlap) and one after it (overlapped): the cycle counts are (nearly) equal.
  constexpr std::uint32_t m = 64;
  std::mt19937 rng(32);
  const auto a = random_int8(m * kDim, rng);
  const auto w = random_int8(2 * kDim * kDim, rng);
  std::uint64_t cycles[2] = {};
  for (int variant = 0; variant < 2; ++variant) {
    auto core = small_core();
    write_int8(*core, 0x0, a);
    write_int8(*core, 0x10000, w);
    const std::string loadw1 = "loadw vmem=1008 bank=1\n";
    const auto run = run_core(*core, assemble(
        "dma hbm=0x10000 local=1000 len=16 path=hbm2vmem signal=s1\n"
        "dma hbm=0x0 local=0 len=64 path=hbm2vmem signal=s0\n"
        "loadw vmem=1000 bank=0 wait=s1>=1\n" +
        std::string(variant == 0 ? loadw1 : "") +
        "matmul vmem=0 acc=0 rows=64 bank=0 wait=s0>=1\n" +
        std::string(variant == 1 ? loadw1 : "") +
        "matmul vmem=0 acc=64 rows=64 bank=1\n"
        "nop.mxu signal=s2\n"
        "dma hbm=0x20000 local=0 len=128 path=acc2hbm wait=s2>=1\n"
        "end\n"));
    ASSERT_TRUE(run.done);
    const auto got = read_int32(*core, 0x20000, 2 * m * kDim);
    EXPECT_EQ(slice(got, 0, m * kDim), matmul_int8(a, std::span(w).subspan(0, 64), m, kDim, kDim));
    EXPECT_EQ(slice(got, m * kDim, m * kDim), matmul_int8(a, std::span(w).subspan(64, 64), m, kDim, kDim));
    cycles[variant] = run.cycles;
  }
  EXPECT_LE(cycles[1], cycles[0] + 4) << "the overlapped weight load costs (almost) nothing";
}

TEST(CoreMxu, LoadwIntoTheBankInUseWaitsForItsRowsAndTheNextMatmulWaitsForTheLoad) {
  // No semaphores inside the MXU queue: the MXU orders LOADW and MATMUL on one bank itself.
  constexpr std::uint32_t m = 40;
  std::mt19937 rng(33);
  const auto a = random_int8(m * kDim, rng);
  const auto w0 = random_int8(kDim * kDim, rng);
  const auto w2 = random_int8(kDim * kDim, rng);
  auto core = small_core();
  write_int8(*core, 0x0, a);
  write_int8(*core, 0x10000, w0);
  write_int8(*core, 0x10040, w2);
  const auto run = run_core(*core, assemble(
      "dma hbm=0x0 local=0 len=40 path=hbm2vmem\n"
      "dma hbm=0x10000 local=1000 len=16 path=hbm2vmem\n"
      "nop.dma signal=s0\n"
      "loadw vmem=1000 bank=0 wait=s0>=1\n"
      "matmul vmem=0 acc=0 rows=40 bank=0\n"
      "loadw vmem=1008 bank=0\n"
      "matmul vmem=0 acc=40 rows=40 bank=0\n"
      "loadw vmem=1000 bank=0\n"
      "matmul vmem=0 acc=80 rows=1 bank=0\n"
      "nop.mxu signal=s1\n"
      "dma hbm=0x20000 local=0 len=81 path=acc2hbm wait=s1>=1\n"
      "end\n"));
  ASSERT_TRUE(run.done) << "error " << run.error_code;
  const auto got = read_int32(*core, 0x20000, (2 * m + 1) * kDim);
  const auto e0 = matmul_int8(a, w0, m, kDim, kDim);
  EXPECT_EQ(slice(got, 0, m * kDim), e0) << "first MATMUL used the old weights";
  EXPECT_EQ(slice(got, m * kDim, m * kDim), matmul_int8(a, w2, m, kDim, kDim)) << "second used the new";
  EXPECT_EQ(slice(got, 2 * m * kDim, kDim), slice(e0, 0, kDim)) << "third used W0 again";
  EXPECT_GT(counter(*core, 3), 0u) << "MATMULs waited for the loads of their bank";
}

TEST(CoreMxu, MxuNopWaitsUntilEarlierMatmulsCompleted) {
  constexpr std::uint32_t m = 128;
  std::mt19937 rng(34);
  const auto a = random_int8(m * kDim, rng);
  const auto w = random_int8(kDim * kDim, rng);
  auto core = small_core();
  write_int8(*core, 0x0, a);
  write_int8(*core, 0x10000, w);
  // setup: ACC rows [0, m) hold something else (all zero inputs)
  auto setup = run_core(*core, assemble("dma hbm=0x10000 local=1000 len=8 path=hbm2vmem signal=s0\n"
                                        "dma hbm=0x80000 local=0 len=128 path=hbm2vmem signal=s1\n"
                                        "loadw vmem=1000 wait=s0>=1\n"
                                        "matmul vmem=0 acc=0 rows=128 wait=s1>=1 signal=s2\n"
                                        "dma hbm=0x0 local=0 len=128 path=hbm2vmem wait=s2>=1\n"
                                        "nop.mxu\n"
                                        "end\n"));
  ASSERT_TRUE(setup.done);
  // the MATMUL signals nothing; only the NOP after it does
  const auto run = run_core(*core, assemble("matmul vmem=0 acc=0 rows=64\n"
                                            "matmul vmem=64 acc=64 rows=64\n"
                                            "nop.mxu signal=s5\n"
                                            "dma hbm=0x20000 local=0 len=128 path=acc2hbm wait=s5>=1\n"
                                            "end\n"));
  ASSERT_TRUE(run.done);
  EXPECT_EQ(read_int32(*core, 0x20000, m * kDim), matmul_int8(a, w, m, kDim, kDim));
  EXPECT_GT(counter(*core, 5), 2 * kDim) << "the DMA waited on the NOP's signal";
}

// ------------------------------------------------------------------------------------------------
// VMEM bank conflicts
// ------------------------------------------------------------------------------------------------
class CoreVmemBanks : public ::testing::Test {
 protected:
  static constexpr std::uint32_t m = 256;
  void SetUp() override {
    std::mt19937 rng(35);
    a_ = random_int8(m * kDim, rng);
    w_ = random_int8(kDim * kDim, rng);
    b_.resize(m * kDim);
    for (auto& x : b_) x = static_cast<std::uint8_t>(rng());
    core_ = small_core(/*latency=*/4);
    write_int8(*core_, 0x0, a_);
    write_int8(*core_, 0x10000, w_);
    core_->mem_write(0x40000, b_);
    const auto setup = run_core(*core_, assemble("dma hbm=0x0 local=0 len=256 path=hbm2vmem\n"
                                                 "dma hbm=0x10000 local=1024 len=8 path=hbm2vmem\n"
                                                 "nop.dma signal=s0\n"
                                                 "loadw vmem=1024 wait=s0>=1\n"
                                                 "nop.mxu\n"
                                                 "end\n"));
    ASSERT_TRUE(setup.done);
  }
  std::unique_ptr<sim::CoreSim> core_;
  std::vector<std::int8_t> a_, w_;
  std::vector<std::uint8_t> b_;
};

TEST_F(CoreVmemBanks, MxuAndDmaOnTheSameBanksConflictHarmlessly) {
  // The DMA writes VMEM rows [2048, 2304) while the MXU streams rows [0, 256): different rows,
  // the same four banks, no semaphore between them on purpose.
  const auto run = run_core(*core_, assemble("dma hbm=0x40000 local=2048 len=256 path=hbm2vmem\n"
                                             "matmul vmem=0 acc=0 rows=256 signal=s1\n"
                                             "nop.dma\n"
                                             "dma hbm=0x50000 local=2048 len=256 path=vmem2hbm\n"
                                             "dma hbm=0x60000 local=0 len=256 path=acc2hbm wait=s1>=1\n"
                                             "end\n"));
  ASSERT_TRUE(run.done);
  EXPECT_GT(counter(*core_, 14), 0u) << "VMEM bank conflicts";
  EXPECT_EQ(counter(*core_, 4), 0u) << "the MXU data port has priority";
  EXPECT_EQ(read_mem(*core_, 0x50000, b_.size()), b_);
  EXPECT_EQ(read_int32(*core_, 0x60000, m * kDim), matmul_int8(a_, w_, m, kDim, kDim));
}

TEST_F(CoreVmemBanks, StridedDmaIntoOneBankConflictsOftenAndHarmlessly) {
  // local_stride 4 keeps every DMA row in bank 0, which the MXU visits every fourth cycle:
  // the DMA (lowest priority) loses many times, the data still lands right.
  const auto run = run_core(*core_, assemble(
      "dma hbm=0x40000 local=2048 len=1 count=256 hbm_stride=8 local_stride=4 path=hbm2vmem\n"
      "matmul vmem=0 acc=0 rows=256 signal=s1\n"
      "matmul vmem=0 acc=256 rows=256\n"
      "nop.dma\n"
      "dma hbm=0x50000 local=2048 len=1 count=256 hbm_stride=8 local_stride=4 path=vmem2hbm\n"
      "dma hbm=0x60000 local=0 len=256 path=acc2hbm wait=s1>=1\n"
      "end\n"));
  ASSERT_TRUE(run.done);
  EXPECT_GT(counter(*core_, 14), 20u) << "VMEM bank conflicts";
  EXPECT_EQ(read_mem(*core_, 0x50000, b_.size()), b_);
  EXPECT_EQ(read_int32(*core_, 0x60000, m * kDim), matmul_int8(a_, w_, m, kDim, kDim));
  EXPECT_EQ(counter(*core_, 9), m * kDim);
  EXPECT_EQ(counter(*core_, 10), m * kDim);
}

TEST_F(CoreVmemBanks, OnlyTheMxuActiveHasNoConflicts) {
  const auto run = run_core(*core_, assemble("matmul vmem=0 acc=0 rows=256 signal=s1\n"
                                             "dma hbm=0x60000 local=0 len=256 path=acc2hbm wait=s1>=1\n"
                                             "end\n"));
  ASSERT_TRUE(run.done);
  EXPECT_EQ(counter(*core_, 14), 0u);
  EXPECT_EQ(read_int32(*core_, 0x60000, m * kDim), matmul_int8(a_, w_, m, kDim, kDim));
}

TEST_F(CoreVmemBanks, OnlyTheDmaActiveHasNoConflicts) {
  const auto run = run_core(*core_, assemble("dma hbm=0x40000 local=2048 len=256 path=hbm2vmem\n"
                                             "nop.dma\n"
                                             "dma hbm=0x50000 local=2048 len=256 path=vmem2hbm\n"
                                             "end\n"));
  ASSERT_TRUE(run.done);
  EXPECT_EQ(counter(*core_, 14), 0u);
  EXPECT_EQ(read_mem(*core_, 0x50000, b_.size()), b_);
}

TEST_F(CoreVmemBanks, VectorAndDmaConflictHarmlessly) {
  // VQUANT writes VMEM rows [4096, 4352) while the DMA reads rows [0, 256) out: same banks.
  // First fill ACC rows [0, 256) with A . W.
  auto fill = run_core(*core_, assemble("matmul vmem=0 acc=0 rows=256\nnop.mxu\nend\n"));
  ASSERT_TRUE(fill.done);
  const auto run = run_core(*core_, assemble("vquant acc=0 vmem=4096 rows=256 scale=3 shift=10 signal=s2\n"
                                             "dma hbm=0x50000 local=0 len=256 path=vmem2hbm\n"
                                             "dma hbm=0x70000 local=4096 len=256 path=vmem2hbm wait=s2>=1\n"
                                             "end\n"));
  ASSERT_TRUE(run.done);
  EXPECT_GT(counter(*core_, 14), 0u);
  EXPECT_EQ(counter(*core_, 21), 0u) << "the vector port outranks the DMA";
  const auto a_bytes = read_mem(*core_, 0x50000, m * kDim);
  EXPECT_EQ(std::vector<std::int8_t>(a_bytes.begin(), a_bytes.end()), a_);
  const auto q = read_mem(*core_, 0x70000, m * kDim);
  EXPECT_EQ(std::vector<std::int8_t>(q.begin(), q.end()), requantize(matmul_int8(a_, w_, m, kDim, kDim), 3, 10, false));
}

}  // namespace
}  // namespace tpuemu::test
