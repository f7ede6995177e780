// SPDX-License-Identifier: Apache-2.0
// HBM requests through one stack of the simulator: the RTL controller driving the DRAM device
// model, with a window of requests in flight, every read's data checked, and idle stretches
// fast-forwarded by whole refresh periods (docs/hbm-trace.md). Also the probe of one read alone
// and the `tpuemu hbm` command's options. The requests: hbm_patterns.cpp; the figures' text and
// JSON: hbm_report.cpp.
#include <time.h>

#include <algorithm>
#include <array>
#include <bit>
#include <chrono>
#include <cstring>
#include <deque>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "tpuemu/base/error.h"
#include "tpuemu/config/hbm_config.h"
#include "tpuemu/hbm_replay/hbm_trace.h"
#include "tpuemu/sim/hbm_system.h"
#include "tpuemu/sim_setup/hbm_setup.h"

namespace tpuemu {
namespace {

namespace hbm = sim::hbm;

constexpr std::uint64_t kBurstBytes = kHbmBurstBytes;

// Exact below kBins tCK; above (latencies from arrival of a long batch), values are kept to 12
// significant bits (within 1/4096, rounded down) in an ordered map, so percentiles never clamp.
class LatencyHistogram {
 public:
  void add(std::uint64_t v) {
    if (v < kBins) {
      ++bins_[v];
    } else {
      const int drop = std::bit_width(v) - 12;
      ++large_[v >> drop << drop];
    }
    ++count_;
    sum_ += v;
  }
  HbmLatencyFigures figures() const {
    HbmLatencyFigures f;
    f.count = count_;
    if (count_ == 0) return f;
    f.mean = static_cast<double>(sum_) / static_cast<double>(count_);  // 128-bit sum: no wrap
    f.p50 = percentile(0.50);
    f.p99 = percentile(0.99);
    return f;
  }

 private:
  static constexpr std::size_t kBins = 1 << 16;
  // The smallest v with at least ceil(q * count) samples <= v.
  std::uint64_t percentile(double q) const {
    const auto target = std::max<std::uint64_t>(
        1, static_cast<std::uint64_t>(q * static_cast<double>(count_) + 0.999999));
    std::uint64_t seen = 0;
    for (std::size_t i = 0; i < kBins; ++i) {
      seen += bins_[i];
      if (seen >= target) return i;
    }
    for (const auto& [v, n] : large_) {
      seen += n;
      if (seen >= target) return v;
    }
    return large_.empty() ? kBins - 1 : large_.rbegin()->first;
  }
  std::vector<std::uint64_t> bins_ = std::vector<std::uint64_t>(kBins, 0);
  std::map<std::uint64_t, std::uint64_t> large_;
  std::uint64_t count_ = 0;
  // Up to 2^64 latencies of up to 2^64 tCK each: the sum needs 128 bits.
  __extension__ unsigned __int128 sum_ = 0;
};

// The last write of each burst address: an open-addressing table (one probe, usually one cache
// line) where std::unordered_map chased two or three pointers per request, three quarters of the
// replay's own time on a random trace.
class LastWrites {
 public:
  // The write sequence number of the last write to `address` (burst aligned), 0 if none.
  std::uint64_t find(std::uint64_t address) const {
    if (keys_.empty()) return 0;
    for (std::size_t i = slot_of(address);; i = (i + 1) & (keys_.size() - 1)) {
      if (keys_[i] == address) return seqs_[i];
      if (keys_[i] == kEmpty) return 0;
    }
  }
  void set(std::uint64_t address, std::uint64_t seq) {
    if (2 * (size_ + 1) > keys_.size()) grow();
    std::size_t i = slot_of(address);
    while (keys_[i] != kEmpty && keys_[i] != address) i = (i + 1) & (keys_.size() - 1);
    if (keys_[i] == kEmpty) ++size_;
    keys_[i] = address;
    seqs_[i] = seq;
  }

