// SPDX-License-Identifier: Apache-2.0
// Layer hlo: XLA's dataflow and alias rules on one schedule -> the program's buffers with their
// live ranges and sizes (docs/hlo.md, "Liveness"); and the schedulers that choose the order.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tpuemu/base/stop.h"
#include "tpuemu/hlo/buffers.h"
#include "tpuemu/hlo/hlo_module.h"

namespace tpuemu::hlo {

// How array bytes are counted: TPU tiles by element width and the lane count (f32 (8,lanes),
// 16-bit (8,lanes)(2,1), 8-bit (8,lanes)(4,1), ...), or the module's own T(...) tiles where its
// layout has them; untiled: dense.
struct SizeOptions {
  bool tiled = true;
  std::uint32_t lanes = 128;
};
// Bytes of an array shape as stored (padded) and its unpadded bytes; tuples: their index table
// (8 bytes a pointer, as XLA's TPU backend counts it) - docs/hlo.md says what is counted.
struct ShapeBytes {
  std::uint64_t padded = 0;
  std::uint64_t unpadded = 0;
  std::string layout;  // the tiled layout used, e.g. "{1,0:T(8,128)(2,1)}"
};
ShapeBytes shape_bytes(const Shape& shape, const SizeOptions& options);

// A schedule: for every computation, its instructions in execution order (indices into
// Computation::instructions). Sub-computations' own orders are kept; liveness nests them in the
// caller's time.
struct Schedule {
  std::string name;  // "text", "dfs", "list"
  std::vector<std::vector<std::size_t>> order;  // order[computation] = instruction indices
};
Schedule text_schedule(const Module& module);
// The heuristics of dfs and list weigh each instruction's padded bytes under `sizes`. `stop` is
// asked before each computation (Interrupted).
Schedule dfs_schedule(const Module& module, const SizeOptions& sizes = {}, const StopToken& stop = StopToken{});
// memory-minimizing
Schedule list_schedule(const Module& module, const SizeOptions& sizes = {}, const StopToken& stop = StopToken{});

// The buffers of `module` on `schedule`, positions flattened over nested computations: the
// dataflow (dataflow.h), the buffers its values share (alias_analysis.h) and their live ranges
// (live_range.h), composed. Throws Error for a schedule that is not a topological order of every
// computation, a computation that calls itself, or a flattened schedule beyond 2^25 positions.
BufferSet live_buffers(const Module& module, const Schedule& schedule, const SizeOptions& sizes);

// Each schedule's peaks, and the one chosen: "text", "dfs", "list", or "best" (the lowest padded
// peak of the three, ties to the earlier in that order, as XLA's default scheduler keeps the min).
struct ScheduleChoice {
  std::string name;  // the schedule used
  Schedule schedule;
  BufferSet buffers;
  struct Peak {
    std::string name;
    std::uint64_t peak_live_bytes = 0;
    std::uint64_t peak_live_bytes_unpadded = 0;
  };
  std::vector<Peak> peaks;  // text, dfs, list
};
// name: "text", "dfs", "list", "best"; empty: "text" when the module is_scheduled, else "best".
// `stop` is asked between the phases (Interrupted).
ScheduleChoice choose_schedule(const Module& module, const std::string& name, const SizeOptions& sizes,
                               const StopToken& stop = StopToken{});

}  // namespace tpuemu::hlo
