// The one address decoder of the HBM stack (docs/hbm.md "Address mapping"), the C++ mirror of
// the controller's hbm_addr_map: a byte address is the burst offset, then the five fields in an
// order of the contract's field codes (spec::hbm::kAddressFields), least significant first.
// Header only, so that the RTL tests use it without the simulator library.
#pragma once

#include <array>
#include <bit>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

#include "tpuemu/sim/dram_config.h"
#include "tpuemu/spec/contract.h"

namespace tpuemu::sim::hbm {

// One value per address field, indexed by its code (spec::hbm::field::co ... ro).
using FieldValues = std::array<std::uint32_t, 8>;

struct AddressLayout {
  std::array<std::uint8_t, spec::hbm::kNumAddressFields> lsb_first{};  // field codes
  FieldValues bits{};            // width of each field, by code
  std::uint32_t offset_bits = 0;  // log2 of the burst bytes

  // The named order with this amap_order_e code; throws std::invalid_argument for another code.
  static std::array<std::uint8_t, spec::hbm::kNumAddressFields> named_order(std::uint32_t code) {
    for (const auto& m : spec::hbm::kAddressMaps) {
      if (m.code == code) return m.lsb_first;
    }
    throw std::invalid_argument("hbm: no named address-map order " + std::to_string(code));
  }

  // Byte address -> field values (bits above the most significant field are dropped).
  FieldValues decode(std::uint64_t byte_address) const {
    FieldValues v{};
    std::uint64_t rest = byte_address >> offset_bits;
    for (const std::uint8_t f : lsb_first) {
      v[f] = static_cast<std::uint32_t>(rest & ((std::uint64_t{1} << bits[f]) - 1));
      rest >>= bits[f];
    }
    return v;
  }

  // Field values -> byte address of the burst (offset 0). Values must fit their widths.
  std::uint64_t encode(const FieldValues& v) const {
    std::uint64_t a = 0;
    std::uint32_t shift = offset_bits;
    for (const std::uint8_t f : lsb_first) {
      a |= std::uint64_t{v[f]} << shift;
      shift += bits[f];
    }
    return a;
  }
};

// The layout of a device's geometry under an order (field codes, least significant first).
// Throws std::invalid_argument for a size that is not a power of two.
inline AddressLayout address_layout(
    const std::array<std::uint8_t, spec::hbm::kNumAddressFields>& lsb_first,
    const dram::Config& c) {
  const auto log2_exact = [](std::uint32_t v) {
    if (!std::has_single_bit(v)) {
      throw std::invalid_argument("hbm: " + std::to_string(v) + " is not a power of two");
    }
    return static_cast<std::uint32_t>(std::countr_zero(v));
  };
  namespace field = spec::hbm::field;
  AddressLayout l;
  l.lsb_first = lsb_first;
  l.bits[field::co] = log2_exact(c.columns);
  l.bits[field::ch] = log2_exact(c.channels);
  l.bits[field::bg] = log2_exact(c.bank_groups);
  l.bits[field::ba] = log2_exact(c.banks_per_group);
  l.bits[field::ro] = log2_exact(c.rows);
  l.offset_bits = log2_exact(c.burst_bytes());
  return l;
}

// The code of a field's name ("ro", "ba", ...) from the contract, or -1.
inline int address_field_code(std::string_view name) {
  for (const auto& f : spec::hbm::kAddressFields) {
    if (f.name == name) return static_cast<int>(f.code);
  }
  return -1;
}

inline std::string_view address_field_name(std::uint32_t code) {
  for (const auto& f : spec::hbm::kAddressFields) {
    if (f.code == code) return f.name;
  }
  return "?";
}

}  // namespace tpuemu::sim::hbm
