// SPDX-License-Identifier: Apache-2.0
// A board with tpu_top behind MMIO windows (docs/fpga.md): the CSR port at BOARD_CSR_BASE and the
// device memory at BOARD_HBM_BASE (BOARD_HBM_BYTES long), both from the build. Accesses are
// volatile and of the width the bus expects (32-bit CSRs, bytes for memory, which any AXI
// interconnect accepts; a lab with a wider window replaces the two copies).
#include "board.h"
#include "tpuemu/fw/firmware.h"

#if !defined(BOARD_CSR_BASE) || !defined(BOARD_HBM_BASE) || !defined(BOARD_HBM_BYTES)
#error "BOARD_CSR_BASE, BOARD_HBM_BASE and BOARD_HBM_BYTES: the board's windows"
#endif
#if !defined(BOARD_SMEM_WORDS)
#error "BOARD_SMEM_WORDS: the SmemWords of the bitstream's tpu_top"
#endif

namespace {

volatile uint32_t* csr(uint32_t addr) {
  return reinterpret_cast<volatile uint32_t*>(static_cast<uintptr_t>(BOARD_CSR_BASE) + addr);
}
volatile uint8_t* hbm(uint64_t addr) {
  return reinterpret_cast<volatile uint8_t*>(static_cast<uintptr_t>(BOARD_HBM_BASE + addr));
}
bool in_window(uint64_t addr, size_t len) {
  return addr <= BOARD_HBM_BYTES && len <= BOARD_HBM_BYTES - addr;
}

}  // namespace

extern "C" uint32_t board_csr_read(uint32_t addr) { return *csr(addr); }
extern "C" void board_csr_write(uint32_t addr, uint32_t value) { *csr(addr) = value; }
extern "C" uint64_t board_mem_capacity(void) { return BOARD_HBM_BYTES; }
extern "C" uint32_t board_smem_words(void) { return BOARD_SMEM_WORDS; }

extern "C" int board_mem_write(uint64_t addr, const uint8_t* data, size_t len) {
  if (!in_window(addr, len)) return static_cast<int>(FW_ST_OUT_OF_RANGE);
  for (size_t i = 0; i < len; ++i) *hbm(addr + i) = data[i];
  return static_cast<int>(FW_ST_OK);
}

extern "C" int board_mem_read(uint64_t addr, uint8_t* data, size_t len) {
  if (!in_window(addr, len)) return static_cast<int>(FW_ST_OUT_OF_RANGE);
  for (size_t i = 0; i < len; ++i) data[i] = *hbm(addr + i);
  return static_cast<int>(FW_ST_OK);
}

extern "C" uint64_t board_wait_cycles(uint64_t n) {
  // Each CSR read crosses into the core's clock domain and takes at least one of its cycles, so n
  // reads let at least n cycles pass; RUN polls STATUS between waits anyway.
  for (uint64_t i = 0; i < n; ++i) (void)board_csr_read(FW_CSR_STATUS);
  return n;
}
