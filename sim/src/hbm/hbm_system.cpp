#include <bit>
#include <stdexcept>
#include <string>

#include "Vhbm_ctrl_16ch.h"
#include "Vhbm_ctrl_8ch.h"
#include "hbm/hbm_system_impl.h"

namespace tpuemu::sim::hbm {

unsigned log2_exact(std::uint32_t v) {
  if (v == 0 || !std::has_single_bit(v)) throw std::invalid_argument("hbm: " + std::to_string(v) + " is not a power of two");
  return static_cast<unsigned>(std::countr_zero(v));
}

// hbm_pkg::amap_t: byte 0 order, then the widths of column, channel, bank group, bank, row.
std::uint64_t amap_word(const HbmSetup& s) {
  const dram::Config& c = s.dram;
  return std::uint64_t{static_cast<std::uint8_t>(s.order)} | std::uint64_t{log2_exact(c.columns)} << 8 |
         std::uint64_t{log2_exact(c.channels)} << 16 | std::uint64_t{log2_exact(c.bank_groups)} << 24 |
         std::uint64_t{log2_exact(c.banks_per_group)} << 32 | std::uint64_t{log2_exact(c.rows)} << 40;
}

Coordinate decode_address(const HbmSetup& s, std::uint64_t byte_address) {
  const dram::Config& c = s.dram;
  enum Field { kCo, kCh, kBg, kBa, kRo };
  Field lsb_first[5];
  switch (s.order) {
    case AddressOrder::RoChBaBgCo: { Field f[5] = {kCo, kBg, kBa, kCh, kRo}; std::copy(f, f + 5, lsb_first); break; }
    case AddressOrder::ChRoBaBgCo: { Field f[5] = {kCo, kBg, kBa, kRo, kCh}; std::copy(f, f + 5, lsb_first); break; }
    case AddressOrder::RoBaBgCoCh: { Field f[5] = {kCh, kCo, kBg, kBa, kRo}; std::copy(f, f + 5, lsb_first); break; }
    default: { Field f[5] = {kCo, kCh, kBg, kBa, kRo}; std::copy(f, f + 5, lsb_first); break; }
  }
  const std::uint32_t widths[5] = {log2_exact(c.columns), log2_exact(c.channels), log2_exact(c.bank_groups),
                                   log2_exact(c.banks_per_group), log2_exact(c.rows)};
  std::uint64_t a = byte_address >> log2_exact(c.burst_bytes());
  std::uint32_t value[5] = {};
  for (Field f : lsb_first) {
    value[f] = static_cast<std::uint32_t>(a & ((std::uint64_t{1} << widths[f]) - 1));
    a >>= widths[f];
  }
  return Coordinate{value[kCh], value[kBg], value[kBa], value[kRo], value[kCo]};
}

std::unique_ptr<HbmSystem> make_hbm_system(const HbmSetup& setup) {
  setup.dram.validate();
  const dram::Config& c = setup.dram;
  if (c.bank_groups != 4 || c.banks_per_group != 4 || c.burst_bytes() != 64) {
    throw std::invalid_argument("hbm: the controller is built for 4 bank groups x 4 banks and 64-byte bursts");
  }
  switch (c.channels) {
    case 8: return std::make_unique<VerilatedHbmSystem<Vhbm_ctrl_8ch, 8, 4>>(setup);
    case 16: return std::make_unique<VerilatedHbmSystem<Vhbm_ctrl_16ch, 16, 8>>(setup);
    default: break;
  }
  throw std::invalid_argument("hbm: no controller for " + std::to_string(c.channels) +
                              " channels in this build (8 and 16 are built)");
}

}  // namespace tpuemu::sim::hbm
