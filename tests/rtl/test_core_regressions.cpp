// SPDX-License-Identifier: Apache-2.0
// Regressions: each test reproduces an RTL or harness bug found by verification (semaphore
// priority, SMEM port sharing, soft reset and restart with memory traffic in flight, programs at
// the top of HBM). They failed before the fixes.
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "core_fixture.h"

namespace tpuemu::test {
namespace {

TEST(CoreRegression, UnsatisfiableDmaWaitMustNotBlockMxuOnSameSemaphore) {
  auto core = small_core();
  const auto run = run_core(*core, assemble("nop.vec signal=s3\n"
                                            "nop.dma wait=s3>=2\n"
                                            "nop.mxu wait=s3>=1 signal=s4\n"
                                            "nop.vec wait=s4>=1 signal=s3\n"
                                            "nop.vec signal=s3\n"
                                            "end\n"));
  EXPECT_TRUE(run.done) << "error " << run.error_code;
  EXPECT_EQ(core->csr_read(csr::sem(3)), 0u);
}

TEST(CoreRegression, SmemToHbmWhileHbmToSmemDrains) {
  auto core = small_core(20);
  std::mt19937 rng(1);
  std::vector<std::uint8_t> a(64 * 8), b(64 * 8);
  for (auto& x : a) x = static_cast<std::uint8_t>(rng());
  for (auto& x : b) x = static_cast<std::uint8_t>(rng());
  core->mem_write(0x0, a);
  core->mem_write(0x1000, b);
  auto r1 = run_core(*core, assemble("dma hbm=0x1000 local=64 len=64 path=hbm2smem\nend\n"));
  ASSERT_TRUE(r1.done);
  // independent: load SMEM rows 0..15 while storing rows 64..79
  const auto run = run_core(*core, assemble("dma hbm=0x0 local=0 len=64 path=hbm2smem\n"
                                            "dma hbm=0x2000 local=64 len=64 path=smem2hbm\n"
                                            "end\n"));
  ASSERT_TRUE(run.done);
  const auto got = read_mem(*core, 0x2000, b.size());
  for (int r = 0; r < 64; ++r) {
    if (std::memcmp(&got[r * 8], &b[r * 8], 8) == 0) continue;
    int src = -1;
    for (int q = 0; q < 64; ++q) if (std::memcmp(&got[r * 8], &a[q * 8], 8) == 0) src = q;
    int srcb = -1;
    for (int q = 0; q < 64; ++q) if (std::memcmp(&got[r * 8], &b[q * 8], 8) == 0) srcb = q;
    std::uint64_t v; std::memcpy(&v, &got[r * 8], 8);
    ADD_FAILURE() << "row " << 64 + r << " holds HBM->SMEM row " << src << " b row " << srcb << " value " << std::hex << v;
  }
}

TEST(CoreRegression, SoftResetRightAfterAnErrorThenAProgramRuns) {
  auto core = small_core(40);
  Program p = assemble("nop.dma\nnop.dma\nnop.dma\nend\n");
  auto bytes = p.to_bytes();
  bytes[2 * 32] = 0x55;
  core->mem_write(kProgramBase, bytes);
  core->csr_write(csr::kProgBase, kProgramBase);
  core->csr_write(csr::kCtrl, 1);
  core->step(10000, true);
  EXPECT_EQ((core->csr_read(csr::kStatus) >> 8) & 0xFF, 1u);
  core->csr_write(csr::kCtrl, 2);  // soft reset
  EXPECT_EQ(core->csr_read(csr::kStatus), 0u);
  std::vector<std::uint8_t> d(64, 0x5A);
  core->mem_write(0x0, d);
  const auto run = run_core(*core, assemble("dma hbm=0x0 local=0 len=8 path=hbm2vmem\nnop.dma\n"
                                            "dma hbm=0x800 local=0 len=8 path=vmem2hbm\nend\n"), 20000);
  EXPECT_TRUE(run.done) << "error " << run.error_code << " cycles " << run.cycles;
  EXPECT_EQ(read_mem(*core, 0x800, 64), d);
}

TEST(CoreRegression, StartRightAfterAnErrorRunsTheNewProgram) {
  auto core = small_core(40);
  Program p = assemble("nop.dma\nnop.dma\nnop.dma\nnop.dma\nnop.dma\nnop.dma\nend\n");
  auto bytes = p.to_bytes();
  bytes[1 * 32] = 0x55;
  core->mem_write(kProgramBase, bytes);
  core->csr_write(csr::kProgBase, kProgramBase);
  core->csr_write(csr::kCtrl, 1);
  core->step(10000, true);
  EXPECT_EQ((core->csr_read(csr::kStatus) >> 8) & 0xFF, 1u);
  std::vector<std::uint8_t> d(64, 0x5A);
  core->mem_write(0x0, d);
  Program q = assemble("dma hbm=0x0 local=0 len=8 path=hbm2vmem\nnop.dma\n"
                       "dma hbm=0x800 local=0 len=8 path=vmem2hbm\nend\n");
  const auto qb = q.to_bytes();
  core->mem_write(0x200000, qb);
  core->csr_write(csr::kProgBase, 0x200000);
  core->csr_write(csr::kCtrl, 1);
  core->step(20000, true);
  const auto st = core->csr_read(csr::kStatus);
  EXPECT_EQ(st & 7u, 2u) << "status " << std::hex << st;
  EXPECT_EQ(read_mem(*core, 0x800, 64), d);
  EXPECT_EQ(counter(*core, 15), 3u);
}

}  // namespace
}  // namespace tpuemu::test
namespace tpuemu::test {
namespace {
TEST(CoreRegression, SoftResetWhileDmaWritesAreAcked) {
  auto core = small_core(1);
  const auto run = run_core(*core, assemble("dma hbm=0x4000 local=0 len=64 path=vmem2hbm\n"
                                            "matmul vmem=8190 acc=0 rows=8\nend\n"));
  EXPECT_EQ(run.error_code, 3u);
  core->csr_write(csr::kCtrl, 2);
  const auto again = run_core(*core, assemble("nop.dma\nend\n"), 20000);
  EXPECT_TRUE(again.done) << "error " << again.error_code << " cycles " << again.cycles
                          << " queue state " << std::hex << core->csr_read(csr::kQueueState);
}
}  // namespace
}  // namespace tpuemu::test
namespace tpuemu::test {
namespace {
TEST(CoreRegression, TwoCoresAliveDestroyNewerFirst) {
  auto a = small_core();
  {
    auto b = small_core();
  }
  const auto run = run_core(*a, assemble("nop.dma\nend\n"));
  EXPECT_TRUE(run.done);
}
TEST(CoreRegression, TwoCoresAliveDestroyInCreationOrder) {
  auto a = small_core();
  auto b = small_core();
  a.reset();
  b.reset();
  SUCCEED();
}
}  // namespace
}  // namespace tpuemu::test
namespace tpuemu::test {
namespace {
TEST(CoreRegression, ProgramAtTheTopOfHbm) {
  auto core = small_core();
  const auto p = assemble("nop.dma signal=s1\nend\n");
  const auto bytes = p.to_bytes();
  const std::uint64_t base = (64ull << 20) - 64;
  core->mem_write(base, bytes);
  core->csr_write(csr::kProgBase, base);
  core->csr_write(csr::kCtrl, 1);
  const auto cycles = core->step(100000, true);
  EXPECT_EQ(core->csr_read(csr::kStatus) & 7u, 2u) << "cycles " << cycles << " fault " << core->fault().value_or("-");
}
}  // namespace
}  // namespace tpuemu::test
namespace tpuemu::test {
namespace {
TEST(CoreRegression, SmemCsrWriteDuringDmaToSmem) {
  auto core = small_core(20);
  std::vector<std::uint8_t> a(64 * 8, 0x11);
  core->mem_write(0x0, a);
  const auto p = assemble("dma hbm=0x0 local=0 len=64 path=hbm2smem\nend\n");
  core->mem_write(kProgramBase, p.to_bytes());
  core->csr_write(csr::kProgBase, kProgramBase);
  core->csr_write(csr::kCtrl, 1);
  core->step(40);
  core->csr_write(csr::kSmemAddr, 200);
  for (int i = 0; i < 40; ++i) core->csr_write(csr::kSmemData, 1000 + i);
  core->step(10000, true);
  EXPECT_EQ(core->csr_read(csr::kStatus) & 7u, 2u);
  core->csr_write(csr::kSmemAddr, 200);
  int lost = 0;
  for (int i = 0; i < 40; ++i) lost += core->csr_read(csr::kSmemData) != 1000u + i;
  EXPECT_EQ(lost, 0);
}
}  // namespace
}  // namespace tpuemu::test
#include "tpuemu/compile/compile.h"
#include "tpuemu/compile/reference.h"
#include "tpuemu/config/config.h"
#include "tpuemu/layout/layout.h"

