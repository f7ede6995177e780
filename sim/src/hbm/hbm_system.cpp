// SPDX-License-Identifier: Apache-2.0
#include <bit>
#include <stdexcept>
#include <string>

#include "Vhbm_board_mem_8ch_b16.h"
#include "Vhbm_ctrl_16ch.h"
#include "Vhbm_ctrl_8ch.h"
#include "hbm/hbm_system_impl.h"

namespace tpuemu::sim::hbm {

unsigned log2_exact(std::uint32_t v) {
  if (v == 0 || !std::has_single_bit(v)) throw std::invalid_argument("hbm: " + std::to_string(v) + " is not a power of two");
  return static_cast<unsigned>(std::countr_zero(v));
}

// hbm_spec_pkg::amap_t: byte 0 order, then the widths of column, channel, bank group, bank, row;
// bits [62:48] the custom order's field codes, 3 bits each, least significant field first.
std::uint64_t amap_word(const HbmSetup& s) {
  const dram::Config& c = s.dram;
  std::uint64_t custom = 0;
  if (s.order == AddressOrder::Custom) {
    const auto codes = address_order_codes(s);
    for (std::size_t k = 0; k < codes.size(); ++k) custom |= std::uint64_t{codes[k]} << (3 * k);
  }
  return std::uint64_t{static_cast<std::uint8_t>(s.order)} | std::uint64_t{log2_exact(c.columns)} << 8 |
         std::uint64_t{log2_exact(c.channels)} << 16 | std::uint64_t{log2_exact(c.bank_groups)} << 24 |
         std::uint64_t{log2_exact(c.banks_per_group)} << 32 | std::uint64_t{log2_exact(c.rows)} << 40 |
         custom << 48;
}

AddressLayout address_layout(const HbmSetup& s) { return address_layout(address_order_codes(s), s.dram); }

// The beat size of the Verilated board memory (hbm_board_mem, rtl/CMakeLists.txt).
constexpr std::uint32_t kBoardBeatBytes = 16;

std::unique_ptr<HbmSystem> make_hbm_system(const HbmSetup& setup) {
  setup.dram.validate();
  if (const std::string why = setup.queues.problem(); !why.empty()) throw std::invalid_argument("hbm: " + why);
  const dram::Config& c = setup.dram;
  if (c.bank_groups != 4 || c.banks_per_group != 4 || c.burst_bytes() != 64) {
    throw std::invalid_argument("hbm: the controller is built for 4 bank groups x 4 banks and 64-byte bursts");
  }
  if (setup.board) {
    if (c.channels != 8) {
      throw std::invalid_argument("hbm: the board top is built for 8 channels, not " + std::to_string(c.channels));
    }
    if (setup.board->core_beat_bytes == 0) {
      throw std::invalid_argument("hbm: the board top takes the core's beats (BoardShim::core_beat_bytes); its burst port "
                                  "is internal");
    }
    if (setup.board->core_beat_bytes != kBoardBeatBytes) {
      throw std::invalid_argument("hbm: the board top's RTL beat bridge is built for " + std::to_string(kBoardBeatBytes) +
                                  "-byte beats (DIM 16, the default preset), not " +
                                  std::to_string(setup.board->core_beat_bytes));
    }
    return std::make_unique<VerilatedBoardHbmSystem<Vhbm_board_mem_8ch_b16, 8, 4>>(setup);
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
