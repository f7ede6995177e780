// SPDX-License-Identifier: Apache-2.0
#include "hbm_statistics.h"

#include <vector>

#include "tpuemu/spec/contract.h"

namespace tpuemu {

MemoryStatistics register_hbm_statistics(const sim::hbm::Statistics& h, std::string source) {
  MemoryStatistics m(std::move(source), h.channels.size());
  auto per_channel = [&](auto value_of) {
    std::vector<double> values;
    values.reserve(h.channels.size());
    for (const sim::hbm::ChannelStatistics& c : h.channels) values.push_back(static_cast<double>(value_of(c)));
    return values;
  };
#define TPUEMU_REGISTER_STAT(index, name, unit, doc) \
  m.add_per_channel(#name, unit, doc, per_channel([](const auto& c) { return c.counters[index]; }));
  TPUEMU_SPEC_HBM_STATS(TPUEMU_REGISTER_STAT)
#undef TPUEMU_REGISTER_STAT
  m.add_per_channel("data_bus_busy_cycles", "tCK", "cycles the channel's data bus carried a burst (DRAM model)",
                    per_channel([](const auto& c) { return c.data_bus_busy_cycles; }));
  m.add_total("dram_cycles", "tCK", "DRAM clocks the memory ran", static_cast<double>(h.cycles));
  m.add_total("bytes_per_dram_cycle", "B/tCK", "bytes read and written per DRAM clock", h.bytes_per_cycle);
  m.add_total("peak_bytes_per_dram_cycle", "B/tCK", "channels x burst bytes / tBURST", h.peak_bytes_per_cycle);
  m.add_total("peak_fraction", "fraction", "bytes_per_dram_cycle / peak_bytes_per_dram_cycle", h.peak_fraction);
  m.add_total("row_hit_rate", "fraction", "row_hits / (row_hits + row_misses + row_conflicts)", h.row_hit_rate);
  m.add_total("read_latency_mean", "tCK", "mean read latency, request accepted to data out", h.read_latency_mean);
  m.add_total("read_latency_p50", "tCK", "median read latency", static_cast<double>(h.read_latency_p50));
  m.add_total("read_latency_p99", "tCK", "99th percentile read latency", static_cast<double>(h.read_latency_p99));
  m.add_total("read_latency_from_offer_mean", "tCK",
              "mean read latency, request offered on a lane (by the core's bridge) to data out: waits for a full "
              "queue counted",
              h.read_latency_from_offer_mean);
  m.add_total("read_latency_from_offer_p50", "tCK", "median read latency from the offer",
              static_cast<double>(h.read_latency_from_offer_p50));
  m.add_total("read_latency_from_offer_p99", "tCK", "99th percentile read latency from the offer",
              static_cast<double>(h.read_latency_from_offer_p99));
  if (h.host_cycles != 0) {  // the board top's DRAM shim (docs/fpga.md)
    m.add_total("board_host_cycles", "cycles", "host clocks the board top took for the DRAM clocks",
                static_cast<double>(h.host_cycles));
    m.add_total("board_held_host_cycles", "cycles",
                "host clocks without a target clock edge: the DRAM shim waiting for its backing store",
                static_cast<double>(h.held_host_cycles));
  }
  return m;
}

}  // namespace tpuemu
