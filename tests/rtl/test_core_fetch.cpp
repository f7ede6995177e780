// SPDX-License-Identifier: Apache-2.0
// Whole-core instruction-fetch tests on the small preset (DIM 8: four beats per instruction,
// queues of depth 8): a long program whose MXU queue fills up (fetch stalls) still runs correctly,
// the instruction counter counts every dispatched instruction but not END, PROG_BASE at a 32-byte
// (not 64-byte) boundary, and a program run twice from different bases.
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

Instruction op(Operation o, std::optional<Wait> wait = std::nullopt,
               std::optional<std::uint8_t> signal = std::nullopt) {
  return Instruction{.op = std::move(o), .wait = wait, .signal = signal};
}

struct LongProgram {
  Program program;
  std::vector<std::int8_t> a, w;
  std::vector<std::int32_t> expect;  // ACC rows [0, kAccRows)
  std::size_t dispatched = 0;        // instructions before END
};

constexpr std::uint32_t kInRows = 64;
constexpr std::uint32_t kAccRows = 32;
constexpr std::uint32_t kOut = 0x20000;

// 300 accumulating MATMULs of 6..12 rows (slower than fetch's 4 cycles per instruction, so the
// MXU queue fills), every 10th one followed by a vector NOP and every 25th by a DMA NOP.
LongProgram make_long_program(std::uint32_t seed, int matmuls) {
  std::mt19937 rng(seed);
  LongProgram lp;
  lp.a.resize(kInRows * kDim);
  lp.w.resize(kDim * kDim);
  for (auto& x : lp.a) x = static_cast<std::int8_t>(rng());
  for (auto& x : lp.w) x = static_cast<std::int8_t>(rng());
  const auto prod = matmul_int8(lp.a, lp.w, kInRows, kDim, kDim);  // row r = A[r] . W
  std::vector<std::uint32_t> acc(kAccRows * kDim, 0);
  Program& p = lp.program;
  p.push_back(op(isa::Dma{.hbm_addr = 0x0, .local_addr = 0, .len = kInRows}, std::nullopt, 0));
  p.push_back(op(isa::Dma{.hbm_addr = 0x10000, .local_addr = 512, .len = kDim}, std::nullopt, 1));
  p.push_back(op(isa::LoadW{.vmem_row = 512}, Wait{1, 1}));
  // zero ACC rows: MATMUL over all-zero VMEM rows [1000, 1032) (never written: zero after reset
  // is not guaranteed, so they are loaded from HBM zeros first)
  p.push_back(op(isa::Dma{.hbm_addr = 0x30000, .local_addr = 1000, .len = kAccRows}, std::nullopt, 2));
  p.push_back(op(isa::Matmul{.vmem_row = 1000, .acc_row = 0, .rows = kAccRows}, Wait{2, 1}));
  p.push_back(op(isa::MxuNop{}, Wait{0, 1}));
  for (int i = 0; i < matmuls; ++i) {
    const std::uint32_t rows = std::uniform_int_distribution<std::uint32_t>(6, 12)(rng);
    const std::uint32_t vmem = std::uniform_int_distribution<std::uint32_t>(0, kInRows - rows)(rng);
    const std::uint32_t accr = std::uniform_int_distribution<std::uint32_t>(0, kAccRows - rows)(rng);
    p.push_back(op(isa::Matmul{.vmem_row = vmem, .acc_row = accr, .rows = rows, .accumulate = true}));
    for (std::uint32_t r = 0; r < rows; ++r)
      for (std::uint32_t n = 0; n < kDim; ++n)
        acc[(accr + r) * kDim + n] += static_cast<std::uint32_t>(prod[(vmem + r) * kDim + n]);
    if (i % 10 == 9) p.push_back(op(isa::VecNop{}));
    if (i % 25 == 24) p.push_back(op(isa::DmaNop{}));
  }
  p.push_back(op(isa::MxuNop{}, std::nullopt, 3));
  p.push_back(op(isa::Dma{.hbm_addr = kOut, .local_addr = 0, .len = kAccRows, .path = DmaPath::AccToHbm},
                 Wait{3, 1}));
  lp.dispatched = p.size();
  p.push_back(op(isa::End{}));
  lp.expect.resize(acc.size());
  std::memcpy(lp.expect.data(), acc.data(), acc.size() * 4);
  return lp;
}

