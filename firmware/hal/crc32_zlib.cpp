// SPDX-License-Identifier: Apache-2.0
// The firmware's CRC-32 in hosted builds: zlib's crc32, the same IEEE 802.3 CRC as the table in
// firmware/src/crc32.cpp (same polynomial, initial value and final xor, same way of continuing)
// but several GB/s instead of a few hundred MB/s. In-process devices check every frame twice
// (firmware and host), so this is what lets a 64 MiB HBM read move at memory speed.
#include <zlib.h>

#include "tpuemu/fw/protocol.h"

extern "C" uint32_t fw_crc32(uint32_t crc, const uint8_t* data, size_t len) {
  // zlib takes lengths as uInt: feed larger spans in pieces.
  constexpr size_t kMaxStep = 1u << 30;
  uLong c = crc;
  while (len > 0) {
    const size_t n = len < kMaxStep ? len : kMaxStep;
    c = crc32(c, data, static_cast<uInt>(n));
    data += n;
    len -= n;
  }
  return static_cast<uint32_t>(c);
}
