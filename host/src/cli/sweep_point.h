// SPDX-License-Identifier: Apache-2.0
// The point runner of `tpuemu sweep` (docs/sweep.md): what one point of a grid means as a run.
// The sweep engine only sees the results.
#pragma once

#include <filesystem>

#include <nlohmann/json.hpp>

#include "tpuemu/base/stop.h"
#include "tpuemu/sweep/sweep.h"

namespace tpuemu::cli {

// Runs the model at `model` as a sharded run (tpuemu/shard/sharded_run.h) with the point's
// devices, shard, mesh, overlap, preset, backend, allocator, buffers and batch (each defaulting as
// in `tpuemu run`: one device), its devices simulated on `device_jobs` threads (0: one per core),
// and returns {step_cycles (the slowest device), hbm_peak_bytes (the largest device's),
// fragmentation (the worst device's maximum), mxu_utilization (the devices' mean), bit_exact,
// wall_seconds, dma_bytes (all devices), interconnect_bytes, analytic_min_bytes, load_balance,
// memory_saved}. Throws Error for a point it cannot run as asked (devices > 1 without a shard
// axis, overlap false outside fsdp: an axis is never silently ignored) and whatever the run throws
// (an unknown preset, allocator or shard mode, a split that cannot be made, out of HBM, ...), or
// Interrupted when `stop` asks (the run polls it as `tpuemu run` does).
nlohmann::json run_sweep_point(const sweep::SweepPoint& point, const std::filesystem::path& model, unsigned device_jobs,
                               const StopToken& stop);

}  // namespace tpuemu::cli
