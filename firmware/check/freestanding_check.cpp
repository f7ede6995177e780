// SPDX-License-Identifier: Apache-2.0
// Link check: the firmware library linked with -nostdlib (no libc, no libstdc++, no start files),
// against a do-nothing HAL. If the firmware needed anything from a hosted C++ runtime, this
// executable would fail to link. It is never run. The only symbols a freestanding GCC/Clang target
// must provide are the four below (the compiler may emit calls to them for loops and copies).
#include <stddef.h>
#include <stdint.h>

#include "tpuemu/fw/firmware.h"

extern "C" {
void* memcpy(void* d, const void* s, size_t n) {
  auto* dp = static_cast<volatile uint8_t*>(d);
  const auto* sp = static_cast<const volatile uint8_t*>(s);
  for (size_t i = 0; i < n; ++i) dp[i] = sp[i];
  return d;
}
void* memmove(void* d, const void* s, size_t n) {
  auto* dp = static_cast<volatile uint8_t*>(d);
  const auto* sp = static_cast<const volatile uint8_t*>(s);
  if (dp < sp) {
    for (size_t i = 0; i < n; ++i) dp[i] = sp[i];
  } else {
    for (size_t i = n; i > 0; --i) dp[i - 1] = sp[i - 1];
  }
  return d;
}
void* memset(void* d, int c, size_t n) {
  auto* dp = static_cast<volatile uint8_t*>(d);
  for (size_t i = 0; i < n; ++i) dp[i] = static_cast<uint8_t>(c);
  return d;
}
int memcmp(const void* a, const void* b, size_t n) {
  const auto* ap = static_cast<const volatile uint8_t*>(a);
  const auto* bp = static_cast<const volatile uint8_t*>(b);
  for (size_t i = 0; i < n; ++i)
    if (ap[i] != bp[i]) return ap[i] < bp[i] ? -1 : 1;
  return 0;
}
}

namespace {
uint32_t rd(void*, uint32_t) { return 0; }
void wr(void*, uint32_t, uint32_t) {}
int mw(void*, uint64_t, const uint8_t*, size_t) { return 0; }
int mr(void*, uint64_t, uint8_t*, size_t) { return 0; }
uint64_t wait(void*, uint64_t n) { return n; }
uint64_t cap(void*) { return 0; }
uint32_t smem(void*) { return 0; }

uint8_t in_buf[64];
uint8_t out_buf[FW_HEADER_SIZE + 256];
}  // namespace

extern "C" void fw_check_entry() {
  fw_hal hal{nullptr, rd, wr, mw, mr, wait, cap, nullptr, smem};
  size_t n = 0;
  fw_handle_frame(&hal, in_buf, sizeof in_buf, out_buf, sizeof out_buf, &n);
  for (;;) {
  }
}
