// SPDX-License-Identifier: Apache-2.0
// The host link over a 16550-compatible UART (QEMU virt's ns16550a at 0x10000000; on an FPGA,
// e.g. Xilinx's AXI UART 16550): polled, 8N1, FIFOs on. BOARD_UART_BASE and BOARD_UART_SHIFT
// (register spacing, log2 bytes) come from the build.
#include "board.h"

#ifndef BOARD_UART_BASE
#error "BOARD_UART_BASE: the UART's base address"
#endif
#ifndef BOARD_UART_SHIFT
#define BOARD_UART_SHIFT 0
#endif

namespace {

// 16550 registers (with DLAB = 0)
constexpr uint32_t kRbrThr = 0, kIer = 1, kFcr = 2, kLcr = 3, kLsr = 5;
constexpr uint8_t kLsrDataReady = 0x01, kLsrThrEmpty = 0x20;

volatile uint8_t* reg(uint32_t r) {
  return reinterpret_cast<volatile uint8_t*>(static_cast<uintptr_t>(BOARD_UART_BASE) + (r << BOARD_UART_SHIFT));
}

// Between two polls of an empty receiver, spin on the CPU alone: under QEMU every UART access
// takes the emulator's global lock, and a tight poll loop keeps the thread that delivers the
// host's bytes from getting it.
void backoff() {
  for (volatile uint32_t i = 0; i < 64; ++i) {
  }
}

}  // namespace

extern "C" void board_link_init(void) {
  *reg(kIer) = 0x00;  // polled: no interrupts
  *reg(kLcr) = 0x03;  // 8 data bits, no parity, 1 stop bit
  // FIFOs on and cleared, receive trigger level 14: QEMU's 16550 takes as many bytes from the
  // host at a time as the trigger level allows (1 at level 1: ~7 KB/s; ~100 KB/s at 14)
  *reg(kFcr) = 0xC7;
}

extern "C" uint8_t board_link_get(void) {
  while ((*reg(kLsr) & kLsrDataReady) == 0) backoff();
  return *reg(kRbrThr);
}

extern "C" int board_link_get_within(uint32_t polls, uint8_t* byte) {
  for (uint32_t i = 0; i < polls; ++i) {
    if ((*reg(kLsr) & kLsrDataReady) != 0) {
      *byte = *reg(kRbrThr);
      return 1;
    }
    backoff();
  }
  return 0;
}

extern "C" void board_link_put(const uint8_t* data, size_t len) {
  for (size_t i = 0; i < len; ++i) {
    while ((*reg(kLsr) & kLsrThrEmpty) == 0) {
    }
    *reg(kRbrThr) = data[i];
  }
}
