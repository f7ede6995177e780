// SPDX-License-Identifier: Apache-2.0
#include <algorithm>

#include <fmt/format.h>

#include "tpuemu/run/runner.h"

namespace tpuemu {
namespace {

std::string bytes_text(std::uint64_t b) {
  if (b >= (1ull << 20)) return fmt::format("{:.2f} MiB", static_cast<double>(b) / (1 << 20));
  if (b >= (1ull << 10)) return fmt::format("{:.1f} KiB", static_cast<double>(b) / (1 << 10));
  return fmt::format("{} B", b);
}

double pct(std::uint64_t part, std::uint64_t whole) {
  return whole == 0 ? 0.0 : 100.0 * static_cast<double>(part) / static_cast<double>(whole);
}

template <typename... T>
void line(std::string& out, fmt::format_string<T...> format, T&&... args) {
  out += fmt::format(format, std::forward<T>(args)...);
  out += '\n';
}

nlohmann::json hbm_allocation_json(const WorkloadReport& r) {
  nlohmann::json j = alloc::metrics_to_json(r.hbm_allocation);
  nlohmann::json samples = nlohmann::json::array();
  for (const alloc::SpaceSnapshot& s : r.hbm_allocation_samples) samples.push_back(alloc::snapshot_to_json(s));
  j["samples"] = std::move(samples);
  return j;
}

// The memory's registered statistics as they are, plus the figures that need the timing set's clock.
nlohmann::json hbm_json(const WorkloadReport& r) {
  const MemoryStatistics& h = *r.hbm;
  nlohmann::json j = h.to_json();
  j["timing_set"] = r.hbm_timing_set;
  j["tck_ns"] = r.hbm_tck_ns;
  j["gbps"] = h.total("bytes_per_dram_cycle") / r.hbm_tck_ns;
  return j;
}

// Why a fraction of a bound (the roofline's cycles, the memory port's peak) is above 1, which a
// measured run on a faithful model cannot reach; empty when it is not above 1.
std::string why_above_bound(const WorkloadReport& r, double fraction) {
  if (!(fraction > 1.0)) return {};
  if (r.backend == "fake") {
    return "above 100% because the fake backend's cycles are approximate: it models neither the memory's "
           "bandwidth nor its latency";
  }
  if (!r.cycles_approximate.empty()) return "above 100% because the cycles are approximate: " + r.cycles_approximate;
  if (r.dma_bytes < r.min_hbm_bytes) {
    return "above 100% because the run moved less than the minimum traffic the bound assumes";
  }
  return "above 100%: the measured cycles undercut the bound, which is a modelling error to report";
}

}  // namespace

std::string format_report(const WorkloadReport& r) {
  const Counters& c = r.counters;
  std::string s;
  line(s, "tpuemu run: {}  (preset {}, backend {}, buffers a={} b={} out={}, layout {})", r.workload, r.preset,
       r.backend, r.buffers.a, r.buffers.b, r.buffers.out, r.tiled ? "tiled" : "untiled");
  line(s, "  batch {} x {} request{}, HBM placed by the {}", r.batch, r.requests, r.requests == 1 ? "" : "s",
       r.hbm_placement == "planner" ? std::string("offline planner") : r.hbm_placement + " allocator");
  for (std::size_t i = 0; i < r.layers.size(); ++i) {
    const LayerReport& l = r.layers[i];
    const std::string shapes = fmt::format("{}x{}x{} -> {}x{}x{}", l.in.height, l.in.width, l.in.channels,
                                           l.out.height, l.out.width, l.out.channels);
    if (l.kind == LayerKind::Gather) {
      line(s, "  layer {} {} (gather over the interconnect): {}", i, l.name, shapes);
      continue;
    }
    if (l.kind == LayerKind::Add) {
      line(s, "  layer {} {} (add): {}, blocks of {} rows, {} slot{}", i, l.name, shapes, l.plan.block_m,
           l.plan.a_slots, l.plan.a_slots == 1 ? "" : "s");
      continue;
    }
    line(s, "  layer {} {} ({}): {}  matmul {}x{}x{} -> {}  blocks {}x{} rows x {} tiles, {} k tiles, A {} ({} slot{}), "
         "B {} slots, out {} slots",
         i, l.name, layer_kind_name(l.kind), shapes, l.spec.m, l.spec.k, l.spec.n, l.spec.requantize ? "int8" : "int32",
         l.plan.m_blocks, l.plan.block_m, l.plan.block_n_tiles, l.plan.k_tiles, l.plan.a_resident ? "resident" : "streamed",
         l.plan.a_slots, l.plan.a_slots == 1 ? "" : "s", l.plan.b_slots, l.plan.out_slots);
  }
  line(s, "result      {}  ({} values checked against the C++ reference{})", r.bit_exact ? "PASS bit-exact" : "FAIL",
       r.checked_values, r.bit_exact ? "" : fmt::format("; {} differ, first {}", r.mismatches, r.first_mismatch));
  line(s, "cycles      {}  ({:.1f} us at {} GHz)", r.cycles, static_cast<double>(r.cycles) / (r.clock_ghz * 1e3),
       r.clock_ghz);
  if (!r.cycles_approximate.empty()) line(s, "            approximate: {}", r.cycles_approximate);
  const auto note = [](const std::string& why) { return why.empty() ? why : " (" + why + ")"; };
  line(s, "roofline    bound {} cycles (compute {}, memory {} at {:.4g} B/cycle): {:.1f}% of the bound reached{}",
       r.roofline_cycles, r.ideal_cycles,
       [&] { std::uint64_t m = 0; for (const auto& l : r.layers) m += l.memory_bound_cycles; return m; }(),
       r.memory_port_bytes_per_cycle, 100.0 * r.roofline_fraction, note(why_above_bound(r, r.roofline_fraction)));
  line(s, "MXU         busy {} cycles = {:.1f}% utilisation; weight loads {} cycles (overlapped)", c.mxu_busy,
       100.0 * r.mxu_utilization, c.weight_load_busy);
  line(s, "HBM         {} moved = {:.2f} B/cycle, {:.1f}% of the core's memory-port peak{}; DMA traffic {:.2f}x the "
       "minimum {}",
       bytes_text(r.hbm_bytes), r.hbm_bytes_per_cycle, 100.0 * r.hbm_peak_fraction,
       note(why_above_bound(r, r.hbm_peak_fraction)), r.hbm_traffic_over_minimum, bytes_text(r.min_hbm_bytes));
  line(s, "            the port's peak: {}", r.memory_port_basis);
  line(s, "DMA bytes   hbm->vmem {}  vmem->hbm {}  acc->hbm {}  hbm->smem {}  smem->hbm {}",
       bytes_text(c.bytes_hbm_to_vmem), bytes_text(c.bytes_vmem_to_hbm), bytes_text(c.bytes_acc_to_hbm),
       bytes_text(c.bytes_hbm_to_smem), bytes_text(c.bytes_smem_to_hbm));
  line(s, "stalls      MXU: semaphore {} ({:.1f}%), weights {}, VMEM conflict {}; DMA: semaphore {}, memory {}; "
       "vector: semaphore {}, VMEM conflict {}; fetch: queue full {}",
       c.mxu_stall_semaphore, pct(c.mxu_stall_semaphore, r.cycles), c.mxu_stall_weights,
       c.mxu_stall_bank_conflict, c.dma_stall_semaphore, c.dma_stall_memory, c.vector_stall_semaphore,
       c.vector_stall_bank_conflict, c.fetch_stall);
  if (r.hbm) {
    const MemoryStatistics& h = *r.hbm;
    const double gbps = h.total("bytes_per_dram_cycle") / r.hbm_tck_ns;
    const std::uint64_t dram_cycles = h.count("dram_cycles");
    line(s, "HBM device  {}: {} reads + {} writes of 64 B in {} DRAM cycles = {:.1f} GB/s, {:.1f}% of the DRAM's peak",
         r.hbm_timing_set, h.count("reads"), h.count("writes"), dram_cycles, gbps, 100.0 * h.total("peak_fraction"));
    line(s, "            read latency mean {:.1f} / p50 {} / p99 {} tCK from the offer on a lane (queue waits counted), "
         "mean {:.1f} / p50 {} / p99 {} from acceptance",
         h.total("read_latency_from_offer_mean"), h.count("read_latency_from_offer_p50"),
         h.count("read_latency_from_offer_p99"), h.total("read_latency_mean"), h.count("read_latency_p50"),
         h.count("read_latency_p99"));
    line(s, "            row hits {} misses {} conflicts {} "
         "({:.1f}% hits); {} refreshes ({} cycles); {} read/write turnarounds",
         h.count("row_hits"),
         h.count("row_misses"), h.count("row_conflicts"), 100.0 * h.total("row_hit_rate"), h.count("refs"),
         h.count("ref_cycles"), h.count("turnarounds"));
    const double cycles = static_cast<double>(std::max<std::uint64_t>(dram_cycles, 1));
    std::string per_channel;
    for (std::size_t c = 0; c < h.channels(); ++c) {
      per_channel += fmt::format("{}{}:{:.1f}", c ? " " : "", c,
                                 (h.channel("reads", c) + h.channel("writes", c)) * 64 / cycles / r.hbm_tck_ns);
    }
    line(s, "            mean queue occupancy {:.2f} per channel; GB/s per channel {}",
         h.total("occ_sum") / cycles / static_cast<double>(std::max<std::size_t>(h.channels(), 1)), per_channel);
  }
  line(s, "VMEM        peak {} of {} ({:.1f}%), placed by the {}; {} bank conflicts", bytes_text(r.vmem_peak_bytes),
       bytes_text(r.vmem_capacity_bytes), pct(r.vmem_peak_bytes, r.vmem_capacity_bytes),
       r.vmem_allocation ? r.vmem_allocation->policy + " allocator" : std::string("offline planner"), c.vmem_bank_conflicts);
  if (r.vmem_allocation) {
    const alloc::SpaceMetrics& v = *r.vmem_allocation;
    line(s, "VMEM alloc  {}: {} buffers, {} in use for {} live ({:.3f}x), footprint {}, ext. fragmentation max {:.1f}%",
         v.policy, v.allocations, bytes_text(v.peak_in_use_bytes), bytes_text(v.peak_live_bytes),
         v.peak_in_use_over_peak_live, bytes_text(v.peak_footprint_bytes), 100 * v.max_external_fragmentation);
  }
  line(s, "ACC         peak {} of {} ({:.1f}%)", bytes_text(r.acc_peak_bytes), bytes_text(r.acc_capacity_bytes),
       pct(r.acc_peak_bytes, r.acc_capacity_bytes));
  const alloc::SpaceMetrics& a = r.hbm_allocation;
  line(s, "HBM alloc   {}: {} buffers, {} in use for {} live ({:.3f}x), footprint {}, internal waste {} "
       "(layout padding {}); program {} instructions", a.policy, a.allocations, bytes_text(a.peak_in_use_bytes),
       bytes_text(a.peak_live_bytes), a.peak_in_use_over_peak_live, bytes_text(a.peak_footprint_bytes),
       bytes_text(a.peak_internal_waste_bytes), bytes_text(r.padding_bytes), r.program_instructions);
  line(s, "simulation  {:.2f} s wall, {:.0f} simulated cycles/s", r.wall_seconds, r.sim_cycles_per_second);
  return s;
}

nlohmann::json report_to_json(const WorkloadReport& r) {
  nlohmann::json layers = nlohmann::json::array();
  for (const LayerReport& l : r.layers) {
    layers.push_back({{"name", l.name}, {"kind", layer_kind_name(l.kind)},
                      {"in", {l.in.height, l.in.width, l.in.channels}}, {"out", {l.out.height, l.out.width, l.out.channels}},
                      {"m", l.spec.m}, {"k", l.spec.k}, {"n", l.spec.n},
                      {"output", l.spec.requantize ? "int8" : "int32"},
                      {"block_m", l.plan.block_m}, {"block_n_tiles", l.plan.block_n_tiles},
                      {"k_tiles", l.plan.k_tiles}, {"m_blocks", l.plan.m_blocks}, {"n_blocks", l.plan.n_blocks},
                      {"a_resident", l.plan.a_resident}, {"a_slots", l.plan.a_slots},
                      {"b_slots", l.plan.b_slots}, {"out_slots", l.plan.out_slots},
                      {"vmem_rows_used", l.plan.vmem_rows_used}, {"acc_rows_used", l.plan.acc_rows_used},
                      {"planned_bytes", {{"a", l.plan.bytes_a}, {"b", l.plan.bytes_b}, {"out", l.plan.bytes_out},
                                         {"a_reused", l.plan.bytes_a_reused}}},
                      {"ideal_cycles", l.ideal_cycles}, {"min_hbm_bytes", l.min_hbm_bytes},
                      {"memory_bound_cycles", l.memory_bound_cycles}, {"roofline_cycles", l.roofline_cycles},
                      {"padding_bytes", l.padding_bytes}});
  }
  nlohmann::json steps = nlohmann::json::array();
  for (const StepReport& st : r.steps) {
    steps.push_back({{"layer", r.layers[st.layer].name}, {"request", st.request}, {"start_cycle", st.start_cycle},
                     {"end_cycle", st.end_cycle}, {"instructions", st.instructions}});
  }
  nlohmann::json counters = nlohmann::json::object();
  const auto values = r.counters.to_array();
  for (std::size_t j = 0; j < Counters::kCount; ++j) counters[std::string(Counters::name(j))] = values[j];
  return {
      {"workload", r.workload},
      {"preset", r.preset},
      {"backend", r.backend},
      {"buffers", {{"a", r.buffers.a}, {"b", r.buffers.b}, {"out", r.buffers.out}}},
      {"layout", r.tiled ? "tiled" : "untiled"},
      {"batch", r.batch},
      {"requests", r.requests},
      {"hbm_placement", r.hbm_placement},
      {"layers", layers},
      {"steps", steps},
      {"result", {{"bit_exact", r.bit_exact}, {"checked_values", r.checked_values},
                  {"mismatches", r.mismatches}, {"first_mismatch", r.first_mismatch}}},
      {"run", {{"status", std::string(to_string(r.run.status))}, {"cycles", r.cycles},
               {"cycles_approximate", r.cycles_approximate.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.cycles_approximate)}}},
      {"roofline", {{"bound_cycles", r.roofline_cycles}, {"ideal_mxu_cycles", r.ideal_cycles},
                    {"min_hbm_bytes", r.min_hbm_bytes}, {"fraction", r.roofline_fraction},
                    {"above_bound", why_above_bound(r, r.roofline_fraction)}}},
      {"mxu_utilization", r.mxu_utilization},
      {"hbm", {{"bytes", r.hbm_bytes}, {"bytes_per_cycle", r.hbm_bytes_per_cycle},
               {"peak_fraction", r.hbm_peak_fraction}, {"dma_bytes", r.dma_bytes},
               {"port_peak_bytes_per_cycle", r.memory_port_bytes_per_cycle},
               {"port_peak_basis", r.memory_port_basis},
               {"above_peak", why_above_bound(r, r.hbm_peak_fraction)},
               {"traffic_over_minimum", r.hbm_traffic_over_minimum},
               {"allocated_bytes", r.hbm_allocated_bytes}, {"padding_bytes", r.padding_bytes}}},
      {"vmem", {{"peak_bytes", r.vmem_peak_bytes}, {"capacity_bytes", r.vmem_capacity_bytes}}},
      {"acc", {{"peak_bytes", r.acc_peak_bytes}, {"capacity_bytes", r.acc_capacity_bytes}}},
      {"counters", counters},
      {"program_instructions", r.program_instructions},
      {"hbm_device", r.hbm ? hbm_json(r) : nlohmann::json(nullptr)},
      {"hbm_allocation", hbm_allocation_json(r)},
      {"vmem_allocation", r.vmem_allocation ? alloc::metrics_to_json(*r.vmem_allocation) : nlohmann::json(nullptr)},
      {"simulation", {{"wall_seconds", r.wall_seconds}, {"cycles_per_second", r.sim_cycles_per_second}}},
  };
}

}  // namespace tpuemu
