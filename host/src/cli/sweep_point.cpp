// One sweep point as one run_model on a single device (sweep_point.h).
#include "sweep_point.h"

#include <fmt/format.h>

#include "tpuemu/compile/model.h"
#include "tpuemu/compile/workload.h"
#include "tpuemu/config/config.h"
#include "tpuemu/run/runner.h"

namespace tpuemu::cli {

namespace {

std::string string_axis(const sweep::SweepPoint& point, std::string_view axis, std::string fallback) {
  const nlohmann::json* value = point.find(axis);
  return value != nullptr ? value->get<std::string>() : std::move(fallback);
}

}  // namespace

nlohmann::json run_sweep_point(const sweep::SweepPoint& point, const std::filesystem::path& model_path) {
  const nlohmann::json* devices = point.find("devices");
  if ((devices != nullptr && *devices != 1) || point.find("shard") != nullptr || point.find("mesh") != nullptr ||
      point.find("overlap") != nullptr) {
    throw Error("sweep: devices > 1 needs the sharded runner");
  }
  const Model model = load_model(model_path);
  // The defaults of `tpuemu run`: the model's preset and buffers, else default and 2.
  const Preset preset = load_preset(string_axis(point, "preset", model.preset.value_or("default")));
  RunSettings settings;
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
  const WorkloadReport report = run_model(preset, model, settings);
  return {{"step_cycles", report.cycles},
          {"hbm_peak_bytes", report.hbm_allocation.peak_in_use_bytes},
          {"fragmentation", report.hbm_allocation.max_external_fragmentation},
          {"mxu_utilization", report.mxu_utilization},
          {"bit_exact", report.bit_exact},
          {"wall_seconds", report.wall_seconds},
          {"dma_bytes", report.dma_bytes}};
}

}  // namespace tpuemu::cli
