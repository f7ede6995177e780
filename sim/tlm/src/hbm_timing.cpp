// SPDX-License-Identifier: Apache-2.0
#include "tpuemu/tlm/hbm_timing.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "hbm_channel_timing.h"

namespace tpuemu::tlm {


HbmBurstTiming::HbmBurstTiming(const sim::hbm::HbmSetup& setup, HbmTimingShortcuts shortcuts)
    : setup_(setup),
      layout_(sim::hbm::address_layout(sim::hbm::address_order_codes(setup), setup.dram)) {
  const sim::dram::Config& c = setup.dram;
  c.validate();
  if (c.burst_bytes() != 64) {
    throw std::invalid_argument("hbm timing: bus_bytes * burst_length must be 64 (the controller's burst)");
  }
  if (c.channels < 2) throw std::invalid_argument("hbm timing: channels must be at least 2");
  if (const std::string why = setup.queues.problem(); !why.empty()) throw std::invalid_argument("hbm timing: " + why);
  std::uint32_t shift = layout_.offset_bits;
  for (const std::uint8_t f : layout_.lsb_first) {
    const FieldSlice slice{shift, (std::uint64_t{1} << layout_.bits[f]) - 1};
    namespace field = spec::hbm::field;
    if (f == field::ch) channel_ = slice;
    if (f == field::bg) bank_group_ = slice;
    if (f == field::ba) bank_ = slice;
    if (f == field::ro) row_ = slice;
    shift += layout_.bits[f];
  }
  read_data_ = c.derived().rd_data;
  const detail::DerivedTimings t = detail::DerivedTimings::from(c);
  for (std::uint32_t ch = 0; ch < c.channels; ++ch) {
    channels_.push_back(std::make_unique<detail::ChannelTiming>(t, c.bank_groups, c.banks_per_group,
                                                                setup.queues, setup.closed_page,
                                                                shortcuts == HbmTimingShortcuts::Taken));
  }
  // A request lane per two channels (rtl/CMakeLists.txt: 8 channels 4 lanes, 16 channels 8).
  lane_free_.assign(c.channels / 2, 0);
}

HbmBurstTiming::~HbmBurstTiming() = default;

BurstTiming HbmBurstTiming::request(std::uint64_t cycle, bool write, std::uint64_t addr) {
  // In queue order onto the first free lane (a lane frees the cycle after its acceptance).
  const auto lane = std::min_element(lane_free_.begin(), lane_free_.end());
  const std::uint64_t offered = std::max({cycle, last_offer_, *lane});
  last_offer_ = offered;
  const detail::ChannelOutcome o = channels_[channel_.of(addr)]->request(
      offered, write, bank_group_.of(addr), bank_.of(addr), row_.of(addr), addr / 64);
  *lane = o.accept + 1;
  BurstTiming r;
  r.accept = o.accept;
  // The command is on the bus one cycle after the choice; read data come rd_data (CL + tBURST)
  // later and leave the controller a cycle after that. Writes are posted: answered the cycle after
  // they were queued, their WR may come later (the run lasts until it has).
  r.done = write ? o.queued + 1 : o.column + 1 + read_data_ + 1;
  if (!write) {
    const std::uint64_t latency = r.done - r.accept;
    latency_.add(latency);
    const std::uint64_t from_offer = r.done - offered;
    offer_latency_.add(from_offer);
  }
  last_done_ = std::max(last_done_, r.done);
  return r;
}

void HbmBurstTiming::finish(std::uint64_t cycle) {
  // The run lasts until every posted write has issued (the drains of what is still queued).
  for (auto& ch : channels_) last_done_ = std::max(last_done_, ch->finish(cycle) + 1);
  last_done_ = std::max(last_done_, cycle);
}

sim::hbm::Statistics HbmBurstTiming::statistics() const {
  sim::hbm::Statistics s;
  std::uint64_t last = last_done_;
  std::vector<sim::hbm::StatCounters> per_channel;
  per_channel.reserve(channels_.size());
  for (const auto& ch : channels_) {
    if (!ch->has_queued_writes()) {
      per_channel.push_back(ch->counters());
      continue;
    }
    // Posted writes still wait for a drain: counted as issued once no read comes any more, as
    // the controller finishes a run, on a copy, so that the run can go on.
    detail::ChannelTiming drained = *ch;
    last = std::max(last, drained.drain_queued_writes() + 1);
    per_channel.push_back(drained.counters());
  }
  s.cycles = last + 1;
  s.set_channels(per_channel, setup_.dram.tBURST());
  s.total.read_latency_sum = latency_.sum;
  s.total.counters[spec::hbm::stat::rd_lat_sum] = latency_.sum;
  s.set_figures(static_cast<double>(s.cycles), channels_.size(), setup_.dram, latency_, offer_latency_);
  return s;
}

}  // namespace tpuemu::tlm
