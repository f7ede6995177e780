// SPDX-License-Identifier: Apache-2.0
// The firmware's table CRC-32 (firmware/src/crc32.cpp, what the rv32 soft core runs) against zlib's
// crc32, which the hosted builds use for the same function: the two sides of every frame must agree.
#include <zlib.h>

#include <cstdint>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "tpuemu/fw/protocol.h"

namespace {

std::uint32_t zlib_crc(std::uint32_t crc, const std::vector<std::uint8_t>& data, std::size_t from,
                       std::size_t n) {
  return static_cast<std::uint32_t>(crc32(crc, data.data() + from, static_cast<uInt>(n)));
}

TEST(Crc32Table, StandardCheckValue) {
  const std::uint8_t check[] = {'1', '2', '3', '4', '5', '6', '7', '8', '9'};
  EXPECT_EQ(fw_crc32(0, check, sizeof check), 0xCBF43926u);
  EXPECT_EQ(fw_crc32(0, nullptr, 0), 0u);
}

TEST(Crc32Table, EqualsZlibOnRandomDataAndSplits) {
  std::mt19937 rng(36);
  for (std::size_t size : {1u, 3u, 64u, 1000u, 65537u}) {
    std::vector<std::uint8_t> data(size);
    for (auto& b : data) b = static_cast<std::uint8_t>(rng());
    const std::uint32_t whole = fw_crc32(0, data.data(), data.size());
    EXPECT_EQ(whole, zlib_crc(0, data, 0, size)) << size;
    const std::size_t split = size / 3;
    const std::uint32_t first = fw_crc32(0, data.data(), split);
    EXPECT_EQ(first, zlib_crc(0, data, 0, split)) << size;
    EXPECT_EQ(fw_crc32(first, data.data() + split, size - split), whole) << size;
    EXPECT_EQ(zlib_crc(first, data, split, size - split), whole) << size;
  }
}

}  // namespace
