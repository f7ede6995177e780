// SPDX-License-Identifier: Apache-2.0
// A device geometry's HBM address layout: the field widths of a dram::Config under an order of the
// contract's field codes (docs/hbm.md "Address mapping"). The decoder is the contract's one,
// tpuemu/spec/hbm_address.h, which this only feeds.
#pragma once

#include <array>
#include <bit>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "tpuemu/sim/dram_config.h"
#include "tpuemu/spec/hbm_address.h"

namespace tpuemu::sim::hbm {

using spec::hbm::AddressLayout;
using spec::hbm::FieldValues;
using spec::hbm::address_field_code;
using spec::hbm::address_field_name;

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

}  // namespace tpuemu::sim::hbm
