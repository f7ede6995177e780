// SPDX-License-Identifier: Apache-2.0
#include "tpuemu/tlm/hbm_timing.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "hbm_channel_timing.h"

namespace tpuemu::tlm {

namespace {
constexpr std::size_t kHistogramBins = 1 << 14;  // as VerilatedHbmSystem's latency histogram

std::uint64_t percentile(const std::vector<std::uint64_t>& histogram, std::uint64_t n, double q) {
  if (n == 0) return 0;
  const std::uint64_t target = static_cast<std::uint64_t>(q * static_cast<double>(n - 1)) + 1;
  std::uint64_t seen = 0;
  for (std::size_t i = 0; i < histogram.size(); ++i) {
    seen += histogram[i];
    if (seen >= target) return i;
  }
  return histogram.size() - 1;
}
}  // namespace

HbmBurstTiming::HbmBurstTiming(const sim::hbm::HbmSetup& setup)
    : setup_(setup),
      layout_(sim::hbm::address_layout(sim::hbm::address_order_codes(setup), setup.dram)) {
  const sim::dram::Config& c = setup.dram;
  c.validate();
  if (c.burst_bytes() != 64) {
    throw std::invalid_argument("hbm timing: bus_bytes * burst_length must be 64 (the controller's burst)");
  }
  if (c.channels < 2) throw std::invalid_argument("hbm timing: channels must be at least 2");
  if (const std::string why = setup.queues.problem(); !why.empty()) throw std::invalid_argument("hbm timing: " + why);
  const detail::DerivedTimings t = detail::DerivedTimings::from(c);
  for (std::uint32_t ch = 0; ch < c.channels; ++ch) {
    channels_.push_back(std::make_unique<detail::ChannelTiming>(t, c.bank_groups, c.banks_per_group,
                                                                setup.queues.read_queue, setup.queues.write_queue,
                                                                setup.closed_page));
  }
  // A request lane per two channels (rtl/CMakeLists.txt: 8 channels 4 lanes, 16 channels 8).
  lane_free_.assign(c.channels / 2, 0);
  latency_histogram_.assign(kHistogramBins, 0);
  offer_histogram_.assign(kHistogramBins, 0);
}

HbmBurstTiming::~HbmBurstTiming() = default;

BurstTiming HbmBurstTiming::request(std::uint64_t cycle, bool write, std::uint64_t addr) {
  // In queue order onto the first free lane (a lane frees the cycle after its acceptance).
  const auto lane = std::min_element(lane_free_.begin(), lane_free_.end());
  const std::uint64_t offered = std::max({cycle, last_offer_, *lane});
  last_offer_ = offered;
  const sim::hbm::Coordinate at = sim::hbm::coordinate_of(layout_.decode(addr));
  const detail::ChannelOutcome o =
      channels_[at.channel]->request(offered, write, at.bank_group, at.bank, at.row);
  *lane = o.accept + 1;
  BurstTiming r;
  r.accept = o.accept;
  const std::uint32_t cl = setup_.dram.CL, burst = setup_.dram.tBURST();
  // The command is on the bus one cycle after the choice; read data come CL + tBURST later and
  // leave the controller a cycle after that. Writes are posted: answered the cycle after they
  // were queued, their WR may come later (the run lasts until it has).
  r.done = write ? o.queued + 1 : o.column + 1 + cl + burst + 1;
  last_done_ = std::max(last_done_, o.column + 1);
  if (!write) {
    const std::uint64_t latency = r.done - r.accept;
    ++latency_histogram_[std::min<std::uint64_t>(latency, kHistogramBins - 1)];
    ++latency_count_;
    latency_sum_ += latency;
    const std::uint64_t from_offer = r.done - offered;
    ++offer_histogram_[std::min<std::uint64_t>(from_offer, kHistogramBins - 1)];
    offer_sum_ += from_offer;
  }
  last_done_ = std::max(last_done_, r.done);
  return r;
}

void HbmBurstTiming::finish(std::uint64_t cycle) {
  for (auto& ch : channels_) ch->finish(cycle);
  last_done_ = std::max(last_done_, cycle);
}

sim::hbm::Statistics HbmBurstTiming::statistics() const {
  sim::hbm::Statistics s;
  s.cycles = last_done_ + 1;
  namespace stat = spec::hbm::stat;
  const auto figures = [&](const detail::ChannelCounters& k) {
    sim::hbm::ChannelStatistics c;
    c.reads = k.reads;
    c.writes = k.writes;
    c.row_hits = k.row_hits;
    c.row_misses = k.row_misses;
    c.row_conflicts = k.row_conflicts;
    c.acts = k.acts;
    c.precharges = k.pres + k.preas;
    c.refreshes = k.refreshes;
    c.refresh_cycles = k.refresh_cycles;
    c.turnarounds = k.turnarounds;
    c.data_bus_busy_cycles = (k.reads + k.writes) * setup_.dram.tBURST();
    c.counters[stat::reads] = k.reads;
    c.counters[stat::writes] = k.writes;
    c.counters[stat::row_hits] = k.row_hits;
    c.counters[stat::row_misses] = k.row_misses;
    c.counters[stat::row_conflicts] = k.row_conflicts;
    c.counters[stat::acts] = k.acts;
    c.counters[stat::pres] = k.pres;
    c.counters[stat::preas] = k.preas;
    c.counters[stat::refs] = k.refreshes;
    c.counters[stat::ref_cycles] = k.refresh_cycles;
    c.counters[stat::turnarounds] = k.turnarounds;
    c.counters[stat::writes_queued] = k.writes;  // every write is queued (and issued) by the end
    return c;
  };
  detail::ChannelCounters total;
  for (const auto& ch : channels_) {
    const detail::ChannelCounters& k = ch->counters();
    s.channels.push_back(figures(k));
    total.reads += k.reads;
    total.writes += k.writes;
    total.row_hits += k.row_hits;
    total.row_misses += k.row_misses;
    total.row_conflicts += k.row_conflicts;
    total.acts += k.acts;
    total.pres += k.pres;
    total.preas += k.preas;
    total.refreshes += k.refreshes;
    total.refresh_cycles += k.refresh_cycles;
    total.turnarounds += k.turnarounds;
  }
  s.total = figures(total);
  s.total.read_latency_sum = latency_sum_;
  s.total.counters[stat::rd_lat_sum] = latency_sum_;
  const double burst = setup_.dram.burst_bytes();
  s.bytes_per_cycle = static_cast<double>(total.reads + total.writes) * burst / static_cast<double>(s.cycles);
  s.peak_bytes_per_cycle = static_cast<double>(channels_.size()) * burst / setup_.dram.tBURST();
  s.peak_fraction = s.bytes_per_cycle / s.peak_bytes_per_cycle;
  const std::uint64_t served = total.row_hits + total.row_misses + total.row_conflicts;
  s.row_hit_rate = served ? static_cast<double>(total.row_hits) / static_cast<double>(served) : 0;
  s.read_latency_mean = latency_count_ ? static_cast<double>(latency_sum_) / static_cast<double>(latency_count_) : 0;
  s.read_latency_p50 = percentile(latency_histogram_, latency_count_, 0.50);
  s.read_latency_p99 = percentile(latency_histogram_, latency_count_, 0.99);
  s.read_latency_from_offer_mean =
      latency_count_ ? static_cast<double>(offer_sum_) / static_cast<double>(latency_count_) : 0;
  s.read_latency_from_offer_p50 = percentile(offer_histogram_, latency_count_, 0.50);
  s.read_latency_from_offer_p99 = percentile(offer_histogram_, latency_count_, 0.99);
  return s;
}

}  // namespace tpuemu::tlm
