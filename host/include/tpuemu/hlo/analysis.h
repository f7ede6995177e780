// SPDX-License-Identifier: Apache-2.0
// Layer hlo: one program's memory, end to end (docs/hlo.md): the schedule chosen, its buffers,
// every placement policy side by side, the usage split the TPU compiler reports, and its
// out-of-memory message at a given HBM capacity. Printed as text or JSON by `tpuemu analyze X.hlo`.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tpuemu/hlo/hlo_module.h"
#include "tpuemu/hlo/liveness.h"
#include "tpuemu/hlo/placement.h"

namespace tpuemu::hlo {

struct AnalysisOptions {
  std::string schedule;               // "", "text", "dfs", "list", "best" (liveness.h)
  std::vector<std::string> policies;  // placement policies; empty: every one
  SizeOptions sizes;
  std::optional<std::uint64_t> hbm_capacity;
  std::optional<std::uint64_t> vmem_capacity;  // buffers in S(1); the preset's VMEM
  double planner_timeout_seconds = 10;
  StopToken stop;  // asked by every phase (Interrupted): a user's Ctrl-C
};

// What the program needs in HBM, split as XLA's buffer assignment splits it (the "xla" policy,
// assign_xla): arguments, constants and outputs in allocations of their own, the temporaries in
// one block. total = arguments + outputs + constants + temporaries, the "xla" heap.
struct HbmUsage {
  std::uint64_t arguments = 0;       // every ENTRY parameter, donated ones included
  std::uint64_t outputs = 0;         // outputs with allocations of their own
  std::uint64_t outputs_shared = 0;  // outputs in donated arguments' allocations (within arguments)
  std::uint64_t constants = 0;
  std::uint64_t temporaries = 0;           // the temporaries' block: holds their peak and the holes
  std::uint64_t temporaries_padded = 0;    // the temporaries' own peak, tiled
  std::uint64_t temporaries_unpadded = 0;  // and unpadded
  std::uint64_t total = 0;
};

struct Analysis {
  std::string source;  // the file
  std::string module;  // HloModule's name
  std::size_t entry_instructions = 0;
  std::size_t instructions = 0;
  std::int64_t num_partitions = 1;
  bool sharded = false;  // num_partitions > 1 or any sharding: shapes are per device
  SizeOptions sizes;
  std::string schedule_requested;  // text, dfs, list or best; schedule.name is the one used
  // The schedule; its `buffers` are the HBM buffers (memory space 0), what the policies place.
  // Its peaks cover every memory space.
  ScheduleChoice schedule;
  // Buffers in VMEM (S(1)), placed apart by the xla heap simulator, checked against its capacity.
  BufferSet vmem;
  Placement vmem_xla;
  std::optional<std::uint64_t> vmem_capacity;
  bool vmem_out_of_memory() const { return vmem_capacity && vmem_xla.heap_bytes > *vmem_capacity; }
  std::vector<Placement> placements;  // in the order asked
  Placement xla;                      // the TPU compiler's own, whether asked or not
  HbmUsage usage;
  std::optional<std::uint64_t> hbm_capacity;
  bool hbm_out_of_memory() const { return hbm_capacity && usage.total > *hbm_capacity; }
  bool out_of_memory() const { return hbm_out_of_memory() || vmem_out_of_memory(); }
};

Analysis analyze(const Module& module, const AnalysisOptions& options);

// The report for a person: schedules' peaks, the policies side by side, the usage split.
std::string format_analysis(const Analysis& analysis);
// The TPU compiler's out-of-memory message (first line: "Ran out of memory in memory space hbm.
// Used X of Y hbm. Exceeded hbm capacity by Z.", or the same of vmem when VMEM is what overflows
// and HBM does not); empty when the program fits.
std::string out_of_memory_report(const Analysis& analysis, std::size_t largest = 10);
nlohmann::json analysis_to_json(const Analysis& analysis);

}  // namespace tpuemu::hlo
