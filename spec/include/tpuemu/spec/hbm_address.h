// The one address decoder of the HBM stack (docs/hbm.md "Address mapping"), the C++ mirror of
// the controller's hbm_addr_map: a byte address is the burst offset, then the five fields in an
// order of the contract's field codes (spec::hbm::kAddressFields), least significant first.
// Header only and part of the contract's C++ view, so that the host's config layer, the
// simulator and the RTL tests share it without depending on each other.
#pragma once

#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

#include "tpuemu/spec/contract.h"

namespace tpuemu::spec::hbm {


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

}  // namespace tpuemu::spec::hbm
