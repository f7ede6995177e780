// SPDX-License-Identifier: Apache-2.0
// The generated contract headers agree with the Verilated cores: a CSR walk on the `small` and
// `default` cores reads ID and CONFIG as the spec and the preset say, round-trips every SEM, and
// runs programs that make each performance counter's event happen, reading COUNTER[j] for every
// j < spec::kNumCounters (and 0 one past the end).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <bit>
#include <string>

#include "core_fixture.h"
#include "tpuemu/config/config.h"

namespace tpuemu::test {
namespace {

namespace cnt = spec::counter;

std::unique_ptr<sim::CoreSim> core_for(const std::string& preset) {
  sim::MemoryModelConfig mem;
  mem.capacity_bytes = 64ull << 20;
  mem.latency_cycles = 20;
  mem.bytes_per_cycle = 8;
  mem.backpressure_permille = 300;  // so that the DMA stalls on memory
  mem.seed = 11;
  return sim::make_core_sim(preset, mem);
}

std::string s(std::uint64_t v) { return std::to_string(v); }

// Data, weights, a weight load and a matmul that wait on the DMA, a requantisation after the
// matmul and an 8-row VADD of its result, copies out of VMEM / ACC / SMEM that wait on it, and DMA fillers that fill the DMA
// queue behind the waiting copy (so fetch stalls).
std::string program_pipeline(std::uint32_t dim, std::uint32_t rows) {
  std::string p = "dma hbm=0x0 local=0 len=" + s(rows) + " path=hbm2vmem signal=s0\n"
                  "dma hbm=0x100000 local=4096 len=" + s(dim) + " path=hbm2vmem signal=s1\n"
                  "loadw vmem=4096 bank=0 wait=s1>=1\n"
                  "matmul vmem=0 acc=0 rows=" + s(rows) + " bank=0 wait=s0>=1 signal=s2\n"
                  "vquant acc=0 vmem=2000 rows=" + s(rows) + " scale=3 shift=2 wait=s2>=1 signal=s3\n"
                  "vadd a=2000 b=2001 out=7000 rows=8\n"
                  "dma hbm=0x200000 local=2000 len=" + s(rows) + " path=vmem2hbm wait=s3>=1\n"
                  "dma hbm=0x300000 local=0 len=8 path=acc2hbm\n"
                  "dma hbm=0x400000 local=0 len=16 path=hbm2smem\n"
                  "dma hbm=0x500000 local=0 len=16 path=smem2hbm\n";
  for (int i = 0; i < 12; ++i) p += "dma hbm=0x600000 local=" + s(6000 + i) + " len=1 path=hbm2vmem\n";
  return p + "end\n";
}

// A long requantisation next to sixteen 16-row matmuls that start together with it. Both units
// move one VMEM row per cycle, so their bank offset only changes between matmuls; the matmul
// bases step by 16 + k rows, which walks the offset through every residue modulo the bank count
// (triangular numbers), whatever the gap between two matmuls: the vector unit must lose a bank to
// the MXU at least once.
std::string program_conflicts(std::uint32_t dim) {
  std::string p = "dma hbm=0x100000 local=4096 len=" + s(dim) + " path=hbm2vmem signal=s1\n"
                  "loadw vmem=4096 bank=0 wait=s1>=1 signal=s2\n"
                  "vquant acc=0 vmem=6000 rows=400 scale=1 wait=s2>=1\n";
  std::uint32_t base = 0;
  for (std::uint32_t k = 0; k < 16; ++k) {
    p += "matmul vmem=" + s(base) + " acc=512 rows=16 bank=0\n";
    base += 16 + k;
  }
  return p + "end\n";
}

class CoreContractTest : public ::testing::TestWithParam<std::string> {};

TEST_P(CoreContractTest, IdAndConfigMatchSpecAndPreset) {
  const Preset preset = load_preset(GetParam());
  auto core = core_for(GetParam());
  EXPECT_EQ(core->csr_read(csr::kId), spec::kIdValue);
  const std::uint32_t config = core->csr_read(csr::kConfig);
  EXPECT_EQ(csr::config::dim.get(config), preset.dim);
  EXPECT_EQ(csr::config::log2_vmem_rows.get(config), std::countr_zero(preset.vmem_rows));
  EXPECT_EQ(csr::config::log2_acc_rows.get(config), std::countr_zero(preset.acc_rows));
  EXPECT_EQ(config, preset.config_csr());
  EXPECT_EQ(core->dim(), preset.dim);
  // Idle after reset: STATUS is all zero.
  EXPECT_EQ(core->csr_read(csr::kStatus), 0u);
}

TEST_P(CoreContractTest, EverySemaphoreCsrRoundTrips) {
  auto core = core_for(GetParam());
  for (std::uint32_t i = 0; i < spec::kNumSems; ++i) core->csr_write(csr::sem(i), 1000 + 7 * i);
  for (std::uint32_t i = 0; i < spec::kNumSems; ++i) EXPECT_EQ(core->csr_read(csr::sem(i)), 1000 + 7 * i) << i;
  // SEM values are SemWidth bits wide.
  core->csr_write(csr::sem(3), 0xFFFF'FFFFu);
  EXPECT_EQ(core->csr_read(csr::sem(3)), (1u << spec::kSemWidth) - 1);
}

TEST_P(CoreContractTest, EveryCounterCountsItsEvent) {
  const Preset preset = load_preset(GetParam());
  const std::uint32_t d = preset.dim;
  const std::uint32_t rows = 200;
  const std::array<std::string, 2> programs = {program_pipeline(d, rows), program_conflicts(d)};
  std::array<std::uint64_t, spec::kNumCounters> seen{};
  for (std::size_t p = 0; p < programs.size(); ++p) {
    auto core = core_for(GetParam());
    const Program program = assemble(programs[p]);
    const auto run = run_core(*core, program);
    ASSERT_TRUE(run.done) << "program " << p << ": error code " << run.error_code;
    std::array<std::uint64_t, spec::kNumCounters> c{};
    for (std::uint32_t j = 0; j < spec::kNumCounters; ++j) {
      c[j] = counter(*core, j);
      seen[j] = std::max(seen[j], c[j]);
    }
    // one past the end is outside the counter array
    EXPECT_EQ(core->csr_read(csr::counter_lo(spec::kNumCounters)), 0u);
    EXPECT_EQ(core->csr_read(csr::counter_hi(spec::kNumCounters)), 0u);
    // exact where the program fixes the count
    EXPECT_EQ(c[cnt::instructions_fetched], program.size() - 1) << "all but END";
    if (p == 0) {
      EXPECT_EQ(c[cnt::mxu_busy], rows);
      EXPECT_EQ(c[cnt::bytes_hbm_to_vmem], std::uint64_t{rows + d + 12} * d);
      EXPECT_EQ(c[cnt::bytes_vmem_to_hbm], std::uint64_t{rows} * d);
      EXPECT_EQ(c[cnt::bytes_acc_to_hbm], 8ull * 4 * d);
      EXPECT_EQ(c[cnt::bytes_hbm_to_smem], 16ull * d);
      EXPECT_EQ(c[cnt::bytes_smem_to_hbm], 16ull * d);
      EXPECT_EQ(c[cnt::mem_write_beats], std::uint64_t{rows} + 8 * 4 + 16);
    } else {
      EXPECT_EQ(c[cnt::mxu_busy], 16u * 16u);
    }
    EXPECT_LE(c[cnt::mxu_busy], c[cnt::cycles]);
    // the vector unit is busy for one cycle per VQUANT row, three per VADD row, plus one per bank
    // conflict it lost
    EXPECT_EQ(c[cnt::vector_busy], (p == 0 ? rows + 3 * 8 : 400u) + c[cnt::vector_stall_bank_conflict]);
    EXPECT_EQ(c[cnt::vector_add_rows], p == 0 ? 8u : 0u);
  }
  for (std::uint32_t j = 0; j < spec::kNumCounters; ++j) {
    if (j == cnt::mxu_stall_bank_conflict) {
      // The MXU's data port has the highest VMEM priority (port 0), so it is never denied: the
      // counter exists in the map but cannot count in this design.
      EXPECT_EQ(seen[j], 0u) << "counter " << j;
    } else {
      EXPECT_GT(seen[j], 0u) << "counter " << j << " never counted";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Presets, CoreContractTest, ::testing::Values("small", "default"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace tpuemu::test
