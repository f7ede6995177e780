// SPDX-License-Identifier: Apache-2.0
// One HBM stack as the emulator runs it: the Verilated RTL controller (rtl/mem/hbm) driving the
// DRAM device model (sim/src/dram), which checks every command against the timing set. Requests
// are 64-byte bursts with 8-bit ids (the controller's AXI-like burst port, docs/hbm.md); every
// tick() is one DRAM clock (tCK).
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "tpuemu/sim/dram_config.h"
#include "tpuemu/sim/hbm_address.h"
#include "tpuemu/spec/hbm_queues.h"
#include "tpuemu/spec/contract.h"

namespace tpuemu::sim::hbm {

// The controller's address-map orders (hbm_spec_pkg::amap_order_e, from the contract's named
// orders spec::hbm::kAddressMaps), most significant field first in the names.
using AddressOrder = spec::hbm::AddressOrder;

// The board top's memory system instead of the simulation top's (docs/fpga.md "The host-decoupled
// DRAM model"): the core's beats enter the RTL beat bridge (hbm_board_mem), the controller runs on
// a gated target clock, and the RTL DRAM shim sits in front of a backing store whose every
// request takes a random 0..max_latency host cycles (in request order); the C++ device model runs
// beside it as the timing checker and the reference of every read burst. Target cycles, counters
// and data are those of the simulation top; only host cycles grow. The system has no burst port:
// it is driven through HbmSystem::core_port().
struct BoardShim {
  std::uint32_t max_latency = 200;  // host cycles
  std::uint64_t seed = 1;
  std::uint32_t core_beat_bytes = 0;  // the core's beat; 0 is refused (make_core_memory sets it)
};

struct HbmSetup {
  dram::Config dram;
  // A named order, or AddressOrder::Custom with the field codes of custom_order (least
  // significant first, a permutation of spec::hbm::kAddressFields): the controller's amap_t.
  AddressOrder order = AddressOrder::RoBaBgChCo;
  std::array<std::uint8_t, spec::hbm::kNumAddressFields> custom_order{};
  bool closed_page = false;
  // The controller's read and write queues per channel (validated by make_hbm_system).
  spec::hbm::QueueSizes queues;
  std::optional<BoardShim> board;  // unset: the simulation top (the DRAM device is the C++ model)
};

// The field codes of the setup's order, least significant first. Throws std::invalid_argument
// for a custom order that is not a permutation of the fields (the controller's amap_order_ok()).
inline std::array<std::uint8_t, spec::hbm::kNumAddressFields> address_order_codes(const HbmSetup& s) {
  if (s.order != AddressOrder::Custom) return AddressLayout::named_order(static_cast<std::uint32_t>(s.order));
  unsigned seen = 0;
  for (const std::uint8_t f : s.custom_order) seen |= f < spec::hbm::kNumAddressFields ? 1u << f : 0u;
  if (seen != (1u << spec::hbm::kNumAddressFields) - 1) {
    throw std::invalid_argument("hbm: a custom address map must name each of the five fields once");
  }
  return s.custom_order;
}

struct Coordinate {
  std::uint32_t channel = 0, bank_group = 0, bank = 0, row = 0, column = 0;
};
inline Coordinate coordinate_of(const FieldValues& v) {
  namespace field = spec::hbm::field;
  return Coordinate{v[field::ch], v[field::bg], v[field::ba], v[field::ro], v[field::co]};
}
// The setup's address map: its named order and the field widths of its geometry.
AddressLayout address_layout(const HbmSetup& setup);

struct Request {
  bool write = false;
  std::uint64_t addr = 0;  // burst aligned
  std::uint8_t id = 0;
  const std::uint8_t* wdata = nullptr;  // 64 bytes, for writes
  std::uint64_t wmask = ~std::uint64_t{0};
};

struct Response {
  bool write = false;  // a write response (no data)
  std::uint8_t id = 0;
  std::array<std::uint8_t, 64> data{};
};

struct ChannelStatistics {
  // The controller's statistics as the contract lists them (spec::hbm::stat, TPUEMU_SPEC_HBM_STATS);
  // the named fields below are the report's figures derived from them.
  std::array<std::uint64_t, spec::hbm::kNumStats> counters{};
  std::uint64_t reads = 0, writes = 0, row_hits = 0, row_misses = 0, row_conflicts = 0;
  std::uint64_t acts = 0, precharges = 0, refreshes = 0, refresh_cycles = 0;
  std::uint64_t queue_occupancy_sum = 0, read_latency_sum = 0, turnarounds = 0;
  std::uint64_t data_bus_busy_cycles = 0;
};

// A channel's statistics by the contract's index (spec::hbm::stat): the RTL's stats_t, or what
// the TLM timing model counts of it.
using StatCounters = std::array<std::uint64_t, spec::hbm::kNumStats>;

// The report's figures of one channel's counters (or of their sums); tBURST gives the data bus's
// busy cycles.
inline ChannelStatistics channel_statistics(const StatCounters& v, std::uint32_t tBURST) {
  namespace stat = spec::hbm::stat;
  ChannelStatistics c;
  c.counters = v;
  c.reads = v[stat::reads];
  c.writes = v[stat::writes];
  c.row_hits = v[stat::row_hits];
  c.row_misses = v[stat::row_misses];
  c.row_conflicts = v[stat::row_conflicts];
  c.acts = v[stat::acts];
  c.precharges = v[stat::pres] + v[stat::preas];
  c.refreshes = v[stat::refs];
  c.refresh_cycles = v[stat::ref_cycles];
  c.queue_occupancy_sum = v[stat::occ_sum];
  c.read_latency_sum = v[stat::rd_lat_sum];
  c.turnarounds = v[stat::turnarounds];
  c.data_bus_busy_cycles = (c.reads + c.writes) * tBURST;
  return c;
}

// Read latencies in tCK, 2^14 bins (the last one counts everything above), for the mean and the
// percentiles of Statistics; the RTL system and the tlm backend's timing model keep the same.
struct LatencyHistogram {
  static constexpr std::size_t kBins = 1 << 14;
  std::vector<std::uint64_t> bins = std::vector<std::uint64_t>(kBins, 0);
  std::uint64_t n = 0, sum = 0;
  void add(std::uint64_t v) {
    ++bins[std::min<std::uint64_t>(v, kBins - 1)];
    ++n;
    sum += v;
  }
  double mean() const { return n ? static_cast<double>(sum) / static_cast<double>(n) : 0; }
  std::uint64_t percentile(double q) const {
    if (n == 0) return 0;
    const std::uint64_t target = static_cast<std::uint64_t>(q * static_cast<double>(n - 1)) + 1;
    std::uint64_t seen = 0;
    for (std::size_t i = 0; i < bins.size(); ++i) {
      seen += bins[i];
      if (seen >= target) return i;
    }
    return bins.size() - 1;
  }
};

struct Statistics {
  std::uint64_t cycles = 0;
  std::vector<ChannelStatistics> channels;
  ChannelStatistics total;
  // read latency from the request entering the controller to its data leaving it, in tCK
  double read_latency_mean = 0;
  std::uint64_t read_latency_p50 = 0, read_latency_p99 = 0;
  // the same from the request's offer on a lane (by the replay, or the core's bridge): the waits
  // for a full queue counted
  double read_latency_from_offer_mean = 0;
  std::uint64_t read_latency_from_offer_p50 = 0, read_latency_from_offer_p99 = 0;
  double bytes_per_cycle = 0;       // achieved, reads and writes
  double peak_bytes_per_cycle = 0;  // channels * burst bytes / tBURST
  double peak_fraction = 0;
  double row_hit_rate = 0;
  // The board top (HbmSetup::board): the host cycles the target's cycles took, and of those the
  // ones without a target clock edge (the shim waiting for the backing store). 0 in simulation.
  std::uint64_t host_cycles = 0;
  std::uint64_t held_host_cycles = 0;

