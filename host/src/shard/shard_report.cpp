// SPDX-License-Identifier: Apache-2.0
// The sharded run's report: one line per device, then the run's figures (docs/sharding.md,
// "Report").
#include <fmt/format.h>

#include "tpuemu/shard/sharded_run.h"

namespace tpuemu::shard {
namespace {

std::string kib(std::uint64_t bytes) { return fmt::format("{:.1f} KiB", static_cast<double>(bytes) / 1024.0); }

template <typename... T>
void line(std::string& out, fmt::format_string<T...> format, T&&... args) {
  out += fmt::format(format, std::forward<T>(args)...);
  out += '\n';
}

std::string mesh_text(const Mesh& m) { return m.torus() ? fmt::format("torus {}x{}", m.rows, m.cols) : fmt::format("ring of {}", m.cols); }

}  // namespace

std::string format_shard_report(const ShardReport& r) {
  std::string s;
  line(s, "tpuemu run: {} sharded by {} over {} device{}  (preset {}, backend {}, {} threads{})", r.workload, to_string(r.mode),
       r.devices, r.devices == 1 ? "" : "s", r.preset, r.backend, r.jobs,
       r.ranks > 1 ? fmt::format(" on each of {} MPI ranks", r.ranks) : "");
  line(s, "  interconnect {}: {} link{} per device x {} B/cycle, {} cycles latency", mesh_text(r.mesh), r.interconnect.links_per_device,
       r.interconnect.links_per_device == 1 ? "" : "s", r.interconnect.link_bytes_per_cycle, r.interconnect.latency_cycles);
  line(s, "  batch {} ({} per device){}", r.batch, r.device_batch,
       r.mode == ShardMode::Fsdp && r.devices > 1
           ? fmt::format("; weights stored 1/{} per device, gathered {}", r.devices, r.overlap ? "while the layer before runs" : "just before each layer")
           : "");
  line(s, "  {:>6} {:>12} {:>12} {:>8} {:>12} {:>10} {:>12} {:>12}  {}", "device", "cycles", "compute", "MXU", "HBM peak", "frag max",
       "sent", "received", "result");
  for (const DeviceSummary& d : r.device_summaries) {
    line(s, "  {:>6} {:>12} {:>12} {:>7.1f}% {:>12} {:>9.1f}% {:>12} {:>12}  {}", d.device, d.cycles, d.compute_cycles,
         100.0 * d.mxu_utilization, kib(d.hbm_peak_bytes), 100.0 * d.max_external_fragmentation, d.bytes_sent, d.bytes_received,
         d.bit_exact ? "bit-exact" : fmt::format("{} mismatches", d.mismatches));
  }
  line(s, "result      {}  ({} values on {} device{} checked against the single-device C++ reference{})",
       r.bit_exact ? "PASS bit-exact" : "FAIL", r.checked_values, r.devices, r.devices == 1 ? "" : "s",
       r.bit_exact ? "" : fmt::format("; {} differ, first {}", r.mismatches, r.first_mismatch));
  line(s, "step time   {} cycles (the slowest device); load balance {:.3f} (max / mean compute cycles)", r.step_cycles, r.load_balance);
  const double over = r.analytic_min_bytes == 0 ? 1.0 : static_cast<double>(r.interconnect_bytes) / static_cast<double>(r.analytic_min_bytes);
  line(s, "interconnect {} bytes over the links in {} collective{} (analytic minimum {}: {:.3f}x); {} cycles, {} of them beside compute",
       r.interconnect_bytes, r.collectives.size(), r.collectives.size() == 1 ? "" : "s", r.analytic_min_bytes, over,
       r.collective_cycles, r.overlapped_collective_cycles);
  if (r.single_device_hbm_peak_bytes != 0) {
    line(s, "memory      HBM peak {} on the largest device, {} on one device: {:.1f}% saved", kib(r.hbm_peak_bytes),
         kib(r.single_device_hbm_peak_bytes), 100.0 * r.memory_saved);
  } else {
    line(s, "memory      HBM peak {} on the largest device; the run does not fit one device", kib(r.hbm_peak_bytes));
  }
  line(s, "simulation  {:.2f} s wall", r.wall_seconds);
  return s;
}

nlohmann::json shard_report_to_json(const ShardReport& r) {
  nlohmann::json devices = nlohmann::json::array();
  for (const DeviceSummary& d : r.device_summaries) devices.push_back(to_json(d));
  nlohmann::json collectives = nlohmann::json::array();
  for (const CollectiveRecord& c : r.collectives) {
    collectives.push_back({{"what", c.what},
                           {"kind", to_string(c.kind)},
                           {"bytes", c.bytes},
                           {"issue_cycle", c.issue_cycle},
                           {"start_cycle", c.start_cycle},
                           {"end_cycle", c.end_cycle},
                           {"overlapped", c.overlapped},
                           {"link_bytes", c.link_bytes},
                           {"analytic_min_bytes", c.analytic_min_bytes}});
  }
  return {{"workload", r.workload},
          {"preset", r.preset},
          {"backend", r.backend},
          {"shard", to_string(r.mode)},
          {"devices", r.devices},
          {"mesh", {{"rows", r.mesh.rows}, {"cols", r.mesh.cols}}},
          {"interconnect",
           {{"topology", r.interconnect.topology},
            {"links_per_device", r.interconnect.links_per_device},
            {"link_bytes_per_cycle", r.interconnect.link_bytes_per_cycle},
            {"latency_cycles", r.interconnect.latency_cycles}}},
          {"overlap", r.overlap},
          {"batch", r.batch},
          {"device_batch", r.device_batch},
          {"jobs", r.jobs},
          {"ranks", r.ranks},
          {"step_cycles", r.step_cycles},
          {"load_balance", r.load_balance},
          {"interconnect_bytes", r.interconnect_bytes},
          {"analytic_min_bytes", r.analytic_min_bytes},
          {"collective_cycles", r.collective_cycles},
          {"overlapped_collective_cycles", r.overlapped_collective_cycles},
          {"hbm_peak_bytes", r.hbm_peak_bytes},
          {"single_device_hbm_peak_bytes", r.single_device_hbm_peak_bytes},
          {"memory_saved", r.memory_saved},
          {"bit_exact", r.bit_exact},
          {"checked_values", r.checked_values},
          {"mismatches", r.mismatches},
          {"first_mismatch", r.first_mismatch},
          {"wall_seconds", r.wall_seconds},
          {"per_device", devices},
          {"collectives", collectives}};
}

}  // namespace tpuemu::shard
