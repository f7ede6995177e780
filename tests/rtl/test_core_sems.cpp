// SPDX-License-Identifier: Apache-2.0
// Whole-core semaphore tests on the small preset (DIM 8): a data race that semaphores fix, waits
// with counts > 1, balanced programs leave every semaphore at 0, SEM CSR writes, priority between
// queues, overflow, and the deadlock detector (STATUS, QUEUE_STATE, HEAD_WAIT).
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

std::uint32_t sem(sim::CoreSim& core, unsigned i) { return core.csr_read(csr::sem(i)); }

void expect_all_semaphores_zero(sim::CoreSim& core, const std::string& what) {
  for (unsigned i = 0; i < 32; ++i) EXPECT_EQ(sem(core, i), 0u) << what << ": semaphore " << i;
}

// ------------------------------------------------------------------------------------------------
// A MATMUL racing a slow DMA: wrong without semaphores, right with them
// ------------------------------------------------------------------------------------------------
TEST(CoreSems, RaceWithoutSemaphoresIsWrongAndSemaphoresFixIt) {
  constexpr std::uint32_t m = 32;
  std::mt19937 rng(17);
  const auto a = random_int8(m * kDim, rng);
  const auto w = random_int8(kDim * kDim, rng);
  const auto expect = matmul_int8(a, w, m, kDim, kDim);

  for (const bool with_sems : {false, true}) {
    SCOPED_TRACE(with_sems ? "with semaphores" : "without semaphores");
    auto core = small_core(/*latency=*/150);
    write_int8(*core, 0x0, a);
    write_int8(*core, 0x10000, w);
    // Setup: weights into bank 0, and VMEM rows [0, m) cleared to zero (HBM 0x40000 is zero).
    auto setup = run_core(*core, assemble("dma hbm=0x10000 local=512 len=8 path=hbm2vmem signal=s1\n"
                                          "dma hbm=0x40000 local=0 len=32 path=hbm2vmem\n"
                                          "loadw vmem=512 bank=0 wait=s1>=1\n"
                                          "end\n"));
    ASSERT_TRUE(setup.done);
    const std::string wait_a = with_sems ? " wait=s0>=1" : "";
    const auto run = run_core(*core, assemble("dma hbm=0x0 local=0 len=32 path=hbm2vmem signal=s0\n"
                                              "matmul vmem=0 acc=0 rows=32 bank=0 signal=s2" + wait_a + "\n"
                                              "dma hbm=0x20000 local=0 len=32 path=acc2hbm wait=s2>=1\n"
                                              "end\n"));
    ASSERT_TRUE(run.done) << "error " << run.error_code;
    const auto got = read_int32(*core, 0x20000, m * kDim);
    if (with_sems) {
      EXPECT_EQ(got, expect);
      EXPECT_GT(counter(*core, 2), 100u) << "the MXU waited for the slow DMA";
      expect_all_semaphores_zero(*core, "balanced");
    } else {
      EXPECT_NE(got, expect) << "the MATMUL should have read the rows before the DMA wrote them";
      // it read the zeroed rows: the first result row is all zero
      EXPECT_EQ(std::vector<std::int32_t>(got.begin(), got.begin() + kDim), std::vector<std::int32_t>(kDim, 0));
      EXPECT_EQ(counter(*core, 2), 0u);
      EXPECT_EQ(sem(*core, 0), 1u) << "s0 was signalled and never waited";
    }
  }
}

// ------------------------------------------------------------------------------------------------
// Wait counts > 1, balanced programs
// ------------------------------------------------------------------------------------------------
TEST(CoreSems, WaitForThreeSignalsOfOneSemaphore) {
  // Three DMAs (A in three pieces) signal s4; one MATMUL waits s4>=3; another waits s5>=2 for two
  // weight loads' signals (LOADW bank 0 and bank 1 both signal s5).
  constexpr std::uint32_t m = 24;
  std::mt19937 rng(4);
  const auto a = random_int8(m * kDim, rng);
  const auto w0 = random_int8(kDim * kDim, rng);
  const auto w1 = random_int8(kDim * kDim, rng);
  auto core = small_core(60);
  write_int8(*core, 0x0, a);
  write_int8(*core, 0x10000, w0);
  write_int8(*core, 0x10100, w1);
  const auto run = run_core(*core, assemble(
      "dma hbm=0x10000 local=512 len=8 path=hbm2vmem signal=s6\n"
      "dma hbm=0x10100 local=520 len=8 path=hbm2vmem signal=s6\n"
      "dma hbm=0x0 local=0 len=8 path=hbm2vmem signal=s4\n"
      "dma hbm=0x40 local=8 len=8 path=hbm2vmem signal=s4\n"
      "dma hbm=0x80 local=16 len=8 path=hbm2vmem signal=s4\n"
      "loadw vmem=512 bank=0 wait=s6>=2 signal=s5\n"
      "loadw vmem=520 bank=1 signal=s5\n"
      "nop.mxu wait=s5>=2\n"
      "matmul vmem=0 acc=0 rows=24 bank=0 wait=s4>=3\n"
      "matmul vmem=0 acc=24 rows=24 bank=1 signal=s7\n"
      "dma hbm=0x20000 local=0 len=48 path=acc2hbm wait=s7>=1\n"
      "end\n"));
  ASSERT_TRUE(run.done) << "error " << run.error_code;
  const auto got = read_int32(*core, 0x20000, 2 * m * kDim);
  const auto e0 = matmul_int8(a, w0, m, kDim, kDim);
  const auto e1 = matmul_int8(a, w1, m, kDim, kDim);
  EXPECT_EQ(std::vector<std::int32_t>(got.begin(), got.begin() + m * kDim), e0);
  EXPECT_EQ(std::vector<std::int32_t>(got.begin() + m * kDim, got.end()), e1);
  expect_all_semaphores_zero(*core, "balanced program");
}

