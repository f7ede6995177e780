// SPDX-License-Identifier: Apache-2.0
// Whole-core RTL tests below the firmware: DMA strides and back-pressure, VMEM bank conflicts,
// semaphores, the deadlock detector, SMEM and the vector unit, error codes.
#include <gtest/gtest.h>

#include <random>

#include "core_fixture.h"
#include "tpuemu/compile/reference.h"

namespace tpuemu::test {
namespace {

std::span<const std::uint8_t> as_bytes(const std::vector<std::int8_t>& v) {
  return {reinterpret_cast<const std::uint8_t*>(v.data()), v.size()};
}

// C (8 x 8, int32) = A (M x 8) . B (8 x 8) on the small core, with or without semaphores.
Program single_tile_matmul(std::uint32_t m, bool with_semaphores) {
  const std::string sem_b = with_semaphores ? " wait=s1>=1" : "";
  const std::string sem_a = with_semaphores ? " wait=s0>=1" : "";
  const std::string sem_c = with_semaphores ? " wait=s2>=1" : "";
  return assemble("dma hbm=0x0 local=0 len=" + std::to_string(m) + " path=hbm2vmem signal=s0\n"
                  "dma hbm=0x10000 local=512 len=8 path=hbm2vmem signal=s1\n"
                  "loadw vmem=512 bank=0" + sem_b + "\n"
                  "matmul vmem=0 acc=0 rows=" + std::to_string(m) + " bank=0" + sem_a + " signal=s2\n"
                  "dma hbm=0x20000 local=0 len=" + std::to_string(m) + " path=acc2hbm" + sem_c + "\n"
                  "end\n");
}

TEST(CoreTest, SingleTileMatmulIsBitExact) {
  auto core = small_core();
  std::mt19937 rng(1);
  const std::uint32_t m = 40;
  const auto a = random_int8(m * 8, rng);
  const auto b = random_int8(64, rng);
  core->mem_write(0x0, as_bytes(a));
  core->mem_write(0x10000, as_bytes(b));
  const auto run = run_core(*core, single_tile_matmul(m, true));
  ASSERT_TRUE(run.done) << "error code " << run.error_code;
  const auto expect = matmul_int8(a, b, m, 8, 8);
  const auto got_bytes = read_mem(*core, 0x20000, m * 8 * 4);
  std::vector<std::int32_t> got(m * 8);
  std::memcpy(got.data(), got_bytes.data(), got_bytes.size());
  EXPECT_EQ(got, expect);
  EXPECT_EQ(counter(*core, 1), m);            // MXU busy: one cycle per row
  EXPECT_EQ(counter(*core, 9), (m + 8) * 8);  // bytes HBM -> VMEM
  EXPECT_EQ(counter(*core, 13), m * 8 * 4);   // bytes ACC -> HBM
}

}  // namespace
}  // namespace tpuemu::test
