// SPDX-License-Identifier: Apache-2.0
// The figures of an HBM replay (hbm_replay.cpp) as `tpuemu hbm` prints them: derived rates, the
// text report with its per-channel table, the JSON report, and the probe's table
// (docs/hbm-trace.md).
#include <algorithm>
#include <string>

#include <fmt/format.h>

#include "tpuemu/hbm_replay/hbm_trace.h"

namespace tpuemu {
namespace {

double ratio(double a, double b) { return b == 0 ? 0.0 : a / b; }
double ratio(std::uint64_t a, std::uint64_t b) {
  return ratio(static_cast<double>(a), static_cast<double>(b));
}

}  // namespace

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
                   r.requests, r.reads, r.writes, r.cycles,
                   ns(static_cast<double>(r.cycles)) / 1e3));
  line(fmt::format("bandwidth   {:.1f} GB/s = {:.1f}% of the {:.1f} GB/s peak", r.gbps(t),
                   100 * r.peak_fraction(t, true), r.peak_gbps));
  const HbmLatencyFigures& a = r.read_latency_arrival;
  const HbmLatencyFigures& c = r.read_latency;
  const HbmLatencyFigures& o = r.read_latency_offer;
  if (c.count != 0) {
    const auto latency = [&](std::string_view head, const HbmLatencyFigures& l,
                             std::string_view what) {
      line(fmt::format(
          "{:<12}mean {:.1f} tCK ({:.1f} ns), p50 {} tCK ({:.1f} ns), p99 {} tCK ({:.1f} ns): {}",
          head, l.mean, ns(l.mean), l.p50, ns(static_cast<double>(l.p50)), l.p99,
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
  line(fmt::format(
      "refresh     {} REF, {} cycles ({:.1f}% of channel time)", t.refreshes, t.refresh_cycles,
      100 * ratio(static_cast<double>(t.refresh_cycles),
                  static_cast<double>(r.cycles) * static_cast<double>(r.channels.size()))));
  line(
      fmt::format("queues      mean occupancy {:.1f} requests per channel; {} read/write "
                  "turnarounds",
                  ratio(t.mean_queue_occupancy(r.cycles), static_cast<double>(r.channels.size())),
                  t.turnarounds));
  line(fmt::format("data        {} reads checked against the writes of the run: all match",
                   r.reads_checked));
  if (served != 0 && ratio(t.row_misses + t.row_conflicts, served) > 0.25) {
    const double acts = r.act_rate_bound();
    line(fmt::format(
        "why         {:.0f}% of requests found their row closed: each needs an ACT "
        "(and a conflict a PRE first: tRP {} + tRCD {} tCK before its column "
        "command), and a channel can ACT at most min({} banks / tRC {}, 4 / tFAW {}, "
        "1 / tRRD_S {}) = {:.3f} times per tCK: {:.1f}% of the peak if every burst "
        "needs one, against one column command per burst (tBURST {} tCK) for row hits",
        100 * ratio(t.row_misses + t.row_conflicts, served), r.tRP, r.tRCD, r.banks, r.tRC, r.tFAW,
        r.tRRD_S, acts, 100 * acts * static_cast<double>(r.tBURST), r.tBURST));
  }
  if (r.idle_cycles_skipped > 0) {
    line(fmt::format(
        "idle        {} of the {} cycles fast-forwarded (nothing in flight; refreshes counted "
        "from one measured idle tREFI period)",
        r.idle_cycles_skipped, r.cycles));
  }
  line(
      fmt::format("simulation  {:.2f} s wall, {:.2f} s CPU: {:.0f} DRAM cycles per wall second "
                  "({:.0f} per CPU second)",
                  r.wall_seconds, r.cpu_seconds, r.cycles_per_second(), r.cycles_per_cpu_second()));
  line("");
  line(fmt::format("{:>7} {:>9} {:>9} {:>8} {:>6} {:>6} {:>9} {:>9} {:>9} {:>5} {:>9} {:>6} {:>7}",
                   "channel", "reads", "writes", "GB/s", "%peak", "hit%", "hits", "misses",
                   "conflicts", "REFs", "REF cyc", "occ.", "turns"));
  const auto row = [&](const std::string& name, const HbmChannelFigures& f, bool whole) {
    line(fmt::format(
        "{:>7} {:>9} {:>9} {:>8.1f} {:>6.1f} {:>6.1f} {:>9} {:>9} {:>9} {:>5} {:>9} {:>6.1f} {:>7}",
        name, f.reads, f.writes, r.gbps(f), 100 * r.peak_fraction(f, whole), 100 * f.row_hit_rate(),
        f.row_hits, f.row_misses, f.row_conflicts, f.refreshes, f.refresh_cycles,
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

std::string format_hbm_probe(const HbmProbeReport& r) {
  std::string out =
      fmt::format("tpuemu hbm --probe: one read alone, on {} (map {})\n", r.config, r.address_map);
  out += fmt::format("{:<10} {:>12} {:>12} {:>12} {:>7}\n", "case", "latency tCK", "controller",
                     "JEDEC floor", "extra");
  for (const HbmProbeCase& c : r.cases) {
    out +=
        fmt::format("{:<10} {:>12} {:>12} {:>12} {:>7}\n", c.name, c.latency, c.controller, c.floor,
                    static_cast<std::int64_t>(c.latency) - static_cast<std::int64_t>(c.floor));
  }
  out +=
      "latency: arrival -> data back; controller: accepted -> data out; floor: CL + tBURST, + tRCD "
      "for a miss, + tRP for a conflict\n";
  return out;
}

nlohmann::json hbm_probe_to_json(const HbmProbeReport& r) {
  nlohmann::json cases = nlohmann::json::object();
  for (const HbmProbeCase& c : r.cases) {
    cases[c.name] = {
        {"latency_tck", c.latency}, {"controller_tck", c.controller}, {"jedec_floor_tck", c.floor}};
  }
  return {{"config", r.config}, {"address_map", r.address_map}, {"probe", cases}};
}

}  // namespace tpuemu
