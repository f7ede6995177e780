// SPDX-License-Identifier: Apache-2.0
// A validated HBM timing set as the DRAM device model and the RTL controller take it.
#include "tpuemu/sim_setup/hbm_setup.h"

#include <algorithm>
#include <string>

#include <fmt/format.h>

#include "tpuemu/base/error.h"

namespace tpuemu {

sim::hbm::HbmSetup hbm_setup_from(const HbmTimingSet& set, bool closed_page) {
  sim::hbm::HbmSetup h;
  const HbmGeometry& g = set.geometry;
  const HbmTimings& t = set.timings;
  h.dram.channels = g.channels;
  h.dram.bank_groups = g.bank_groups;
  h.dram.banks_per_group = g.banks_per_group;
  h.dram.rows = g.rows;
  h.dram.columns = g.columns;
  h.dram.bus_bytes = g.bus_bytes;
  h.dram.burst_length = g.burst_length;
#define TPUEMU_HBM_TIMING_COPY(name, doc) h.dram.name = t.name;
  TPUEMU_SPEC_HBM_TIMINGS(TPUEMU_HBM_TIMING_COPY)
#undef TPUEMU_HBM_TIMING_COPY
  // A named order by its code; any other permutation as the controller's custom order.
  const std::string order = set.address_map.to_string();
  const auto named = std::find_if(spec::hbm::kAddressMaps.begin(), spec::hbm::kAddressMaps.end(),
                                  [&](const auto& m) { return m.order == order; });
  if (named != spec::hbm::kAddressMaps.end()) {
    h.order = static_cast<sim::hbm::AddressOrder>(named->code);
  } else {
    h.order = sim::hbm::AddressOrder::Custom;
    h.custom_order = set.address_map.lsb_first_codes();
  }
  h.closed_page = closed_page;
  h.queues = set.queues;
  return h;
}

}  // namespace tpuemu
