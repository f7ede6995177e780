// SPDX-License-Identifier: Apache-2.0
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

// An address map written most significant field first ("ro-ba-bg-ch-co"): each of the five
// fields exactly once, separated by '-'. The one parser of that text (the host's timing sets and
// --map, the SystemC door): on success `error` is empty and `lsb_first` holds the field codes,
// least significant first (AddressLayout::lsb_first); otherwise `error` says what is wrong.
struct ParsedAddressOrder {
  std::array<std::uint8_t, spec::hbm::kNumAddressFields> lsb_first{};
  std::string error;
};

inline ParsedAddressOrder parse_address_order(std::string_view text) {
  ParsedAddressOrder p;
  std::array<std::uint8_t, spec::hbm::kNumAddressFields> msb_first{};
  std::size_t n = 0, pos = 0;
  std::uint32_t seen = 0;
  while (true) {
    const auto dash = text.find('-', pos);
    const auto token = text.substr(pos, dash == std::string_view::npos ? std::string_view::npos : dash - pos);
    const int code = address_field_code(token);
    if (code < 0) return {{}, "unknown field \"" + std::string(token) + "\""};
    if ((seen >> code & 1u) != 0) return {{}, "field \"" + std::string(token) + "\" twice"};
    if (n == msb_first.size()) return {{}, "more than five fields"};
    seen |= 1u << code;
    msb_first[n++] = static_cast<std::uint8_t>(code);
    if (dash == std::string_view::npos) break;
    pos = dash + 1;
  }
  if (n != msb_first.size()) return {{}, "fewer than five fields"};
  for (std::size_t k = 0; k < n; ++k) p.lsb_first[k] = msb_first[n - 1 - k];
  return p;
}

inline std::string_view address_field_name(std::uint32_t code) {
  for (const auto& f : spec::hbm::kAddressFields) {
    if (f.code == code) return f.name;
  }
  return "?";
}

}  // namespace tpuemu::spec::hbm
