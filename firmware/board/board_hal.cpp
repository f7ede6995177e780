// SPDX-License-Identifier: Apache-2.0
// The firmware's HAL table (tpuemu/fw/firmware.h) over the board's primitives (board.h): the
// same table the simulator binding fills (firmware/hal/sim_hal.cpp), with a board behind it.
#include "board_hal.h"

#include "board.h"

namespace {

uint32_t csr_read(void*, uint32_t addr) { return board_csr_read(addr); }
void csr_write(void*, uint32_t addr, uint32_t value) { board_csr_write(addr, value); }
int mem_write(void*, uint64_t addr, const uint8_t* data, size_t len) { return board_mem_write(addr, data, len); }
int mem_read(void*, uint64_t addr, uint8_t* data, size_t len) { return board_mem_read(addr, data, len); }
uint64_t wait_cycles(void*, uint64_t n) { return board_wait_cycles(n); }
uint64_t mem_capacity(void*) { return board_mem_capacity(); }
uint32_t smem_words(void*) { return board_smem_words(); }

}  // namespace

const fw_hal* board_hal() {
  // A board's HAL cannot fail in the simulator's sense (no exception to carry): no `failed`.
  static const fw_hal hal{nullptr,     csr_read,     csr_write, mem_write, mem_read,
                          wait_cycles, mem_capacity, nullptr,   smem_words};
  return &hal;
}
