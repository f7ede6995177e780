// A validated HBM timing set as the DRAM device model and the RTL controller take it.
#include "tpuemu/sim_setup/hbm_setup.h"

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
  h.dram.CL = t.CL;
  h.dram.CWL = t.CWL;
  h.dram.tRCD = t.tRCD;
  h.dram.tRP = t.tRP;
  h.dram.tRAS = t.tRAS;
  h.dram.tRC = t.tRC;
  h.dram.tRRD_S = t.tRRD_S;
  h.dram.tRRD_L = t.tRRD_L;
  h.dram.tFAW = t.tFAW;
  h.dram.tCCD_S = t.tCCD_S;
  h.dram.tCCD_L = t.tCCD_L;
  h.dram.tWTR_S = t.tWTR_S;
  h.dram.tWTR_L = t.tWTR_L;
  h.dram.tWR = t.tWR;
  h.dram.tRTP = t.tRTP;
  h.dram.tRFC = t.tRFC;
  h.dram.tREFI = t.tREFI;
  const std::string order = set.address_map.to_string();
  if (order == "ro-ba-bg-ch-co") h.order = sim::hbm::AddressOrder::RoBaBgChCo;
  else if (order == "ro-ch-ba-bg-co") h.order = sim::hbm::AddressOrder::RoChBaBgCo;
  else if (order == "ch-ro-ba-bg-co") h.order = sim::hbm::AddressOrder::ChRoBaBgCo;
  else if (order == "ro-ba-bg-co-ch") h.order = sim::hbm::AddressOrder::RoBaBgCoCh;
  else throw Error(fmt::format("timing set {}: address map \"{}\" is not one the controller implements", set.name, order));
  h.closed_page = closed_page;
  return h;
}

}  // namespace tpuemu
