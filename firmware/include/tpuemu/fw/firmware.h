// SPDX-License-Identifier: Apache-2.0
/* tpuemu firmware: the device-side command processor and its hardware abstraction layer.
 *
 * Freestanding (no heap, no exceptions, no RTTI, no OS); compiles for the host simulator binding
 * (firmware/hal/sim_hal.cpp) and for a soft core on an FPGA board. */
#ifndef TPUEMU_FW_FIRMWARE_H
#define TPUEMU_FW_FIRMWARE_H

#include <stddef.h>
#include <stdint.h>

#include "tpuemu/fw/csr.h"
#include "tpuemu/fw/protocol.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Hardware abstraction. Every function receives ctx. The memory functions return FW_ST_OK, or
 * FW_ST_OUT_OF_RANGE when [addr, addr+len) is not device memory, or FW_ST_HAL_ERROR. */
struct fw_hal {
  void* ctx;
  uint32_t (*csr_read)(void* ctx, uint32_t addr);
  void (*csr_write)(void* ctx, uint32_t addr, uint32_t value);
  int (*mem_write)(void* ctx, uint64_t addr, const uint8_t* data, size_t len);
  int (*mem_read)(void* ctx, uint64_t addr, uint8_t* data, size_t len);
  /* Lets about n cycles pass (simulator: advances the clock, may return early once the core is
   * idle; board: busy wait). Returns the cycles that actually passed. */
  uint64_t (*wait_cycles)(void* ctx, uint64_t n);
  /* Bytes of device memory (HBM) behind mem_read/mem_write. */
  uint64_t (*mem_capacity)(void* ctx);
  /* Optional (may be NULL): nonzero once the HAL has failed (e.g. the simulator threw); the
   * command in progress is then answered with FW_ST_HAL_ERROR. */
  int (*failed)(void* ctx);
  /* 32-bit words of SMEM behind the SMEM_ADDR/SMEM_DATA CSRs: the core's SmemWords, which its
   * CSRs do not report (the simulator: the preset's; a board: its build's). SMEM commands beyond
   * it are refused with FW_ST_OUT_OF_RANGE, since the core would wrap SMEM_ADDR around. */
  uint32_t (*smem_words)(void* ctx);
};

/* Cycles the RUN command waits between two STATUS polls. */
#define FW_RUN_POLL_SLICE 1024u

/* Decodes one request frame, executes it and encodes the response frame into out.
 * Every input — any bytes, any length — is answered: a malformed request gets an error frame whose
 * header status says why (docs/protocol.md). in and out must not overlap.
 * Returns 0 when a response was written (*out_len bytes), or -1 when out_cap is too small even for
 * an error frame (FW_HEADER_SIZE + FW_ERROR_PAYLOAD_SIZE bytes; then *out_len = 0).
 * The response never exceeds FW_HEADER_SIZE + FW_MAX_PAYLOAD bytes. */
int fw_handle_frame(const struct fw_hal* hal, const uint8_t* in, size_t in_len, uint8_t* out,
                    size_t out_cap, size_t* out_len);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TPUEMU_FW_FIRMWARE_H */