  // channels and total from each channel's counters: every registered statistic summed alike.
  void set_channels(std::span<const StatCounters> per_channel, std::uint32_t tBURST) {
    StatCounters sum{};
    channels.clear();
    for (const StatCounters& v : per_channel) {
      for (std::size_t k = 0; k < sum.size(); ++k) sum[k] += v[k];
      channels.push_back(channel_statistics(v, tBURST));
    }
    total = channel_statistics(sum, tBURST);
  }

  // The run's figures from total: the bandwidth over `elapsed` (> 0) DRAM cycles against the
  // peak of `channel_count` channels, the row-hit rate and the read latencies.
  void set_figures(double elapsed, std::size_t channel_count, const dram::Config& dram,
                   const LatencyHistogram& latency, const LatencyHistogram& offer_latency) {
    const double burst = dram.burst_bytes();
    bytes_per_cycle = static_cast<double>(total.reads + total.writes) * burst / elapsed;
    peak_bytes_per_cycle = static_cast<double>(channel_count) * burst / dram.tBURST();
    peak_fraction = bytes_per_cycle / peak_bytes_per_cycle;
    const std::uint64_t served = total.row_hits + total.row_misses + total.row_conflicts;
    row_hit_rate = served ? static_cast<double>(total.row_hits) / static_cast<double>(served) : 0;
    read_latency_mean = latency.mean();
    read_latency_p50 = latency.percentile(0.50);
    read_latency_p99 = latency.percentile(0.99);
    read_latency_from_offer_mean = offer_latency.mean();
    read_latency_from_offer_p50 = offer_latency.percentile(0.50);
    read_latency_from_offer_p99 = offer_latency.percentile(0.99);
  }
};

// A channel's data bus busy (RD data CL after the RD, WR data CWL after the WR, tBURST each) or
// the channel refreshing (REF to REF + tRFC), in DRAM cycles [begin, end). Consecutive busy cycles
// are one interval.
struct ChannelActivity {
  std::uint32_t channel = 0;
  bool refresh = false;
  std::uint64_t begin = 0, end = 0;
};

// The core's memory port of a system with the RTL beat bridge, one target cycle per tick(): the
// responses and readiness of this cycle, then at most one beat driven before the tick.
class CorePort {
 public:
  virtual ~CorePort() = default;
  virtual bool ready() const = 0;
  virtual const std::uint8_t* read_response() = 0;  // the next read beat, nullptr if none
  virtual bool write_ack() const = 0;
  virtual void drive(bool write, std::uint64_t addr, std::span<const std::uint8_t> wdata) = 0;
};

class HbmSystem {
 public:
  virtual ~HbmSystem() = default;
  virtual const HbmSetup& setup() const = 0;
  // Request lanes of the controller: up to this many requests enter per cycle.
  virtual unsigned lanes() const = 0;
  // Offers a request for the next tick on a free lane; false when every lane is taken.
  virtual bool offer(const Request& request) = 0;
  // One DRAM clock. Requests offered but not accepted stay on their lanes for the next tick.
  // A timing violation stops the system: fault() says which, and tick() does nothing more.
  virtual void tick() = 0;
  // Responses produced by the last tick.
  virtual const std::vector<Response>& responses() const = 0;
  virtual bool lanes_busy() const = 0;
  // The lanes holding a request not accepted yet, one bit per lane: offer() takes the lowest
  // free one, and a tick clears the bits of the requests it accepted.
  virtual std::uint32_t busy_lanes() const = 0;
  // Writes answered (posted: bresp once queued) whose WR has not issued yet. A run is over when
  // this is 0 too; the back door waits for it itself.
  virtual std::uint64_t posted_writes() const = 0;
  virtual std::uint64_t cycle() const = 0;
  virtual const std::optional<std::string>& fault() const = 0;
  // Checks the refresh deadline at the end of a run (sets fault()).
  virtual void finish() = 0;
  virtual Statistics statistics() const = 0;
  // Records ChannelActivity from the command buses while on (off by default: no per-command cost).
  virtual void record_activity(bool on) = 0;
  // What was recorded since the last call, per channel in time order.
  virtual std::vector<ChannelActivity> take_activity() = 0;
  virtual void backdoor_write(std::uint64_t addr, std::span<const std::uint8_t> data) = 0;
  virtual void backdoor_read(std::uint64_t addr, std::span<std::uint8_t> data) = 0;
  // The beat port (BoardShim::core_beat_bytes), nullptr for a burst-port system.
  virtual CorePort* core_port() { return nullptr; }
};

// Throws std::invalid_argument for a geometry no Verilated controller in this build supports
// (8 or 16 channels, 4 bank groups x 4 banks, 64-byte bursts; the board top: 8 channels).
std::unique_ptr<HbmSystem> make_hbm_system(const HbmSetup& setup);

}  // namespace tpuemu::sim::hbm
