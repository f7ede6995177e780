// SPDX-License-Identifier: Apache-2.0
// Bit and byte access to Verilator ports of any width (integral up to 64 bits, VlWide beyond;
// both little-endian).
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

namespace tpuemu::sim {

template <class P>
std::uint64_t get_bits(const P& port, unsigned lsb, unsigned width) {
  if constexpr (std::is_integral_v<P>) {
    const std::uint64_t v = static_cast<std::uint64_t>(port) >> lsb;
    return width >= 64 ? v : v & ((std::uint64_t{1} << width) - 1);
  } else {
    std::uint64_t v = 0;
    for (unsigned i = 0; i < width; ++i) {
      const unsigned b = lsb + i;
      v |= std::uint64_t{(port[b / 32] >> (b % 32)) & 1u} << i;
    }
    return v;
  }
}

template <class P>
void set_bits(P& port, unsigned lsb, unsigned width, std::uint64_t value) {
  if constexpr (std::is_integral_v<P>) {
    const std::uint64_t mask = (width >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << width) - 1) << lsb;
    port = static_cast<P>((static_cast<std::uint64_t>(port) & ~mask) | ((value << lsb) & mask));
  } else {
    for (unsigned i = 0; i < width; ++i) {
      const unsigned b = lsb + i;
      const std::uint32_t bit = 1u << (b % 32);
      if ((value >> i) & 1) port[b / 32] |= bit;
      else port[b / 32] &= ~bit;
    }
  }
}

template <class P>
void put_bytes(P& port, const void* src, unsigned n) {
  if constexpr (std::is_integral_v<P>) {
    P v = 0;
    std::memcpy(&v, src, n < sizeof(P) ? n : sizeof(P));
    port = v;
  } else {
    std::memcpy(port.data(), src, n);
  }
}

template <class P>
void get_bytes(const P& port, void* dst, unsigned n) {
  if constexpr (std::is_integral_v<P>) {
    std::memcpy(dst, &port, n < sizeof(P) ? n : sizeof(P));
  } else {
    std::memcpy(dst, port.data(), n);
  }
}

}  // namespace tpuemu::sim