 private:
  static constexpr std::uint64_t kEmpty = ~std::uint64_t{0};  // never a burst-aligned address
  std::size_t slot_of(std::uint64_t address) const {
    return static_cast<std::size_t>(((address >> 6) * 0x9E3779B97F4A7C15ull) >> (64 - shift_));
  }
  void grow() {
    std::vector<std::uint64_t> keys = std::move(keys_), seqs = std::move(seqs_);
    shift_ = keys.empty() ? 12 : shift_ + 1;
    keys_.assign(std::size_t{1} << shift_, kEmpty);
    seqs_.assign(std::size_t{1} << shift_, 0);
    size_ = 0;
    for (std::size_t i = 0; i < keys.size(); ++i) {
      if (keys[i] != kEmpty) set(keys[i], seqs[i]);
    }
  }
  std::vector<std::uint64_t> keys_, seqs_;
  unsigned shift_ = 0;
  std::size_t size_ = 0;
};

double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

HbmChannelFigures figures_of(const hbm::ChannelStatistics& c) {
  HbmChannelFigures f;
  f.reads = c.reads;
  f.writes = c.writes;
  f.row_hits = c.row_hits;
  f.row_misses = c.row_misses;
  f.row_conflicts = c.row_conflicts;
  f.acts = c.acts;
  f.precharges = c.precharges;
  f.refreshes = c.refreshes;
  f.refresh_cycles = c.refresh_cycles;
  f.turnarounds = c.turnarounds;
  f.queue_occupancy_sum = c.queue_occupancy_sum;
  f.data_bus_busy_cycles = c.data_bus_busy_cycles;
  return f;
}

// What k more periods like the one from before to after add: every counter's growth times k.
// No wrap: k periods end before the next request, at most kMaxHbmTraceCycle, and a counter grows
// by at most 2^14 per cycle (128 queue slots of 128 channels).
HbmChannelFigures periods(const HbmChannelFigures& after, const HbmChannelFigures& before,
                          std::uint64_t k) {
  HbmChannelFigures d;
  for (std::uint64_t HbmChannelFigures::*f :
       {&HbmChannelFigures::reads, &HbmChannelFigures::writes, &HbmChannelFigures::row_hits,
        &HbmChannelFigures::row_misses, &HbmChannelFigures::row_conflicts, &HbmChannelFigures::acts,
        &HbmChannelFigures::precharges, &HbmChannelFigures::refreshes,
        &HbmChannelFigures::refresh_cycles, &HbmChannelFigures::turnarounds,
        &HbmChannelFigures::queue_occupancy_sum, &HbmChannelFigures::data_bus_busy_cycles}) {
    d.*f = (after.*f - before.*f) * k;
  }
  return d;
}

}  // namespace

HbmReplayReport replay_hbm(const HbmTimingSet& set, HbmRequestSource& source,
                           const HbmReplayOptions& options) {
  if (options.max_in_flight == 0 || options.max_in_flight > 256) {
    throw Error(
        fmt::format("hbm: max_in_flight must be in [1, 256], got {}", options.max_in_flight));
  }
  if (options.window < options.max_in_flight || options.window > (1u << 20)) {
    throw Error(fmt::format("hbm: --window must be in [{}, {}], got {}", options.max_in_flight,
                            1u << 20, options.window));
  }
  std::unique_ptr<hbm::HbmSystem> system;
  try {
    system = hbm::make_hbm_system(hbm_setup_from(set, options.closed_page));
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw Error(set.name, e.what());
  }
  hbm::HbmSystem& sys = *system;
  const unsigned channels = set.geometry.channels;
  const unsigned lanes = sys.lanes();
  const std::size_t window = options.window;

  // A request between entering the replay and its response.
  struct Slot {
    std::uint64_t address = 0;       // burst aligned
    std::uint64_t expected_seq = 0;  // reads: the write whose data they must return (0: zeros)
    std::uint64_t arrived_at = 0;    // the request's cycle in the source: when it was due
    std::uint64_t offered_at = 0;
    std::uint32_t channel = 0;
    bool write = false;
  };
  std::vector<Slot> slots(window);
  std::vector<std::uint32_t> free_slots(window);
  for (std::size_t i = 0; i < window; ++i)
    free_slots[i] = static_cast<std::uint32_t>(window - 1 - i);
  std::vector<std::uint8_t> free_ids;
  for (unsigned id = options.max_in_flight; id-- > 0;)
    free_ids.push_back(static_cast<std::uint8_t>(id));
  std::array<std::uint32_t, 256> slot_of_id{};
  // Per channel, in source order; in order (options.in_order): all of them in waiting[0].
  std::vector<std::deque<std::uint32_t>> waiting(channels);
  // Channels with a request on a lane (offered, not accepted): a channel gets its next request
  // only once the last one was taken, so each channel receives its requests in source order.
  // busy_lanes() says which lanes hold one; lane_channel which channel each lane's is for.
  std::vector<char> on_lane(channels, 0);
  std::vector<std::uint32_t> lane_channel(lanes, 0);
  unsigned pending_on_lanes = 0;
  unsigned next_channel = 0;                                    // round robin start of the offers
  LastWrites last_write;                                        // burst address -> write seq
  std::uint64_t write_seq = 0;
  std::uint8_t wdata[64];
  std::uint8_t expected[64];
  LatencyHistogram offer_latency, arrival_latency;

  HbmReplayReport report;
  report.config = set.name;
  report.address_map = set.address_map.to_string();
  report.source = options.source_name.empty() ? source.describe() : options.source_name;
  report.page_policy = options.closed_page ? "closed" : "open";
  report.tck_ns = set.tck_ns();
  report.burst_bytes = set.burst_bytes();
  report.peak_gbps = set.peak_gbps();
  report.peak_gbps_per_channel = set.peak_gbps_per_channel();
  report.tRCD = set.timings.tRCD;
  report.tRP = set.timings.tRP;
  report.tRC = set.timings.tRC;
  report.tFAW = set.timings.tFAW;
  report.tRRD_S = set.timings.tRRD_S;
  report.tBURST = set.tBURST();
  report.banks = set.banks_per_channel();

  // Idle fast-forward: with nothing in flight for a settling time, the controller only refreshes,
  // and its state repeats every tREFI. One such period is simulated and measured; whole periods
  // up to the next request are then skipped: the RTL is not clocked, the time axis moves on and
  // every counter grows by the measured period's growth (docs/hbm-trace.md).
  const std::uint64_t refresh_period = set.timings.tREFI;
  const std::uint64_t settle = set.timings.tREFI + set.timings.tRFC + set.timings.tRC;
  std::uint64_t skipped = 0;                  // cycles not clocked
  std::uint64_t idle_from = 0;                // cycle (with skips) since which nothing is in flight
  std::optional<std::uint64_t> period_start;  // a measured idle period began here (sys.cycle())
  std::vector<HbmChannelFigures> period_before, skipped_figures(channels);
  auto channel_figures = [&] {
    std::vector<HbmChannelFigures> out;
    for (const auto& c : sys.statistics().channels) out.push_back(figures_of(c));
    return out;
  };

  // A request past kMaxHbmTraceCycle could wrap the clock and every counter; parse_hbm_trace
  // refuses it with its line, a source of another kind is refused here.
  const auto pull = [&source] {
    std::optional<HbmTraceRequest> r = source.next();
    if (r && r->cycle > kMaxHbmTraceCycle) {
      throw Error(
          source.describe(),
          fmt::format("request at cycle {} is beyond the last the replay can count, {} (2^48 - 1)",
                      r->cycle, kMaxHbmTraceCycle));
    }
    return r;
  };
  std::optional<HbmTraceRequest> next = pull();
  std::uint64_t entered = 0, answered = 0, last_progress = 0;
  const auto wall0 = std::chrono::steady_clock::now();
  const double cpu0 = thread_cpu_seconds();

  for (std::uint64_t loops = 0; next || answered < entered; ++loops) {
    if (loops % 4096 == 0) options.stop.throw_if_requested("the HBM replay");
    if (options.fast_forward_idle && answered == entered && pending_on_lanes == 0 && next &&
        next->cycle > sys.cycle() + skipped) {
      const std::uint64_t now = sys.cycle() + skipped;
      if (!period_start && now - idle_from >= settle) {
        period_start = sys.cycle();
        period_before = channel_figures();
      } else if (period_start && sys.cycle() - *period_start == refresh_period) {
        const std::uint64_t gap = next->cycle - now;
        const std::uint64_t k = gap / refresh_period > 0 ? gap / refresh_period - 1 : 0;
        if (k > 0) {
          const std::vector<HbmChannelFigures> after = channel_figures();
          for (unsigned ch = 0; ch < channels; ++ch)
            skipped_figures[ch] += periods(after[ch], period_before[ch], k);
          skipped += k * refresh_period;
        }
        period_start.reset();
      }
    } else {
      idle_from = sys.cycle() + skipped + 1;
      period_start.reset();
    }
    const std::uint64_t now = sys.cycle() + skipped;
    // Requests whose cycle has come enter the window, in source order.
    while (next && next->cycle <= now && !free_slots.empty()) {
      const std::uint32_t i = free_slots.back();
      free_slots.pop_back();
      Slot& s = slots[i];
      s.address = next->address & ~(kBurstBytes - 1);
      s.write = next->write;
      s.arrived_at = next->cycle;
      if (s.write) {
        s.expected_seq = ++write_seq;
        last_write.set(s.address, write_seq);
      } else {
        s.expected_seq = last_write.find(s.address);
      }
      s.channel = set.decode(s.address).channel;
      waiting[options.in_order ? 0 : s.channel].push_back(i);
      ++entered;
      if (s.write)
        ++report.writes;
      else
        ++report.reads;
      next = pull();
    }
    // Offers: the oldest waiting request of each channel with none on a lane, round robin; in
    // order, the oldest waiting requests until one's channel has a request on a lane.
    for (unsigned k = 0; k < channels && pending_on_lanes < lanes && !free_ids.empty(); ++k) {
      const unsigned ch = options.in_order ? 0 : (next_channel + k) % channels;
      if (waiting[ch].empty()) continue;
      if (on_lane[slots[waiting[ch].front()].channel]) {
        if (options.in_order) break;
        continue;
      }
      const std::uint32_t i = waiting[ch].front();
      Slot& s = slots[i];
      hbm::Request r;
      r.write = s.write;
      r.addr = s.address;
      r.id = free_ids.back();
      if (s.write) {
        hbm_write_data(s.address, s.expected_seq, wdata);
        r.wdata = wdata;
      }
      const std::uint32_t lanes_before = sys.busy_lanes();
      if (!sys.offer(r)) break;
      lane_channel[std::countr_zero(sys.busy_lanes() & ~lanes_before)] = s.channel;
      free_ids.pop_back();
      slot_of_id[r.id] = i;
      waiting[ch].pop_front();
      s.offered_at = now;
      on_lane[s.channel] = 1;
      ++pending_on_lanes;
      next_channel = (ch + 1) % channels;
    }

    sys.tick();
    if (sys.fault()) throw Error(*sys.fault());
    const std::uint32_t busy = sys.busy_lanes();
    std::fill(on_lane.begin(), on_lane.end(), 0);
    for (unsigned p = 0; p < lanes; ++p) {
      if (busy >> p & 1u) on_lane[lane_channel[p]] = 1;
    }
    pending_on_lanes = static_cast<unsigned>(std::popcount(busy));

    for (const hbm::Response& r : sys.responses()) {
      const std::uint32_t i = slot_of_id[r.id];
      const Slot& s = slots[i];
      if (!s.write) {
        offer_latency.add(now - s.offered_at);
        arrival_latency.add(now - s.arrived_at);
        if (s.expected_seq == 0) {
          std::memset(expected, 0, sizeof expected);
        } else {
          hbm_write_data(s.address, s.expected_seq, expected);
        }
        if (std::memcmp(expected, r.data.data(), 64) != 0) {
          throw Error(
              fmt::format("hbm: read of {:#x} (id {}) returned data that differs from {} "
                          "(the controller or the device lost or reordered data)",
                          s.address, r.id,
                          s.expected_seq ? fmt::format("write #{}", s.expected_seq)
                                         : std::string("zeros (never written)")));
        }
        ++report.reads_checked;
      }
      free_ids.push_back(r.id);
      free_slots.push_back(i);
      ++answered;
      last_progress = sys.cycle();
    }
    if (answered < entered && sys.cycle() - last_progress > options.stall_limit) {
      throw Error(
          fmt::format("hbm: no response for {} cycles with {} requests outstanding "
                      "(cycle {})",
                      options.stall_limit, entered - answered, sys.cycle()));
    }
    if (answered == entered) last_progress = sys.cycle();
  }
  // Posted writes still queued: the run ends with their WR commands.
  for (std::uint64_t n = 0; sys.posted_writes() > 0; ++n) {
    if (n > options.stall_limit) {
      throw Error(
          fmt::format("hbm: {} queued writes did not issue in {} cycles", sys.posted_writes(), n));
    }
    sys.tick();
    if (sys.fault()) throw Error(*sys.fault());
  }
  sys.finish();
  if (sys.fault()) throw Error(*sys.fault());
  report.wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  report.cpu_seconds = thread_cpu_seconds() - cpu0;

  const hbm::Statistics st = sys.statistics();
  report.requests = entered;
  report.cycles = sys.cycle() + skipped;
  report.idle_cycles_skipped = skipped;
  for (std::size_t ch = 0; ch < st.channels.size(); ++ch) {
    report.channels.push_back(figures_of(st.channels[ch]));
    report.channels.back() += skipped_figures[ch];
    report.total += report.channels.back();
  }
  report.read_latency.count = report.total.reads;
  report.read_latency.mean = st.read_latency_mean;
  report.read_latency.p50 = st.read_latency_p50;
  report.read_latency.p99 = st.read_latency_p99;
  report.read_latency_offer = offer_latency.figures();
  report.read_latency_arrival = arrival_latency.figures();
  if (report.total.requests() != entered) {
    throw Error(fmt::format("hbm: the controller counted {} requests, {} were answered",
                            report.total.requests(), entered));
  }
  return report;
}

HbmProbeReport probe_hbm(const HbmTimingSet& set) {
  const HbmTimings& t = set.timings;
  const std::uint64_t read = t.CL + set.tBURST();
  // Far enough apart that each request is alone in the system (no refresh due that early).
  constexpr std::uint64_t kApart = 500;
  const HbmAddress bank{};  // channel 0, bank group 0, bank 0, row 0
  HbmAddress same_row = bank, other_row = bank;
  same_row.column = 1;
  other_row.row = 1;
  struct Case {
    const char* name;
    std::vector<HbmAddress> before;  // reads that leave the bank in the case's state
    HbmAddress probe;
    std::uint64_t floor;
  };
  // The miss first: hit and conflict each follow one such read (alone in a fresh system, so a
  // miss of the same latency), and their probe's latency is their total minus it.
  const Case cases[] = {
      {"miss", {}, bank, t.tRCD + read},
      {"hit", {bank}, same_row, read},
      {"conflict", {bank}, other_row, t.tRP + t.tRCD + read},
  };
  HbmProbeReport report;
  report.config = set.name;
  report.address_map = set.address_map.to_string();
  const auto total = [](const HbmLatencyFigures& f) {
    return static_cast<std::uint64_t>(f.mean * static_cast<double>(f.count) + 0.5);
  };
  for (const Case& c : cases) {
    std::vector<HbmTraceRequest> requests;
    std::uint64_t cycle = 0;
    for (const HbmAddress& a : c.before)
      requests.push_back({set.encode(a), false, cycle += kApart});
    requests.push_back({set.encode(c.probe), false, cycle += kApart});
    auto source = hbm_trace_source(requests, std::string("probe ") + c.name);
    HbmReplayOptions options;
    options.fast_forward_idle = false;
    const HbmReplayReport r = replay_hbm(set, *source, options);
    if (r.read_latency_arrival.count != requests.size() ||
        r.read_latency.count != requests.size()) {
      throw Error(fmt::format("hbm: probe {}: {} of {} reads answered", c.name,
                              r.read_latency.count, requests.size()));
    }
    HbmProbeCase out;
    out.name = c.name;
    out.floor = c.floor;
    out.latency = total(r.read_latency_arrival);
    out.controller = total(r.read_latency);
    if (!c.before.empty()) {
      out.latency -= report.cases.front().latency;
      out.controller -= report.cases.front().controller;
    }
    report.cases.push_back(out);
  }
  return report;
}

HbmTimingSet hbm_command_timing_set(const HbmCommandOptions& o) {
  HbmTimingSet set = load_hbm_timing_set(o.config);
  if (!o.address_map.empty()) {
    try {
      set.address_map = HbmAddressMap::parse(o.address_map);
    } catch (const Error& e) {
      throw Error(fmt::format("hbm: --map: {}", e.what()));
    }
  }
  return set;
}

HbmReplayReport run_hbm_command(const HbmCommandOptions& o) {
  if (o.trace_file.empty() == o.pattern.empty()) {
    throw Error("hbm: give either --requests-file FILE or --pattern stream|random|stream-add");
  }
  if (o.page_policy != "open" && o.page_policy != "closed") {
    throw Error(fmt::format("hbm: --page-policy must be open or closed, got '{}'", o.page_policy));
  }
  const HbmTimingSet set = hbm_command_timing_set(o);
  HbmReplayOptions options;
  options.closed_page = o.page_policy == "closed";
  options.window = o.window;
  options.in_order = o.in_order;
  options.stop = o.stop;
  std::unique_ptr<HbmRequestSource> source;
  if (!o.trace_file.empty()) {
    source = hbm_trace_source(load_hbm_trace(o.trace_file, set), o.trace_file);
  } else {
    HbmPatternOptions p;
    p.pattern = parse_hbm_pattern(o.pattern);
    p.requests = o.requests;
    p.read_ratio = o.read_ratio;
    p.seed = o.seed;
    source = hbm_pattern_source(set, p);
  }
  return replay_hbm(set, *source, options);
}

}  // namespace tpuemu
