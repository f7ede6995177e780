// SPDX-License-Identifier: Apache-2.0
/* What a board gives the firmware: the core's CSR window, the device memory, a clock to wait on
 * and a byte stream to the host. The HAL table (board_hal.cpp) and the frame loop (main.cpp) are
 * written against these alone, so a board port supplies one file of them (mmio_core.cpp for a
 * board with tpu_top behind an MMIO window, qemu_virt/fake_core.cpp for the memory-backed stand-in
 * that QEMU runs) plus a link driver (uart16550.cpp). docs/fpga.md. */
#ifndef TPUEMU_FW_BOARD_H
#define TPUEMU_FW_BOARD_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The core: 32-bit CSR accesses at byte offsets of the CSR map (tpuemu/fw/csr.h). */
uint32_t board_csr_read(uint32_t addr);
void board_csr_write(uint32_t addr, uint32_t value);

/* Device memory (HBM) seen through the board's window: FW_ST_OK or FW_ST_OUT_OF_RANGE. */
uint64_t board_mem_capacity(void);
/* 32-bit words of the core's SMEM (its SmemWords parameter, which no CSR reports). */
uint32_t board_smem_words(void);
int board_mem_write(uint64_t addr, const uint8_t* data, size_t len);
int board_mem_read(uint64_t addr, uint8_t* data, size_t len);

/* Lets about n core cycles pass; returns how many did. */
uint64_t board_wait_cycles(uint64_t n);

/* The host link: a byte stream (a UART here). get blocks until a byte arrives; get_within waits
 * for about `polls` polls of the receiver and returns 0 if none came (1 and the byte if one did). */
void board_link_init(void);
uint8_t board_link_get(void);
int board_link_get_within(uint32_t polls, uint8_t* byte);
void board_link_put(const uint8_t* data, size_t len);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TPUEMU_FW_BOARD_H */