TEST(CoreSems, WaitCountIsSubtractedNotCleared) {
  // Five NOP signals on s9, two waits of 2: one token is left over.
  auto core = small_core();
  const auto run = run_core(*core, assemble("nop.vec signal=s9\n"
                                            "nop.vec signal=s9\n"
                                            "nop.vec signal=s9\n"
                                            "nop.vec signal=s9\n"
                                            "nop.vec signal=s9\n"
                                            "nop.dma wait=s9>=2\n"
                                            "nop.mxu wait=s9>=2 signal=s10\n"
                                            "end\n"));
  ASSERT_TRUE(run.done) << "error " << run.error_code;
  EXPECT_EQ(sem(*core, 9), 1u);
  EXPECT_EQ(sem(*core, 10), 1u);
}

TEST(CoreSems, CsrWriteSetsASemaphoreThatAProgramConsumes) {
  auto core = small_core();
  core->csr_write(csr::sem(7), 5);
  core->csr_write(csr::sem(31), 0xFFFF);
  EXPECT_EQ(sem(*core, 7), 5u);
  EXPECT_EQ(sem(*core, 31), 0xFFFFu);
  EXPECT_EQ(sem(*core, 6), 0u);
  core->csr_write(csr::sem(31), 0);
  EXPECT_EQ(sem(*core, 31), 0u);
  const auto run = run_core(*core, assemble("nop.dma wait=s7>=5 signal=s8\nend\n"));
  ASSERT_TRUE(run.done) << "error " << run.error_code;
  EXPECT_EQ(sem(*core, 7), 0u);
  EXPECT_EQ(sem(*core, 8), 1u);
  // the same program without the CSR write deadlocks
  core->csr_write(csr::sem(8), 0);
  const auto again = run_core(*core, assemble("nop.dma wait=s7>=5 signal=s8\nend\n"));
  EXPECT_TRUE(again.error);
  EXPECT_EQ(again.error_code, 2u);
}

TEST(CoreSems, SemaphoreOverflowIsErrorFour) {
  auto core = small_core();
  core->csr_write(csr::sem(12), 0xFFFE);
  const auto ok = run_core(*core, assemble("nop.dma signal=s12\nend\n"));
  ASSERT_TRUE(ok.done);
  EXPECT_EQ(sem(*core, 12), 0xFFFFu);
  const auto run = run_core(*core, assemble("nop.dma signal=s12\nend\n"));
  EXPECT_TRUE(run.error);
  EXPECT_FALSE(run.done);
  EXPECT_EQ(run.error_code, 4u);
  EXPECT_LT(run.cycles, 500u);
}

TEST(CoreSems, DmaWinsASemaphoreTakenInTheSameCycle) {
  // Both the DMA and the MXU head wait on s3 while a long VQUANT keeps the core busy; one CSR
  // write of s3 = 1 lets exactly one of them go: the DMA.
  auto core = small_core();
  const auto run0 = run_core(*core, assemble("vquant acc=0 vmem=4096 rows=1000 scale=1\n"
                                             "nop.dma wait=s3>=1 signal=s10\n"
                                             "nop.mxu wait=s3>=1 signal=s11\n"
                                             "end\n"),
                             /*max_cycles=*/200);
  EXPECT_FALSE(run0.done);
  const std::uint32_t qs = core->csr_read(csr::kQueueState);
  EXPECT_EQ(qs & 0xFFu, 1u) << "DMA queue holds its NOP";
  EXPECT_EQ((qs >> 8) & 0xFFu, 1u) << "MXU queue holds its NOP";
  EXPECT_TRUE(qs & (1u << 25));
  EXPECT_TRUE(qs & (1u << 26));
  core->csr_write(csr::sem(3), 1);
  core->step(10);
  EXPECT_EQ(sem(*core, 10), 1u) << "DMA took s3";
  EXPECT_EQ(sem(*core, 11), 0u) << "MXU must still wait";
  EXPECT_EQ(sem(*core, 3), 0u);
  core->csr_write(csr::sem(3), 1);
  core->step(10);
  EXPECT_EQ(sem(*core, 11), 1u);
  core->step(5000, true);
  const std::uint32_t status = core->csr_read(csr::kStatus);
  EXPECT_EQ(status & 7u, 2u) << "done, no error";
}

