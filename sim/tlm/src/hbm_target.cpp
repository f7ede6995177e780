// SPDX-License-Identifier: Apache-2.0
#include "tpuemu/tlm/hbm_target.h"

#include <algorithm>
#include <string_view>
#include <set>
#include <stdexcept>

#include "tpuemu/spec/contract.h"
#include "tpuemu/spec/hbm_address.h"
#include "tpuemu/tlm/hbm_beat_timing.h"

namespace tpuemu::tlm {

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
    const spec::hbm::ParsedAddressOrder order = spec::hbm::parse_address_order(c.address_map);
    if (!order.error.empty()) {
      throw std::invalid_argument("hbm target: address map '" + c.address_map + "': " + order.error +
                                  " (expected an order of the five fields ro, ba, bg, ch, co)");
    }
    s.order = sim::hbm::AddressOrder::Custom;
    s.custom_order = order.lsb_first;
  }
  s.closed_page = c.closed_page;
  s.dram.validate();
  return make_hbm_beat_timing(s, c.dram_cycles_per_core_cycle, c.beat_bytes, c.capacity_bytes);
}

}  // namespace tpuemu::tlm
