// SPDX-License-Identifier: Apache-2.0
// The control modules' protocol assertions (rtl/include/tpu_assert.svh) are compiled into the
// Verilated cores and stop the run with the module's message: the CSR block's are reachable from
// the bus, so a misuse of it is driven here. The other modules' invariants are internal (no input
// of the core can break them); every other RTL test runs with them armed, and a firing one fails
// that test, since the harness turns it into an exception. The DMA engine's memory-side checks
// are provoked in test_dma_engine.cpp.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "core_fixture.h"

namespace tpuemu::test {
namespace {

// Runs `access` on a fresh small core and returns the RTL error it raised ("" if none).
template <typename Access>
std::string rtl_error(Access&& access) {
  auto core = small_core();
  try {
    access(*core);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

TEST(CoreAsserts, LegalCsrWritesRaiseNothing) {
  EXPECT_EQ(rtl_error([](sim::CoreSim& c) {
              c.csr_write(csr::kProgBase, 0x1000);
              c.csr_write(csr::kSmemAddr, 3);
              c.csr_write(csr::kSmemData, 7);
              c.csr_write(csr::sem(31), 1);
              c.csr_write(csr::kCtrl, csr::ctrl::soft_reset.put(1));
            }),
            "");
}

TEST(CoreAsserts, WriteToAReadOnlyCsrStopsTheCore) {
  const std::string e = rtl_error([](sim::CoreSim& c) { c.csr_write(csr::kStatus, 0); });
  EXPECT_NE(e.find("csr_block: write to the unmapped or read-only CSR 0x00c"), std::string::npos)
      << e;
  const std::string u = rtl_error([](sim::CoreSim& c) { c.csr_write(0x7F0, 1); });
  EXPECT_NE(u.find("csr_block: write to the unmapped or read-only CSR 0x7f0"), std::string::npos)
      << u;
}

TEST(CoreAsserts, UnalignedCsrAccessStopsTheCore) {
  // Unaligned is unmapped too: whichever of the two checks reports first names the address.
  const std::string e = rtl_error([](sim::CoreSim& c) { c.csr_write(csr::kCtrl + 2, 0); });
  EXPECT_NE(e.find("csr_block: "), std::string::npos) << e;
  EXPECT_NE(e.find(" 0x00a"), std::string::npos) << e;
  EXPECT_NE(e.find("more error messages"), std::string::npos) << "both checks fire: " << e;
}

TEST(CoreAsserts, ProgBaseWrittenWhileAProgramRunsStopsTheCore) {
  const std::string e = rtl_error([](sim::CoreSim& c) {
    // a copy of 4096 rows keeps the core busy for thousands of cycles
    Program p;
    p.push_back(Instruction{
        .op = isa::Dma{.hbm_addr = 0, .local_addr = 0, .len = 4096, .path = DmaPath::HbmToVmem}});
    p.push_back(Instruction{.op = isa::End{}});
    c.mem_write(kProgramBase, p.to_bytes());
    c.csr_write(csr::kProgBase, static_cast<std::uint32_t>(kProgramBase));
    c.csr_write(csr::kCtrl, csr::ctrl::start.put(1));
    c.step(100, false);
    ASSERT_NE(csr::status::busy.get(c.csr_read(csr::kStatus)), 0u);
    c.csr_write(csr::kProgBase, 0x2000);
  });
  EXPECT_NE(e.find("csr_block: PROG_BASE written while a program runs"), std::string::npos) << e;
}

}  // namespace
}  // namespace tpuemu::test
