// SPDX-License-Identifier: Apache-2.0
// The rtl_matmul example's program on the Verilator harness (the rtl backend's CoreSim, its simple
// memory with the same preset figures): prints the cycles from the PROG_BASE write to the edge
// that leaves the core idle, the span the example reports, so rtl_core_cycles_test.sh can hold
// RtlCore to the harness cycle for cycle.
#include <cstdio>
#include <exception>
#include <span>

#include "rtl_matmul_program.h"
#include "tpuemu/sim/core_sim.h"

int main() {
  using namespace rtl_matmul;
  try {
    tpuemu::sim::MemoryModelConfig mem;
    mem.capacity_bytes = kHbmCapacity;
    mem.latency_cycles = kLatencyCycles;
    mem.bytes_per_cycle = kBytesPerCycle;
    const auto core = tpuemu::sim::make_core_sim(kPreset, mem);
    // The operands' values do not change the timing: the program alone.
    core->mem_write(kProgBase, std::span<const std::uint8_t>(kProgram, sizeof kProgram));
    const std::uint64_t start = core->cycle();
    core->csr_write(csr::kProgBase, static_cast<std::uint32_t>(kProgBase));
    core->csr_write(csr::kCtrl, csr::kCtrlStart);
    core->step(10'000'000, true);
    const std::uint32_t status = core->csr_read(csr::kStatus);
    if ((status & csr::kStatusDone) == 0 || (status & (csr::kStatusBusy | csr::kStatusError)) != 0) {
      std::fprintf(stderr, "harness_cycles: the program did not finish cleanly (STATUS 0x%x)\n", status);
      return 1;
    }
    std::printf("%llu\n", static_cast<unsigned long long>(core->cycle() - start));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "harness_cycles: %s\n", e.what());
    return 1;
  }
  return 0;
}