// ------------------------------------------------------------------------------------------------
// Deadlock detector
// ------------------------------------------------------------------------------------------------
TEST(CoreSems, DeadlockOnAnUnsignalledSemaphoreIsReportedQuickly) {
  auto core = small_core();
  const auto run = run_core(*core, assemble("dma hbm=0x0 local=0 len=8 path=hbm2vmem signal=s1\n"
                                            "loadw vmem=0 bank=0 wait=s1>=1\n"
                                            "matmul vmem=0 acc=0 rows=8 wait=s13>=3\n"
                                            "matmul vmem=0 acc=8 rows=8\n"
                                            "end\n"),
                            /*max_cycles=*/100000);
  EXPECT_TRUE(run.error);
  EXPECT_FALSE(run.done);
  EXPECT_EQ(run.error_code, 2u);
  EXPECT_LT(run.cycles, 400u) << "the detector fires soon after the core stops making progress";
  EXPECT_EQ(core->csr_read(csr::kStatus) & 1u, 0u) << "not busy";
  const std::uint32_t qs = core->csr_read(csr::kQueueState);
  EXPECT_EQ(qs & 0xFFu, 0u) << "DMA queue empty";
  EXPECT_EQ((qs >> 8) & 0xFFu, 2u) << "both MATMULs are still queued";
  EXPECT_EQ((qs >> 16) & 0xFFu, 0u) << "vector queue empty";
  EXPECT_TRUE(qs & (1u << 24)) << "fetch stopped at END";
  EXPECT_FALSE(qs & (1u << 25));
  EXPECT_TRUE(qs & (1u << 26)) << "MXU head waits on a semaphore";
  EXPECT_FALSE(qs & (1u << 27));
  const std::uint32_t hw = core->csr_read(csr::kHeadWait);
  EXPECT_EQ((hw >> 8) & 0x1Fu, 13u) << "MXU head waits on s13";
  EXPECT_EQ(hw >> 24, 3u) << "wait count of the first waiting head";
  EXPECT_EQ(core->csr_read(csr::kPc), 4u) << "PC: END is instruction 4";
  EXPECT_EQ(counter(*core, 15), 4u);
  EXPECT_GT(counter(*core, 2), 0u) << "MXU stall on semaphore counted";
}

TEST(CoreSems, DeadlockWithAFullQueueAndFetchStalled) {
  // The DMA head waits forever; 12 more DMA NOPs fill the queue (depth 8) and stall fetch.
  std::string text = "nop.dma wait=s2>=1\n";
  for (int i = 0; i < 12; ++i) text += "nop.dma\n";
  text += "end\n";
  auto core = small_core();
  const auto run = run_core(*core, assemble(text), 100000);
  EXPECT_TRUE(run.error);
  EXPECT_EQ(run.error_code, 2u);
  EXPECT_LT(run.cycles, 400u);
  const std::uint32_t qs = core->csr_read(csr::kQueueState);
  EXPECT_EQ(qs & 0xFFu, 8u) << "DMA queue full";
  EXPECT_FALSE(qs & (1u << 24)) << "fetch is stalled, not stopped";
  EXPECT_TRUE(qs & (1u << 25)) << "DMA head waits";
  EXPECT_EQ(core->csr_read(csr::kHeadWait) & 0x1Fu, 2u);
  EXPECT_EQ(core->csr_read(csr::kHeadWait) >> 24, 1u);
  EXPECT_EQ(core->csr_read(csr::kPc), 8u) << "PC: the ninth instruction could not be dispatched";
  EXPECT_GT(counter(*core, 8), 0u) << "fetch stall counted";
  EXPECT_GT(counter(*core, 5), 0u) << "DMA stall on semaphore counted";
}

TEST(CoreSems, NoDeadlockWhileAnEngineIsStillWorking) {
  // The MXU waits on s0 for a long time (slow memory), which is not a deadlock.
  auto core = small_core(/*latency=*/400);
  const auto run = run_core(*core, assemble("dma hbm=0x0 local=0 len=64 path=hbm2vmem signal=s0\n"
                                            "nop.mxu wait=s0>=1\n"
                                            "end\n"));
  EXPECT_TRUE(run.done) << "error " << run.error_code;
  EXPECT_GT(counter(*core, 2), 300u);
}

}  // namespace
}  // namespace tpuemu::test