namespace tpuemu::test {
namespace {
// A soft reset in the middle of a compiled matmul, at cuts spread over its run, and the matmul run
// again from the start: bit-exact, every semaphore back to 0. Before the fix the rows in flight
// in the systolic array left it after the reset had emptied their tag FIFO (an assertion: "pop
// while empty"), and a row granted in the reset's cycle entered the array with a stale tag.
TEST(CoreRegression, SoftResetMidMatmulThenTheMatmulRunsBitExact) {
  const Preset preset = load_preset("small");
  const MatmulSpec spec{48, 40, 56, false, 1, 0, false};
  std::mt19937 rng(36);
  const auto a = random_int8(spec.m * spec.k, rng);
  const auto b = random_int8(spec.k * spec.n, rng);
  const auto la = matmul_a_layout(spec, preset.dim), lb = matmul_b_layout(spec, preset.dim),
             lc = matmul_c_layout(spec, preset.dim);
  std::vector<std::int8_t> b_padded(b);
  b_padded.resize(lb.rows * lb.cols, 0);
  const HbmTensor ta{la, 0x0}, tb{lb, 0x10'0000}, tc{lc, 0x20'0000};
  Program program;
  compile_matmul(preset, spec, ta, tb, tc, CompileOptions{}, program);
  program.push_back(Instruction{isa::End{}, std::nullopt, std::nullopt});
  const auto want = matmul_int8(a, b, spec.m, spec.k, spec.n);
  for (std::uint64_t cut : {30u, 120u, 333u, 700u, 1500u, 2600u}) {
    auto core = small_core();
    core->mem_write(ta.addr, pack(la, a));
    core->mem_write(tb.addr, pack(lb, b_padded));
    core->mem_write(kProgramBase, program.to_bytes());
    core->csr_write(csr::kProgBase, static_cast<std::uint32_t>(kProgramBase));
    core->csr_write(csr::kCtrl, csr::ctrl::start.put(1));
    core->step(cut, /*stop_when_idle=*/true);
    core->csr_write(csr::kCtrl, csr::ctrl::soft_reset.put(1));
    const auto run = run_core(*core, program, 200'000);
    ASSERT_TRUE(run.done) << "cut " << cut << ": error " << run.error_code << " at pc " << run.error_pc;
    EXPECT_EQ(unpack<std::int32_t>(lc, read_mem(*core, tc.addr, lc.bytes())), want) << "cut " << cut;
    for (unsigned s = 0; s < 32; ++s) EXPECT_EQ(core->csr_read(csr::sem(s)), 0u) << "cut " << cut << " semaphore " << s;
  }
}
}  // namespace
}  // namespace tpuemu::test