void load_inputs(sim::CoreSim& core, const LongProgram& lp) {
  core.mem_write(0x0, std::span(reinterpret_cast<const std::uint8_t*>(lp.a.data()), lp.a.size()));
  core.mem_write(0x10000, std::span(reinterpret_cast<const std::uint8_t*>(lp.w.data()), lp.w.size()));
}

TEST(CoreFetch, LongProgramWithQueueFullStallsRunsCorrectly) {
  const auto lp = make_long_program(51, 300);
  ASSERT_GT(lp.dispatched, 300u);
  auto core = small_core();
  load_inputs(*core, lp);
  const auto run = run_core(*core, lp.program);
  ASSERT_TRUE(run.done) << "error " << run.error_code << " at pc " << run.error_pc;
  EXPECT_EQ(read_int32(*core, kOut, kAccRows * kDim), lp.expect);
  EXPECT_EQ(counter(*core, 15), lp.dispatched) << "every instruction but END";
  EXPECT_EQ(core->csr_read(csr::kPc), lp.dispatched) << "PC stops at END";
  EXPECT_GT(counter(*core, 8), 100u) << "fetch stalled on the full MXU queue";
  EXPECT_TRUE(core->csr_read(csr::kQueueState) & (1u << 24)) << "fetch stopped";
  EXPECT_EQ(core->csr_read(csr::kQueueState) & 0xFFFFFFu, 0u) << "queues drained";
  for (unsigned i = 0; i < 32; ++i) EXPECT_EQ(core->csr_read(csr::sem(i)), 0u) << "semaphore " << i;
}

TEST(CoreFetch, LongProgramUnderBackpressureAndLatency) {
  const auto lp = make_long_program(52, 120);
  auto core = small_core(/*latency=*/90, /*backpressure=*/400);
  load_inputs(*core, lp);
  const auto run = run_core(*core, lp.program);
  ASSERT_TRUE(run.done) << "error " << run.error_code << " at pc " << run.error_pc;
  EXPECT_EQ(read_int32(*core, kOut, kAccRows * kDim), lp.expect);
  EXPECT_EQ(counter(*core, 15), lp.dispatched);
}

TEST(CoreFetch, ProgramBaseOnA32ByteBoundaryAndTwoBases) {
  const auto lp = make_long_program(53, 20);
  auto core = small_core();
  load_inputs(*core, lp);
  const auto bytes = lp.program.to_bytes();
  for (const std::uint32_t base : {0x200020u, 0x300000u + 32u * 7u}) {
    SCOPED_TRACE(base);
    // garbage (illegal opcodes) right before the program must never be fetched
    core->mem_write(base - 32, std::vector<std::uint8_t>(32, 0x55));
    core->mem_write(base, bytes);
    std::vector<std::uint8_t> zero(kAccRows * kDim * 4, 0);
    core->mem_write(kOut, zero);
    core->csr_write(csr::kProgBase, base);
    EXPECT_EQ(core->csr_read(csr::kProgBase), base);
    core->csr_write(csr::kCtrl, 1);
    core->step(1'000'000, true);
    const std::uint32_t status = core->csr_read(csr::kStatus);
    ASSERT_EQ(status & 7u, 2u) << "status " << std::hex << status;
    EXPECT_EQ(read_int32(*core, kOut, kAccRows * kDim), lp.expect);
    EXPECT_EQ(counter(*core, 15), lp.dispatched);
  }
}

TEST(CoreFetch, EndFirstRunsNothing) {
  auto core = small_core();
  const auto run = run_core(*core, assemble("end\nnop.dma signal=s1\n"));
  EXPECT_TRUE(run.done);
  EXPECT_EQ(counter(*core, 15), 0u);
  EXPECT_EQ(core->csr_read(csr::sem(1)), 0u) << "nothing after END runs";
  EXPECT_EQ(core->csr_read(csr::kPc), 0u);
}

}  // namespace
}  // namespace tpuemu::test
