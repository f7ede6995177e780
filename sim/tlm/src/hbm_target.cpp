#include "tpuemu/tlm/hbm_target.h"

#include <algorithm>
#include <array>
#include <string_view>
#include <set>
#include <stdexcept>

#include "tpuemu/spec/contract.h"
#include "tpuemu/spec/hbm_address.h"
#include "tpuemu/tlm/hbm_beat_timing.h"

namespace tpuemu::tlm {

namespace {

// "ro-ba-bg-ch-co" (most significant field first) -> field codes, least significant first.
std::array<std::uint8_t, spec::hbm::kNumAddressFields> custom_order(const std::string& text) {
  std::array<std::uint8_t, spec::hbm::kNumAddressFields> lsb_first{};
  std::size_t count = 0, begin = 0;
  unsigned seen = 0;
  while (begin <= text.size()) {
    const std::size_t end = std::min(text.find('-', begin), text.size());
    const int code = spec::hbm::address_field_code(std::string_view(text).substr(begin, end - begin));
    if (code < 0 || count == lsb_first.size() || (seen >> code & 1u) != 0) break;
    seen |= 1u << code;
    lsb_first[lsb_first.size() - 1 - count++] = static_cast<std::uint8_t>(code);
    begin = end + 1;
  }
  if (count != lsb_first.size() || seen != (1u << spec::hbm::kNumAddressFields) - 1 || begin != text.size() + 1) {
    throw std::invalid_argument("hbm target: address map '" + text +
                                "' is not an order of the five fields ro, ba, bg, ch, co");
  }
  return lsb_first;
}

}  // namespace

std::unique_ptr<BeatTimingModel> make_hbm_target_timing(const HbmTargetConfig& c) {
  sim::hbm::HbmSetup s;
  s.dram.channels = c.channels;
  s.dram.bank_groups = c.bank_groups;
  s.dram.banks_per_group = c.banks_per_group;
  s.dram.rows = c.rows;
  s.dram.columns = c.columns;
  s.dram.bus_bytes = c.bus_bytes;
  s.dram.burst_length = c.burst_length;
  std::set<std::string> seen;
  for (const auto& [name, value] : c.timings) {
    bool known = false;
#define TPUEMU_HBM_TARGET_TIMING(field, doc) \
  if (name == #field) {                      \
    s.dram.field = value;                    \
    known = true;                            \
  }
    TPUEMU_SPEC_HBM_TIMINGS(TPUEMU_HBM_TARGET_TIMING)
#undef TPUEMU_HBM_TARGET_TIMING
    if (!known) throw std::invalid_argument("hbm target: unknown timing '" + name + "'");
    if (!seen.insert(name).second) throw std::invalid_argument("hbm target: timing '" + name + "' given twice");
  }
  for (std::string_view name : spec::hbm::kTimingNames) {
    if (!seen.count(std::string(name))) throw std::invalid_argument("hbm target: timing '" + std::string(name) + "' missing");
  }
  const auto map = std::find_if(spec::hbm::kAddressMaps.begin(), spec::hbm::kAddressMaps.end(),
                                [&](const auto& m) { return m.order == c.address_map; });
  if (map != spec::hbm::kAddressMaps.end()) {
    s.order = static_cast<sim::hbm::AddressOrder>(map->code);
  } else {
    s.order = sim::hbm::AddressOrder::Custom;
    s.custom_order = custom_order(c.address_map);
  }
  s.closed_page = c.closed_page;
  s.dram.validate();
  return make_hbm_beat_timing(s, c.dram_cycles_per_core_cycle, c.beat_bytes, c.capacity_bytes);
}

}  // namespace tpuemu::tlm
