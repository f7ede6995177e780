// SPDX-License-Identifier: Apache-2.0
// HBM traces (parsed in hbm_trace_text.cpp) and patterns through the RTL controller + DRAM device model (docs/hbm-trace.md).
#include "tpuemu/hbm_replay/hbm_trace.h"

#include <time.h>

#include <algorithm>
#include <array>
#include <bit>
#include <chrono>
#include <cstring>
#include <deque>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <unordered_map>

#include <fmt/format.h>

#include "tpuemu/base/error.h"
#include "tpuemu/config/hbm_config.h"
#include "tpuemu/sim/hbm_system.h"
#include "tpuemu/sim_setup/hbm_setup.h"

namespace tpuemu {
namespace {

namespace hbm = sim::hbm;

constexpr std::uint64_t kBurstBytes = 64;

// ---------------------------------------------------------------------------------------------
// Sources
// ---------------------------------------------------------------------------------------------
class VectorSource final : public HbmRequestSource {
 public:
  VectorSource(std::vector<HbmTraceRequest> requests, std::string name)
      : requests_(std::move(requests)), name_(std::move(name)) {}
  std::optional<HbmTraceRequest> next() override {
    if (next_ == requests_.size()) return std::nullopt;
    return requests_[next_++];
  }
  std::uint64_t size() const override { return requests_.size(); }
  std::string describe() const override { return name_; }

 private:
  std::vector<HbmTraceRequest> requests_;
  std::size_t next_ = 0;
  std::string name_;
};

// A uniform double in [0, 1) from the top 53 bits (the same sequence on every platform).
double unit(std::mt19937_64& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }

class PatternSource final : public HbmRequestSource {
 public:
  PatternSource(const HbmTimingSet& set, const HbmPatternOptions& o)
      : o_(o), bursts_(set.capacity_bytes() / kBurstBytes), rng_(o.seed) {
    if (o.pattern == HbmPattern::StreamAdd) {
      // Array k at k arrays (each rounded up to whole stripes of every bank of every channel)
      // plus k * banks / 3 stripes, a stripe being one row in every channel: a[i], b[i] and
      // c[i] are a third of the banks apart, so a stream moving on to its next bank finds a row
      // there that no other stream still reads (STREAM's OFFSET against bank aliasing).
      const std::uint64_t stripe = set.page_bytes() * set.geometry.channels / kBurstBytes;
      const std::uint64_t bank_stripes = stripe * set.banks_per_channel();
      const std::uint64_t n = (o.requests + 2) / 3;
      array_stride_ = (n + bank_stripes - 1) / bank_stripes * bank_stripes +
                      std::max<std::uint64_t>(1, set.banks_per_channel() / 3) * stripe;
      if (3 * array_stride_ > bursts_) {
        throw Error(fmt::format("--requests {}: the stream-add arrays need {} bursts, more than the {} of {}",
                                o.requests, 3 * array_stride_, bursts_, set.name));
      }
    }
  }
  std::optional<HbmTraceRequest> next() override {
    if (index_ == o_.requests) return std::nullopt;
    HbmTraceRequest r;
    std::uint64_t burst = 0;
    switch (o_.pattern) {
      case HbmPattern::Stream: burst = index_ % bursts_; break;
      case HbmPattern::Random: burst = rng_() & (bursts_ - 1); break;
      case HbmPattern::StreamAdd: burst = index_ % 3 * array_stride_ + index_ / 3; break;
    }
    r.address = burst * kBurstBytes;
    r.write = o_.pattern == HbmPattern::StreamAdd ? index_ % 3 == 2
                                                   : o_.read_ratio < 1.0 && unit(rng_) >= o_.read_ratio;
    ++index_;
    return r;
  }
  std::uint64_t size() const override { return o_.requests; }
  std::string describe() const override {
    if (o_.pattern == HbmPattern::StreamAdd) {
      return fmt::format("stream-add ({} requests: read a[i], read b[i], write c[i])", o_.requests);
    }
    return fmt::format("{} ({} requests, read ratio {:.2f}, seed {})", to_string(o_.pattern),
                       o_.requests, o_.read_ratio, o_.seed);
  }

