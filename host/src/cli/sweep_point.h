// The point runner of `tpuemu sweep` (docs/sweep.md): what one point of a grid means as a run.
// Its own file because the sharded runner will replace the body (the devices, shard, mesh and
// overlap axes); the sweep engine only sees the results.
#pragma once

#include <filesystem>

#include <nlohmann/json.hpp>

#include "tpuemu/sweep/sweep.h"

namespace tpuemu::cli {

// Runs the model at `model` on one device with the point's preset, backend, allocator, buffers and
// batch (each defaulting as in `tpuemu run`) and returns {step_cycles, hbm_peak_bytes,
// fragmentation, mxu_utilization, bit_exact, wall_seconds, dma_bytes}. Throws Error for a point
// it cannot run as asked - devices other than 1, or any shard, mesh or overlap axis: an axis is
// never silently ignored - and whatever the run throws (an unknown preset or allocator, out of
// HBM, ...).
nlohmann::json run_sweep_point(const sweep::SweepPoint& point, const std::filesystem::path& model);

}  // namespace tpuemu::cli
