// SPDX-License-Identifier: Apache-2.0
#include "tpuemu/shard/sharded_run.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <functional>
#include <optional>
#include <thread>

#include <fmt/format.h>

#include "tpuemu/base/error.h"

namespace tpuemu::shard {
namespace {

// Runs work(i) for i in [0, n) on `jobs` threads; returns the first failure (by index) as text.
std::optional<std::string> parallel_for(std::size_t n, unsigned jobs, const std::function<void(std::size_t)>& work) {
  std::vector<std::optional<std::string>> errors(n);
  auto guarded = [&](std::size_t i) {
    try {
      work(i);
    } catch (const std::exception& e) {
      errors[i] = e.what();
    }
  };
  if (jobs <= 1 || n <= 1) {
    for (std::size_t i = 0; i < n; ++i) guarded(i);
  } else {
    std::atomic<std::size_t> next{0};
    std::vector<std::jthread> threads;
    for (unsigned t = 0; t < std::min<std::size_t>(jobs, n); ++t) {
      threads.emplace_back([&] {
        for (std::size_t i = next++; i < n; i = next++) guarded(i);
      });
    }
  }
  for (auto& e : errors) {
    if (e) return e;
  }
  return std::nullopt;
}

// The gathered whole from every device's part: weight shards and row parts one after another,
// channel parts side by side in every row.
std::vector<std::uint8_t> assemble(StepKind kind, const ModelLayer& gather, const std::vector<std::vector<std::uint8_t>>& parts) {
  std::vector<std::uint8_t> whole;
  if (kind == StepKind::GatherWeights || gather.gather_rows) {
    for (const auto& p : parts) whole.insert(whole.end(), p.begin(), p.end());
    return whole;
  }
  const std::size_t row_bytes = gather.in.channels * (gather.int32_output ? 4 : 1);
  const std::size_t rows = parts.front().size() / row_bytes;
  whole.reserve(rows * row_bytes * parts.size());
  for (std::size_t r = 0; r < rows; ++r) {
    for (const auto& p : parts) {
      whole.insert(whole.end(), p.begin() + static_cast<std::ptrdiff_t>(r * row_bytes),
                   p.begin() + static_cast<std::ptrdiff_t>((r + 1) * row_bytes));
    }
  }
  return whole;
}

DeviceSummary summarize(std::uint32_t device, const WorkloadReport& r, std::uint64_t compute_cycles) {
  DeviceSummary d;
  d.device = device;
  d.cycles = r.cycles;
  d.compute_cycles = compute_cycles;
  d.mxu_utilization = r.mxu_utilization;
  d.hbm_peak_bytes = r.hbm_allocation.peak_in_use_bytes;
  d.hbm_peak_footprint_bytes = r.hbm_allocation.peak_footprint_bytes;
  d.max_external_fragmentation = r.hbm_allocation.max_external_fragmentation;
  d.mean_external_fragmentation = r.hbm_allocation.mean_external_fragmentation;
  d.dma_bytes = r.dma_bytes;
  d.bit_exact = r.bit_exact;
  d.checked_values = r.checked_values;
  d.mismatches = r.mismatches;
  d.first_mismatch = r.first_mismatch;
  return d;
}

std::vector<std::uint8_t> to_bytes(const std::string& s) { return {s.begin(), s.end()}; }

constexpr std::string_view kInterrupted = "interrupted";

// Throws the first failure of any rank on every rank (Interrupted for a stop request).
void agree(Exchange& exchange, const std::optional<std::string>& local) {
  if (const auto error = exchange.first_error(local)) {
    if (error->starts_with(kInterrupted)) throw Interrupted(*error);
    throw Error(*error);
  }
}

// The peak HBM the same run needs on one device; 0 when it does not fit one.
std::uint64_t single_device_peak(const Preset& preset, const Model& model, const RunSettings& settings) {
  try {
    return ModelRun(preset, model, settings).planned_hbm_metrics().peak_in_use_bytes;
  } catch (const alloc::OutOfMemory&) {
    return 0;
  }
}

}  // namespace

nlohmann::json to_json(const DeviceSummary& d) {
  return {{"device", d.device},
          {"cycles", d.cycles},
          {"compute_cycles", d.compute_cycles},
          {"mxu_utilization", d.mxu_utilization},
          {"hbm_peak_bytes", d.hbm_peak_bytes},
          {"hbm_peak_footprint_bytes", d.hbm_peak_footprint_bytes},
          {"max_external_fragmentation", d.max_external_fragmentation},
          {"mean_external_fragmentation", d.mean_external_fragmentation},
          {"bytes_sent", d.bytes_sent},
          {"bytes_received", d.bytes_received},
          {"dma_bytes", d.dma_bytes},
          {"bit_exact", d.bit_exact},
          {"checked_values", d.checked_values},
          {"mismatches", d.mismatches},
          {"first_mismatch", d.first_mismatch}};
}

DeviceSummary device_summary_from_json(const nlohmann::json& j) {
  DeviceSummary d;
  d.device = j.at("device").get<std::uint32_t>();
  d.cycles = j.at("cycles").get<std::uint64_t>();
  d.compute_cycles = j.at("compute_cycles").get<std::uint64_t>();
  d.mxu_utilization = j.at("mxu_utilization").get<double>();
  d.hbm_peak_bytes = j.at("hbm_peak_bytes").get<std::uint64_t>();
  d.hbm_peak_footprint_bytes = j.at("hbm_peak_footprint_bytes").get<std::uint64_t>();
  d.max_external_fragmentation = j.at("max_external_fragmentation").get<double>();
  d.mean_external_fragmentation = j.at("mean_external_fragmentation").get<double>();
  d.bytes_sent = j.at("bytes_sent").get<std::uint64_t>();
  d.bytes_received = j.at("bytes_received").get<std::uint64_t>();
  d.dma_bytes = j.at("dma_bytes").get<std::uint64_t>();
  d.bit_exact = j.at("bit_exact").get<bool>();
  d.checked_values = j.at("checked_values").get<std::uint64_t>();
  d.mismatches = j.at("mismatches").get<std::uint64_t>();
  d.first_mismatch = j.at("first_mismatch").get<std::string>();
  return d;
}

ShardReport run_sharded(const Preset& preset, const Model& model, const RunSettings& settings, const ShardSettings& shard,
                        Exchange& exchange) {
  const auto wall_start = std::chrono::steady_clock::now();
  const std::uint32_t n = shard.devices;
  if (settings.requests != 1) throw Error(fmt::format("--requests {} with --devices: a sharded run takes one request", settings.requests));
  if (n > 1 && !preset.interconnect) {
    throw Error(fmt::format("--devices {}: preset '{}' has no interconnect section to connect them", n, preset.name));
  }
  const InterconnectConfig ic = preset.interconnect.value_or(InterconnectConfig{});
  const Mesh mesh = shard.mesh.empty() ? ring_of(n) : parse_mesh(shard.mesh, n, ic);
  const std::uint32_t ranks = exchange.ranks();
  if (ranks > n || n % ranks != 0) {
    throw Error(fmt::format("mpirun -np {}: the ranks must split --devices {} into equal groups", ranks, n));
  }
  const std::uint32_t local = n / ranks, first = exchange.rank() * local;
  const std::size_t batch = settings.batch.value_or(model.batch);
  const ShardedModel plan = plan_shards(model, batch, shard.mode, n);

  ShardReport rep;
  rep.workload = model.name;
  rep.preset = preset.name;
  rep.backend = settings.backend;
  rep.mode = shard.mode;
  rep.devices = n;
  rep.mesh = mesh;
  rep.interconnect = ic;
  rep.overlap = shard.overlap;
  rep.batch = batch;
  rep.device_batch = plan.device_batch;
  rep.jobs = std::max(1u, std::min(local, shard.jobs != 0 ? shard.jobs : std::thread::hardware_concurrency()));
  rep.ranks = ranks;
  rep.first_local_device = first;

  // ---- every local device's run: its part of the data, compiled and placed, then started
  const GlobalData data = global_data(model, batch);
  RunSettings device_settings = settings;
  device_settings.batch = plan.device_batch;
  device_settings.progress = nullptr;     // reported here, once per step of all devices
  device_settings.interrupted = nullptr;  // asked here, so that every rank stops at the same step
  std::vector<std::optional<ModelRun>> runs(local);
  agree(exchange, parallel_for(local, rep.jobs, [&](std::size_t i) {
    runs[i].emplace(preset, plan.model, device_settings, device_part(plan, model, data, first + static_cast<std::uint32_t>(i), shard.overlap));
    runs[i]->start();
  }));
  rep.backend = runs.front()->device().info().backend;

  // ---- the steps, in order on every device; collectives between them
  std::vector<std::uint64_t> sent(local, 0);
  std::uint64_t links_free = 0;
  const std::size_t steps = runs.front()->step_count();
  for (std::size_t s = 0; s < steps; ++s) {
    if (settings.progress) {
      RunProgress p;
      p.steps_done = s;
      p.steps_total = steps;
      p.layer = plan.model.layers[runs.front()->step_layer(s)].name;
      p.cycles = runs.front()->cycles();
      p.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
      p.fraction_done = static_cast<double>(s) / static_cast<double>(steps);
      settings.progress(p);
    }
    std::optional<std::string> stop;
    if (settings.interrupted && settings.interrupted()) {
      stop = fmt::format("{} before step {} of {} (layer '{}'); nothing was written", kInterrupted, s + 1, steps,
                         plan.model.layers[runs.front()->step_layer(s)].name);
    }
    agree(exchange, stop);
    const StepKind kind = runs.front()->step_kind(s);
    if (kind == StepKind::Launch) {
      agree(exchange, parallel_for(local, rep.jobs, [&](std::size_t i) { runs[i]->run_step(s); }));
      continue;
    }
    std::vector<std::vector<std::uint8_t>> parts(local);
    agree(exchange, parallel_for(local, rep.jobs, [&](std::size_t i) { parts[i] = runs[i]->read_part(s); }));
    const std::vector<std::vector<std::uint8_t>> all = exchange.all_gather(parts);
    const ModelLayer& layer = plan.model.layers[runs.front()->step_layer(s)];
    const std::vector<std::uint8_t> whole = assemble(kind, layer, all);

    std::uint64_t clock = 0;
    for (const auto& r : runs) clock = std::max(clock, r->cycles());
    CollectiveRecord c;
    c.what = kind == StepKind::GatherWeights ? layer.name + " weights" : layer.name;
    c.bytes = whole.size();
    c.overlapped = runs.front()->step_overlapped(s);
    c.issue_cycle = exchange.max(clock);
    c.start_cycle = std::max(c.issue_cycle, links_free);
    const CollectiveCost cost = collective_cost(Collective::AllGather, c.bytes, mesh, ic);
    c.end_cycle = c.start_cycle + cost.cycles;
    c.link_bytes = cost.total_bytes;
    c.analytic_min_bytes = analytic_min_bytes(Collective::AllGather, c.bytes, n);
    links_free = c.end_cycle;
    agree(exchange, parallel_for(local, rep.jobs, [&](std::size_t i) {
      runs[i]->write_whole(s, whole);
      runs[i]->complete_collective(s, c.issue_cycle, c.end_cycle);
      sent[i] += cost.bytes_per_device;
    }));
    rep.interconnect_bytes += c.link_bytes;
    rep.analytic_min_bytes += c.analytic_min_bytes;
    rep.collective_cycles += c.end_cycle - c.start_cycle;
    if (c.overlapped) rep.overlapped_collective_cycles += c.end_cycle - c.start_cycle;
    rep.collectives.push_back(std::move(c));
  }

  // ---- reports: every device's summary reaches every rank
  rep.local_reports.resize(local);
  std::vector<std::vector<std::uint8_t>> summaries(local);
  agree(exchange, parallel_for(local, rep.jobs, [&](std::size_t i) {
    rep.local_reports[i] = runs[i]->finish();
    DeviceSummary d = summarize(first + static_cast<std::uint32_t>(i), rep.local_reports[i], runs[i]->compute_cycles());
    d.bytes_sent = d.bytes_received = sent[i];  // a ring all-gather receives what it sends
    summaries[i] = to_bytes(to_json(d).dump());
  }));
  for (const auto& blob : exchange.all_gather(summaries)) {
    rep.device_summaries.push_back(device_summary_from_json(nlohmann::json::parse(blob.begin(), blob.end())));
  }

  std::uint64_t compute_max = 0, compute_sum = 0;
  rep.bit_exact = true;
  for (const DeviceSummary& d : rep.device_summaries) {
    rep.step_cycles = std::max(rep.step_cycles, d.cycles);
    compute_max = std::max(compute_max, d.compute_cycles);
    compute_sum += d.compute_cycles;
    rep.hbm_peak_bytes = std::max(rep.hbm_peak_bytes, d.hbm_peak_bytes);
    rep.checked_values += d.checked_values;
    rep.mismatches += d.mismatches;
    if (!d.bit_exact) {
      rep.bit_exact = false;
      if (rep.first_mismatch.empty()) rep.first_mismatch = fmt::format("device {}: {}", d.device, d.first_mismatch);
    }
  }
  rep.load_balance = compute_sum == 0 ? 1 : static_cast<double>(compute_max) * n / static_cast<double>(compute_sum);
  RunSettings single = settings;
  single.progress = nullptr;
  rep.single_device_hbm_peak_bytes = n == 1 ? rep.hbm_peak_bytes : single_device_peak(preset, model, single);
  rep.memory_saved = rep.single_device_hbm_peak_bytes == 0
                         ? 0
                         : 1.0 - static_cast<double>(rep.hbm_peak_bytes) / static_cast<double>(rep.single_device_hbm_peak_bytes);
  rep.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  return rep;
}

ShardReport run_sharded(const Preset& preset, const Model& model, const RunSettings& settings, const ShardSettings& shard) {
  LocalExchange local;
  return run_sharded(preset, model, settings, shard, local);
}

}  // namespace tpuemu::shard