 private:
  HbmPatternOptions o_;
  std::uint64_t bursts_;  // a power of two (every geometry field is)
  std::mt19937_64 rng_;
  std::uint64_t index_ = 0;
  std::uint64_t array_stride_ = 0;  // StreamAdd: bursts from one array's start to the next
};

// ---------------------------------------------------------------------------------------------
// Replay
// ---------------------------------------------------------------------------------------------
std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

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
HbmChannelFigures periods(const HbmChannelFigures& after, const HbmChannelFigures& before, std::uint64_t k) {
  HbmChannelFigures d;
  for (std::uint64_t HbmChannelFigures::*f :
       {&HbmChannelFigures::reads, &HbmChannelFigures::writes, &HbmChannelFigures::row_hits,
        &HbmChannelFigures::row_misses, &HbmChannelFigures::row_conflicts, &HbmChannelFigures::acts,
        &HbmChannelFigures::precharges, &HbmChannelFigures::refreshes, &HbmChannelFigures::refresh_cycles,
        &HbmChannelFigures::turnarounds, &HbmChannelFigures::queue_occupancy_sum,
        &HbmChannelFigures::data_bus_busy_cycles}) {
    d.*f = (after.*f - before.*f) * k;
  }
  return d;
}

double ratio(double a, double b) { return b == 0 ? 0.0 : a / b; }
double ratio(std::uint64_t a, std::uint64_t b) {
  return ratio(static_cast<double>(a), static_cast<double>(b));
}

}  // namespace


std::unique_ptr<HbmRequestSource> hbm_trace_source(std::vector<HbmTraceRequest> requests,
                                                   std::string name) {
  return std::make_unique<VectorSource>(std::move(requests), std::move(name));
}

// ---------------------------------------------------------------------------------------------
// Patterns
// ---------------------------------------------------------------------------------------------
std::string_view to_string(HbmPattern pattern) {
  switch (pattern) {
    case HbmPattern::Stream: return "stream";
    case HbmPattern::Random: return "random";
    case HbmPattern::StreamAdd: return "stream-add";
  }
  return "?";
}

HbmPattern parse_hbm_pattern(std::string_view name) {
  if (name == "stream") return HbmPattern::Stream;
  if (name == "random") return HbmPattern::Random;
  if (name == "stream-add") return HbmPattern::StreamAdd;
  throw Error(fmt::format("unknown pattern '{}' (expected stream, random or stream-add)", name));
}

std::unique_ptr<HbmRequestSource> hbm_pattern_source(const HbmTimingSet& set,
                                                     const HbmPatternOptions& options) {
  if (options.requests == 0) throw Error("--requests must be at least 1");
  if (!(options.read_ratio >= 0.0 && options.read_ratio <= 1.0)) {
    throw Error(fmt::format("--read-ratio must be in [0, 1], got {}", options.read_ratio));
  }
  if (options.pattern == HbmPattern::StreamAdd && options.read_ratio != 1.0) {
    throw Error("--read-ratio: stream-add has its own mix (two reads, then a write)");
  }
  return std::make_unique<PatternSource>(set, options);
}

void hbm_write_data(std::uint64_t burst_address, std::uint64_t write_seq, std::uint8_t out[64]) {
  std::uint64_t state = burst_address * 0x2545F4914F6CDD1Dull ^ write_seq;
  for (int i = 0; i < 8; ++i) {
    const std::uint64_t w = splitmix64(state);
    std::memcpy(out + 8 * i, &w, 8);
  }
}

// ---------------------------------------------------------------------------------------------
// Figures
// ---------------------------------------------------------------------------------------------
double HbmChannelFigures::row_hit_rate() const {
  return ratio(row_hits, row_hits + row_misses + row_conflicts);
}

double HbmChannelFigures::mean_queue_occupancy(std::uint64_t cycles) const {
  return ratio(queue_occupancy_sum, cycles);
}

HbmChannelFigures& HbmChannelFigures::operator+=(const HbmChannelFigures& o) {
  reads += o.reads;
  writes += o.writes;
  row_hits += o.row_hits;
  row_misses += o.row_misses;
  row_conflicts += o.row_conflicts;
  acts += o.acts;
  precharges += o.precharges;
  refreshes += o.refreshes;
  refresh_cycles += o.refresh_cycles;
  turnarounds += o.turnarounds;
  queue_occupancy_sum += o.queue_occupancy_sum;
  data_bus_busy_cycles += o.data_bus_busy_cycles;
  return *this;
}

double HbmReplayReport::gbps(const HbmChannelFigures& c) const {
  // bytes per ns = GB/s
  return ratio(static_cast<double>(c.requests() * burst_bytes),
               static_cast<double>(cycles) * tck_ns);
}

double HbmReplayReport::peak_fraction(const HbmChannelFigures& c, bool whole_stack) const {
  return ratio(gbps(c), whole_stack ? peak_gbps : peak_gbps_per_channel);
}

double HbmReplayReport::act_rate_bound() const {
  if (tRC == 0 || tFAW == 0 || tRRD_S == 0) return 0;
  return std::min({static_cast<double>(banks) / static_cast<double>(tRC),
                   4.0 / static_cast<double>(tFAW), 1.0 / static_cast<double>(tRRD_S)});
}

double HbmReplayReport::cycles_per_second() const {
  return ratio(static_cast<double>(cycles), wall_seconds);
}

double HbmReplayReport::cycles_per_cpu_second() const {
  return ratio(static_cast<double>(cycles), cpu_seconds);
}

// ---------------------------------------------------------------------------------------------
// Replay
// ---------------------------------------------------------------------------------------------
HbmReplayReport replay_hbm(const HbmTimingSet& set, HbmRequestSource& source,
                           const HbmReplayOptions& options) {
  if (options.max_in_flight == 0 || options.max_in_flight > 256) {
    throw Error(fmt::format("hbm: max_in_flight must be in [1, 256], got {}",
                            options.max_in_flight));
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
    std::uint64_t arrived_at = 0;  // the request's cycle in the source: when it was due
    std::uint64_t offered_at = 0;
    std::uint32_t channel = 0;
    bool write = false;
  };
  std::vector<Slot> slots(window);
  std::vector<std::uint32_t> free_slots(window);
  for (std::size_t i = 0; i < window; ++i) free_slots[i] = static_cast<std::uint32_t>(window - 1 - i);
  std::vector<std::uint8_t> free_ids;
  for (unsigned id = options.max_in_flight; id-- > 0;) free_ids.push_back(static_cast<std::uint8_t>(id));
  std::array<std::uint32_t, 256> slot_of_id{};
  // Per channel, in source order; in order (options.in_order): all of them in waiting[0].
  std::vector<std::deque<std::uint32_t>> waiting(channels);
  // Channels with a request on a lane (offered, not accepted): a channel gets its next request
  // only once the last one was taken, so each channel receives its requests in source order.
  // busy_lanes() says which lanes hold one; lane_channel which channel each lane's is for.
  std::vector<char> on_lane(channels, 0);
  std::vector<std::uint32_t> lane_channel(lanes, 0);
  unsigned pending_on_lanes = 0;
  unsigned next_channel = 0;  // round robin start of the offers
  std::unordered_map<std::uint64_t, std::uint64_t> last_write;  // burst address -> write seq
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
  std::uint64_t skipped = 0;                 // cycles not clocked
  std::uint64_t idle_from = 0;               // cycle (with skips) since which nothing is in flight
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
      throw Error(source.describe(), fmt::format("request at cycle {} is beyond the last the replay can count, {} (2^48 - 1)",
                                                 r->cycle, kMaxHbmTraceCycle));
    }
    return r;
  };
  std::optional<HbmTraceRequest> next = pull();
  std::uint64_t entered = 0, answered = 0, last_progress = 0;
  const auto wall0 = std::chrono::steady_clock::now();
  const double cpu0 = thread_cpu_seconds();

  while (next || answered < entered) {
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
          for (unsigned ch = 0; ch < channels; ++ch) skipped_figures[ch] += periods(after[ch], period_before[ch], k);
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
        last_write[s.address] = write_seq;
      } else {
        const auto it = last_write.find(s.address);
        s.expected_seq = it == last_write.end() ? 0 : it->second;
      }
      s.channel = set.decode(s.address).channel;
      waiting[options.in_order ? 0 : s.channel].push_back(i);
      ++entered;
      if (s.write) ++report.writes;
      else ++report.reads;
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
          throw Error(fmt::format("hbm: read of {:#x} (id {}) returned data that differs from {} "
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
      throw Error(fmt::format("hbm: no response for {} cycles with {} requests outstanding "
                              "(cycle {})",
                              options.stall_limit, entered - answered, sys.cycle()));
    }
    if (answered == entered) last_progress = sys.cycle();
  }
  // Posted writes still queued: the run ends with their WR commands.
  for (std::uint64_t n = 0; sys.posted_writes() > 0; ++n) {
    if (n > options.stall_limit) {
      throw Error(fmt::format("hbm: {} queued writes did not issue in {} cycles", sys.posted_writes(), n));
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

// ---------------------------------------------------------------------------------------------
// Reports
// ---------------------------------------------------------------------------------------------
std::string format_hbm_report(const HbmReplayReport& r) {
  std::string s;
  const auto line = [&s](const std::string& text) {
    s += text;
    s += '\n';
  };
  const HbmChannelFigures& t = r.total;
  const std::uint64_t served = t.row_hits + t.row_misses + t.row_conflicts;
  const auto ns = [&](double tck) { return tck * r.tck_ns; };
  line(fmt::format("tpuemu hbm: {} on {} ({} channels, {} page, map {}, tCK {:.3f} ns)", r.source,
                   r.config, r.channels.size(), r.page_policy, r.address_map, r.tck_ns));
  line(fmt::format("requests    {} ({} reads, {} writes) answered in {} cycles = {:.2f} us",
                   r.requests, r.reads, r.writes, r.cycles, ns(static_cast<double>(r.cycles)) / 1e3));
  line(fmt::format("bandwidth   {:.1f} GB/s = {:.1f}% of the {:.1f} GB/s peak", r.gbps(t),
                   100 * r.peak_fraction(t, true), r.peak_gbps));
  const HbmLatencyFigures& a = r.read_latency_arrival;
  const HbmLatencyFigures& c = r.read_latency;
  const HbmLatencyFigures& o = r.read_latency_offer;
  if (c.count != 0) {
    const auto latency = [&](std::string_view head, const HbmLatencyFigures& l, std::string_view what) {
      line(fmt::format("{:<12}mean {:.1f} tCK ({:.1f} ns), p50 {} tCK ({:.1f} ns), p99 {} tCK ({:.1f} ns): {}", head,
                       l.mean, ns(l.mean), l.p50, ns(static_cast<double>(l.p50)), l.p99,
                       ns(static_cast<double>(l.p99)), what));
    };
    latency("read lat.", a, "due (the request's cycle) -> data back, every wait upstream counted");
    latency("", o, "offered on a lane -> data back (with waits for a full queue)");
    latency("", c, "accepted by the controller -> data out");
  } else {
    line("read lat.   no reads");
  }
  line(fmt::format("rows        hit rate {:.1f}%: {} hits, {} misses, {} conflicts; {} ACT, {} PRE",
                   100 * t.row_hit_rate(), t.row_hits, t.row_misses, t.row_conflicts, t.acts,
                   t.precharges));
  line(fmt::format("refresh     {} REF, {} cycles ({:.1f}% of channel time)", t.refreshes,
                   t.refresh_cycles,
                   100 * ratio(static_cast<double>(t.refresh_cycles),
                               static_cast<double>(r.cycles) * static_cast<double>(r.channels.size()))));
  line(fmt::format("queues      mean occupancy {:.1f} requests per channel; {} read/write "
                   "turnarounds",
                   ratio(t.mean_queue_occupancy(r.cycles), static_cast<double>(r.channels.size())),
                   t.turnarounds));
  line(fmt::format("data        {} reads checked against the writes of the run: all match",
                   r.reads_checked));
  if (served != 0 && ratio(t.row_misses + t.row_conflicts, served) > 0.25) {
    const double acts = r.act_rate_bound();
    line(fmt::format("why         {:.0f}% of requests found their row closed: each needs an ACT "
                     "(and a conflict a PRE first: tRP {} + tRCD {} tCK before its column "
                     "command), and a channel can ACT at most min({} banks / tRC {}, 4 / tFAW {}, "
                     "1 / tRRD_S {}) = {:.3f} times per tCK: {:.1f}% of the peak if every burst "
                     "needs one, against one column command per burst (tBURST {} tCK) for row hits",
                     100 * ratio(t.row_misses + t.row_conflicts, served), r.tRP, r.tRCD, r.banks,
                     r.tRC, r.tFAW, r.tRRD_S, acts, 100 * acts * static_cast<double>(r.tBURST),
                     r.tBURST));
  }
  if (r.idle_cycles_skipped > 0) {
    line(fmt::format("idle        {} of the {} cycles fast-forwarded (nothing in flight; refreshes counted "
                     "from one measured idle tREFI period)",
                     r.idle_cycles_skipped, r.cycles));
  }
  line(fmt::format("simulation  {:.2f} s wall, {:.2f} s CPU: {:.0f} DRAM cycles per wall second "
                   "({:.0f} per CPU second)",
                   r.wall_seconds, r.cpu_seconds, r.cycles_per_second(), r.cycles_per_cpu_second()));
  line("");
  line(fmt::format("{:>7} {:>9} {:>9} {:>8} {:>6} {:>6} {:>9} {:>9} {:>9} {:>5} {:>9} {:>6} {:>7}",
                   "channel", "reads", "writes", "GB/s", "%peak", "hit%", "hits", "misses",
                   "conflicts", "REFs", "REF cyc", "occ.", "turns"));
  const auto row = [&](const std::string& name, const HbmChannelFigures& f, bool whole) {
    line(fmt::format(
        "{:>7} {:>9} {:>9} {:>8.1f} {:>6.1f} {:>6.1f} {:>9} {:>9} {:>9} {:>5} {:>9} {:>6.1f} {:>7}",
        name, f.reads, f.writes, r.gbps(f), 100 * r.peak_fraction(f, whole),
        100 * f.row_hit_rate(), f.row_hits, f.row_misses, f.row_conflicts, f.refreshes,
        f.refresh_cycles,
        whole ? ratio(f.mean_queue_occupancy(r.cycles), static_cast<double>(r.channels.size()))
              : f.mean_queue_occupancy(r.cycles),
        f.turnarounds));
  };
  for (std::size_t i = 0; i < r.channels.size(); ++i) row(std::to_string(i), r.channels[i], false);
  row("total", t, true);
  return s;
}

namespace {

nlohmann::json channel_json(const HbmReplayReport& r, const HbmChannelFigures& f, bool whole) {
  return {{"reads", f.reads},
          {"writes", f.writes},
          {"gbps", r.gbps(f)},
          {"peak_fraction", r.peak_fraction(f, whole)},
          {"row_hits", f.row_hits},
          {"row_misses", f.row_misses},
          {"row_conflicts", f.row_conflicts},
          {"row_hit_rate", f.row_hit_rate()},
          {"acts", f.acts},
          {"precharges", f.precharges},
          {"refreshes", f.refreshes},
          {"refresh_cycles", f.refresh_cycles},
          {"mean_queue_occupancy",
           whole ? ratio(f.mean_queue_occupancy(r.cycles), static_cast<double>(r.channels.size()))
                 : f.mean_queue_occupancy(r.cycles)},
          {"turnarounds", f.turnarounds}};
}

nlohmann::json latency_json(const HbmReplayReport& r, const HbmLatencyFigures& l) {
  return {{"count", l.count},
          {"mean_tck", l.mean},
          {"p50_tck", l.p50},
          {"p99_tck", l.p99},
          {"mean_ns", l.mean * r.tck_ns},
          {"p50_ns", static_cast<double>(l.p50) * r.tck_ns},
          {"p99_ns", static_cast<double>(l.p99) * r.tck_ns}};
}

}  // namespace

nlohmann::json hbm_report_to_json(const HbmReplayReport& r) {
  nlohmann::json channels = nlohmann::json::array();
  for (const auto& c : r.channels) channels.push_back(channel_json(r, c, false));
  return {{"config", r.config},
          {"source", r.source},
          {"page_policy", r.page_policy},
          {"address_map", r.address_map},
          {"tck_ns", r.tck_ns},
          {"peak_gbps", r.peak_gbps},
          {"peak_gbps_per_channel", r.peak_gbps_per_channel},
          {"requests", r.requests},
          {"reads", r.reads},
          {"writes", r.writes},
          {"cycles", r.cycles},
          {"idle_cycles_skipped", r.idle_cycles_skipped},
          {"ns", static_cast<double>(r.cycles) * r.tck_ns},
          {"total", channel_json(r, r.total, true)},
          {"channels", channels},
          {"read_latency", latency_json(r, r.read_latency)},
          {"read_latency_from_offer", latency_json(r, r.read_latency_offer)},
          {"read_latency_from_arrival", latency_json(r, r.read_latency_arrival)},
          {"reads_checked", r.reads_checked},
          {"simulation",
           {{"wall_seconds", r.wall_seconds},
            {"cpu_seconds", r.cpu_seconds},
            {"cycles_per_second", r.cycles_per_second()},
            {"cycles_per_cpu_second", r.cycles_per_cpu_second()}}}};
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
    for (const HbmAddress& a : c.before) requests.push_back({set.encode(a), false, cycle += kApart});
    requests.push_back({set.encode(c.probe), false, cycle += kApart});
    auto source = hbm_trace_source(requests, std::string("probe ") + c.name);
    HbmReplayOptions options;
    options.fast_forward_idle = false;
    const HbmReplayReport r = replay_hbm(set, *source, options);
    if (r.read_latency_arrival.count != requests.size() || r.read_latency.count != requests.size()) {
      throw Error(fmt::format("hbm: probe {}: {} of {} reads answered", c.name, r.read_latency.count, requests.size()));
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

std::string format_hbm_probe(const HbmProbeReport& r) {
  std::string out = fmt::format("tpuemu hbm --probe: one read alone, on {} (map {})\n", r.config, r.address_map);
  out += fmt::format("{:<10} {:>12} {:>12} {:>12} {:>7}\n", "case", "latency tCK", "controller", "JEDEC floor", "extra");
  for (const HbmProbeCase& c : r.cases) {
    out += fmt::format("{:<10} {:>12} {:>12} {:>12} {:>7}\n", c.name, c.latency, c.controller, c.floor,
                       static_cast<std::int64_t>(c.latency) - static_cast<std::int64_t>(c.floor));
  }
  out += "latency: arrival -> data back; controller: accepted -> data out; floor: CL + tBURST, + tRCD for a miss, + tRP for a conflict\n";
  return out;
}

nlohmann::json hbm_probe_to_json(const HbmProbeReport& r) {
  nlohmann::json cases = nlohmann::json::object();
  for (const HbmProbeCase& c : r.cases) {
    cases[c.name] = {{"latency_tck", c.latency}, {"controller_tck", c.controller}, {"jedec_floor_tck", c.floor}};
  }
  return {{"config", r.config}, {"address_map", r.address_map}, {"probe", cases}};
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
