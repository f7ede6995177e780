// SPDX-License-Identifier: Apache-2.0
// The firmware's own CRC-32 (tpuemu/fw/protocol.h): a 256-entry table, one byte a step. It is
// small and needs no library, which the rv32 soft core and the -nostdlib check need; hosted builds
// link firmware/hal/crc32_zlib.cpp instead, and the rv32 test in QEMU proves the two agree on the
// wire, since each side checks the other's frames.
#include "tpuemu/fw/protocol.h"

namespace {

struct CrcTable {
  uint32_t v[256];
};

constexpr CrcTable make_crc_table() {
  CrcTable t{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1u) ? (0xEDB88320u ^ (c >> 1)) : (c >> 1);
    t.v[i] = c;
  }
  return t;
}

constexpr CrcTable kCrcTable = make_crc_table();

}  // namespace

extern "C" uint32_t fw_crc32(uint32_t crc, const uint8_t* data, size_t len) {
  uint32_t c = crc ^ 0xFFFFFFFFu;
  for (size_t i = 0; i < len; ++i) c = kCrcTable.v[(c ^ data[i]) & 0xFFu] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}
