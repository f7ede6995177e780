// SPDX-License-Identifier: Apache-2.0
// One sweep point as one sharded run (sweep_point.h): one device unless the point says more.
#include "sweep_point.h"

#include <algorithm>

#include <fmt/format.h>

#include "tpuemu/compile/model.h"
#include "tpuemu/compile/workload.h"
#include "tpuemu/config/config.h"
#include "tpuemu/run/runner.h"
#include "tpuemu/shard/sharded_run.h"

namespace tpuemu::cli {

namespace {

std::string string_axis(const sweep::SweepPoint& point, std::string_view axis, std::string fallback) {
  const nlohmann::json* value = point.find(axis);
  return value != nullptr ? value->get<std::string>() : std::move(fallback);
}

}  // namespace

nlohmann::json run_sweep_point(const sweep::SweepPoint& point, const std::filesystem::path& model_path,
                               unsigned device_jobs, const StopToken& stop) {
  shard::ShardSettings ss;
  if (const nlohmann::json* devices = point.find("devices")) {
    if (devices->get<std::uint64_t>() > 64) throw Error(fmt::format("devices {}: at most 64", devices->dump()));
    ss.devices = devices->get<std::uint32_t>();
  }
  const nlohmann::json* shard_mode = point.find("shard");
  if (ss.devices > 1 && shard_mode == nullptr) {
    throw Error(fmt::format("devices {}: the grid needs a shard axis (batch, tensor, fsdp)", ss.devices));
  }
  if (shard_mode != nullptr) ss.mode = shard::parse_shard_mode(shard_mode->get<std::string>());
  ss.mesh = string_axis(point, "mesh", "");
  if (const nlohmann::json* overlap = point.find("overlap")) {
    if (ss.mode != shard::ShardMode::Fsdp && !overlap->get<bool>()) {
      throw Error("overlap false: applies to shard fsdp (the weight gathers it overlaps with compute)");
    }
    ss.overlap = overlap->get<bool>();
  }
  ss.jobs = device_jobs;
  const Model model = load_model(model_path);
  // The defaults of `tpuemu run`: the model's preset and buffers, else default and 2.
  const Preset preset = point.find("preset") != nullptr ? load_preset(string_axis(point, "preset", ""))
                                                        : load_model_preset(model);
  RunSettings settings;
  settings.interrupted = [stop] { return stop.requested(); };
  settings.backend = string_axis(point, "backend", settings.backend);
  settings.allocator = string_axis(point, "allocator", settings.allocator);
  std::uint64_t buffers = model.buffers.value_or(2);
  if (const nlohmann::json* value = point.find("buffers")) buffers = value->get<std::uint64_t>();
  // Checked here as well as by the compiler, which would see a larger count cut to unsigned.
  if (buffers > 3) throw Error(fmt::format("buffers {}: a buffer count is 1, 2 or 3", buffers));
  const auto count = static_cast<unsigned>(buffers);
  settings.compile.buffers = {count, count, count};
  if (const nlohmann::json* batch = point.find("batch")) {
    if (batch->get<std::uint64_t>() > kMaxDimension) {
      throw Error(fmt::format("batch {}: more than {} samples", batch->dump(), kMaxDimension));
    }
    settings.batch = batch->get<std::size_t>();
  }
  const shard::ShardReport r = shard::run_sharded(preset, model, settings, ss);
  double fragmentation = 0, mxu = 0;
  std::uint64_t dma = 0;
  for (const shard::DeviceSummary& d : r.device_summaries) {
    fragmentation = std::max(fragmentation, d.max_external_fragmentation);
    mxu += d.mxu_utilization / static_cast<double>(r.device_summaries.size());
    dma += d.dma_bytes;
  }
  return {{"step_cycles", r.step_cycles},
          {"hbm_peak_bytes", r.hbm_peak_bytes},
          {"fragmentation", fragmentation},
          {"mxu_utilization", mxu},
          {"bit_exact", r.bit_exact},
          {"wall_seconds", r.wall_seconds},
          {"dma_bytes", dma},
          {"interconnect_bytes", r.interconnect_bytes},
          {"analytic_min_bytes", r.analytic_min_bytes},
          {"load_balance", r.load_balance},
          {"memory_saved", r.memory_saved}};
}

}  // namespace tpuemu::cli
