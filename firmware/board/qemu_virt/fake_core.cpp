// SPDX-License-Identifier: Apache-2.0
// The memory-backed stand-in for tpu_top that the firmware runs against in QEMU
// (docs/fpga.md): the CSR map with the RTL's register semantics for everything the protocol
// reaches without running a program - ID and CONFIG of the preset the build names, SMEM through
// SMEM_ADDR/SMEM_DATA with the address advancing on every data access, semaphores of
// FW_SEM_WIDTH bits, soft reset - and the device memory as RAM. It has no engines: CTRL.start
// ends the run at once (STATUS.done, every counter 0), which is why the QEMU test covers the
// protocol subset (PING, INFO, memory and SMEM round trips, error frames) and not RUN.
//
// The sizes come from the preset (FAKE_DIM, FAKE_LOG2_VMEM_ROWS, FAKE_LOG2_ACC_ROWS,
// FAKE_SMEM_WORDS, FAKE_HBM_BYTES: firmware/board/CMakeLists.txt reads configs/presets).
#include "board.h"
#include "tpuemu/fw/firmware.h"

#if !defined(FAKE_DIM) || !defined(FAKE_LOG2_VMEM_ROWS) || !defined(FAKE_LOG2_ACC_ROWS) || \
    !defined(FAKE_SMEM_WORDS) || !defined(FAKE_HBM_BYTES)
#error "the fake core's sizes come from the preset (firmware/board/CMakeLists.txt)"
#endif

namespace {

struct FakeCore {
  uint32_t status = 0, prog_base = 0, smem_addr = 0;
  uint32_t sems[FW_NUM_SEMS] = {};
  uint32_t smem[FAKE_SMEM_WORDS] = {};
};
FakeCore core;
// Not zeroed at start (.noinit): HBM holds whatever it held, as on a board.
__attribute__((section(".noinit"))) uint8_t hbm[FAKE_HBM_BYTES];

constexpr uint32_t kSmemMask = FAKE_SMEM_WORDS - 1;
static_assert((FAKE_SMEM_WORDS & kSmemMask) == 0, "smem_words is a power of two");
constexpr uint32_t kSemMask = (1u << FW_SEM_WIDTH) - 1;

bool is_sem(uint32_t addr) { return addr >= FW_CSR_SEM(0) && addr < FW_CSR_SEM(FW_NUM_SEMS) && (addr & 3u) == 0; }
bool in_memory(uint64_t addr, size_t len) { return addr <= FAKE_HBM_BYTES && len <= FAKE_HBM_BYTES - addr; }

}  // namespace

extern "C" uint32_t board_csr_read(uint32_t addr) {
  switch (addr) {
    case FW_CSR_ID: return FW_ID_VALUE;
    case FW_CSR_CONFIG:
      return FW_CONFIG_DIM_PUT(FAKE_DIM) | FW_CONFIG_LOG2_VMEM_ROWS_PUT(FAKE_LOG2_VMEM_ROWS) |
             FW_CONFIG_LOG2_ACC_ROWS_PUT(FAKE_LOG2_ACC_ROWS);
    case FW_CSR_STATUS: return core.status;
    case FW_CSR_PROG_BASE: return core.prog_base;
    case FW_CSR_QUEUE_STATE: return FW_QUEUE_STATE_FETCH_STOPPED;
    case FW_CSR_SMEM_ADDR: return core.smem_addr;
    case FW_CSR_SMEM_DATA: {
      const uint32_t v = core.smem[core.smem_addr];
      core.smem_addr = (core.smem_addr + 1) & kSmemMask;
      return v;
    }
    default: break;
  }
  if (is_sem(addr)) return core.sems[(addr - FW_CSR_SEM(0)) / 4];
  return 0;  // ERROR_INFO, HEAD_WAIT, PC, counters: nothing ran
}

extern "C" void board_csr_write(uint32_t addr, uint32_t value) {
  switch (addr) {
    case FW_CSR_CTRL:
      if ((value & FW_CTRL_SOFT_RESET) != 0) {
        core.status = 0;
        for (uint32_t& s : core.sems) s = 0;
      } else if ((value & FW_CTRL_START) != 0 && (core.status & FW_STATUS_BUSY) == 0) {
        core.status = FW_STATUS_DONE;  // no engines: the run is over as it starts
      }
      return;
    case FW_CSR_PROG_BASE: core.prog_base = value; return;
    case FW_CSR_SMEM_ADDR: core.smem_addr = value & kSmemMask; return;
    case FW_CSR_SMEM_DATA:
      core.smem[core.smem_addr] = value;
      core.smem_addr = (core.smem_addr + 1) & kSmemMask;
      return;
    default: break;
  }
  if (is_sem(addr)) core.sems[(addr - FW_CSR_SEM(0)) / 4] = value & kSemMask;
}

extern "C" uint64_t board_mem_capacity(void) { return FAKE_HBM_BYTES; }
extern "C" uint32_t board_smem_words(void) { return FAKE_SMEM_WORDS; }

extern "C" int board_mem_write(uint64_t addr, const uint8_t* data, size_t len) {
  if (!in_memory(addr, len)) return static_cast<int>(FW_ST_OUT_OF_RANGE);
  fw_copy(hbm + addr, data, len);
  return static_cast<int>(FW_ST_OK);
}

extern "C" int board_mem_read(uint64_t addr, uint8_t* data, size_t len) {
  if (!in_memory(addr, len)) return static_cast<int>(FW_ST_OUT_OF_RANGE);
  fw_copy(data, hbm + addr, len);
  return static_cast<int>(FW_ST_OK);
}

extern "C" uint64_t board_wait_cycles(uint64_t n) { return n; }
