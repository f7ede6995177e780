// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: any bytes into the firmware's command processor. The answer must always be a
// well-formed response frame; ASan/UBSan catch any out-of-bounds access.
//   cmake -DCMAKE_CXX_COMPILER=clang++ -DTPUEMU_BUILD_FUZZ=ON ... && ./fuzz_firmware_frame
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tpuemu/fw/firmware.h"

namespace {

// A tiny fake core: CSR file, 64 KiB of memory, runs finish after a few cycles.
struct Fake {
  uint32_t csr[0x200 / 4];
  uint8_t mem[1 << 16];
  uint64_t busy_left;
};

Fake g_fake;

uint32_t rd(void* c, uint32_t a) {
  Fake* f = static_cast<Fake*>(c);
  if (a == FW_CSR_ID) return FW_ID_VALUE;
  if (a == FW_CSR_CONFIG) {
    return FW_CONFIG_DIM_PUT(8u) | FW_CONFIG_LOG2_VMEM_ROWS_PUT(13u) | FW_CONFIG_LOG2_ACC_ROWS_PUT(10u);
  }
  return a / 4 < sizeof f->csr / 4 ? f->csr[a / 4] : 0;
}
void wr(void* c, uint32_t a, uint32_t v) {
  Fake* f = static_cast<Fake*>(c);
  if (a == FW_CSR_CTRL) {
    if (v & FW_CTRL_SOFT_RESET) memset(f->csr, 0, sizeof f->csr);
    if (v & FW_CTRL_START) {
      f->csr[FW_CSR_STATUS / 4] = FW_STATUS_BUSY;
      f->busy_left = 3000;
    }
    return;
  }
  if (a / 4 < sizeof f->csr / 4) f->csr[a / 4] = v;
}
int mw(void* c, uint64_t a, const uint8_t* d, size_t n) {
  Fake* f = static_cast<Fake*>(c);
  if (a > sizeof f->mem || n > sizeof f->mem - a) abort();  // the firmware checks ranges first
  memcpy(f->mem + a, d, n);
  return 0;
}
int mr(void* c, uint64_t a, uint8_t* d, size_t n) {
  Fake* f = static_cast<Fake*>(c);
  if (a > sizeof f->mem || n > sizeof f->mem - a) abort();
  memcpy(d, f->mem + a, n);
  return 0;
}
uint64_t wait(void* c, uint64_t n) {
  Fake* f = static_cast<Fake*>(c);
  if (!(f->csr[FW_CSR_STATUS / 4] & FW_STATUS_BUSY)) return 0;
  const uint64_t k = n < f->busy_left ? n : f->busy_left;
  f->busy_left -= k;
  if (f->busy_left == 0) f->csr[FW_CSR_STATUS / 4] = FW_STATUS_DONE;
  return k;
}
uint64_t cap(void*) { return sizeof g_fake.mem; }
uint32_t smem_words(void*) { return 256; }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const fw_hal hal = {&g_fake, rd, wr, mw, mr, wait, cap, nullptr, smem_words};
  static uint8_t out[FW_MAX_FRAME];
  // Exact-size copy so reads past the end of the input are caught.
  uint8_t* in = static_cast<uint8_t*>(malloc(size ? size : 1));
  if (size) memcpy(in, data, size);
  // Inputs starting with '!' get a correct magic, version, type, length and CRC, so the fuzzer
  // reaches the command decoders instead of stopping at the CRC check.
  if (size > FW_HEADER_SIZE && data[0] == '!') {
    fw_frame_finish(in, FW_TYPE_REQUEST, in[FW_OFF_COMMAND], 0, fw_get_u32(in + FW_OFF_SEQ),
                    static_cast<uint32_t>(size - FW_HEADER_SIZE));
  }
  size_t n = 0;
  // Vary the output capacity with the low bit of seq, so "does not fit" paths are reached too. Not
  // with the input's size: most requests have one exact size, so their success would be unreachable.
  const bool small_out = size >= FW_HEADER_SIZE && (data[FW_OFF_SEQ] & 1u);
  const size_t out_cap = small_out ? FW_HEADER_SIZE + 64 + size % 256 : sizeof out;
  if (fw_handle_frame(&hal, size ? in : nullptr, size, out, out_cap, &n) != 0) abort();
  fw_frame_header h;
  const uint8_t* payload = nullptr;
  if (n > out_cap || fw_frame_decode(out, n, FW_MAX_PAYLOAD, &h, &payload, nullptr, nullptr) != 0 ||
      h.type != FW_TYPE_RESPONSE)
    abort();
  if (h.status != FW_ST_OK && h.payload_len != FW_ERROR_PAYLOAD_SIZE) abort();
  free(in);
  return 0;
}
