// SPDX-License-Identifier: Apache-2.0
// A run split across N simulated devices (docs/sharding.md): every device runs its part of the
// model (shard_plan.h) as its own ModelRun on its own backend device; between launches the
// runner carries out the collectives - it reads each device's part from that device's HBM, moves
// the gathered whole into every device's HBM, and times the collective on the interconnect
// model (collectives.h). Each device keeps its own clock; a collective starts when the last
// device asks for it (and the links are free) and a device's clock jumps to its completion, so
// a serial run, threads and MPI ranks give the same cycles.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tpuemu/run/runner.h"
#include "tpuemu/shard/collectives.h"
#include "tpuemu/shard/exchange.h"
#include "tpuemu/shard/shard_plan.h"

namespace tpuemu::shard {

struct ShardSettings {
  ShardMode mode = ShardMode::Batch;
  std::uint32_t devices = 1;
  std::string mesh;      // "" (a ring of `devices`), "N" or "RxC" (parse_mesh)
  bool overlap = true;   // fsdp: gather the next layer's weights while the current one runs
  unsigned jobs = 0;     // threads simulating this process's devices (0: one per core, at most one per device)
};

// One device's figures: what the run report shows per device and what MPI ranks send rank 0.
struct DeviceSummary {
  std::uint32_t device = 0;
  std::uint64_t cycles = 0;          // its clock at the end (collectives included)
  std::uint64_t compute_cycles = 0;  // its launches alone
  double mxu_utilization = 0;        // MXU busy / cycles
  std::uint64_t hbm_peak_bytes = 0;  // the HBM allocator's peak in use
  std::uint64_t hbm_peak_footprint_bytes = 0;
  double max_external_fragmentation = 0, mean_external_fragmentation = 0;
  std::uint64_t bytes_sent = 0, bytes_received = 0;  // over the interconnect
  std::uint64_t dma_bytes = 0;
  bool bit_exact = false;
  std::uint64_t checked_values = 0, mismatches = 0;
  std::string first_mismatch;
};
nlohmann::json to_json(const DeviceSummary& d);
DeviceSummary device_summary_from_json(const nlohmann::json& j);

struct CollectiveRecord {
  std::string what;  // "fc1 weights", "fc2.gather"
  Collective kind = Collective::AllGather;
  std::uint64_t bytes = 0;  // the gathered whole
  std::uint64_t issue_cycle = 0, start_cycle = 0, end_cycle = 0;
  bool overlapped = false;  // ran beside a launch
  std::uint64_t link_bytes = 0, analytic_min_bytes = 0;
};

struct ShardReport {
  std::string workload, preset, backend;
  ShardMode mode = ShardMode::Batch;
  std::uint32_t devices = 1;
  Mesh mesh;
  InterconnectConfig interconnect;
  bool overlap = true;
  std::size_t batch = 0, device_batch = 0;
  unsigned jobs = 1;
  std::uint32_t ranks = 1, first_local_device = 0;

  std::vector<DeviceSummary> device_summaries;  // every device, in device order (from every rank)
  std::vector<WorkloadReport> local_reports;     // the devices this process simulated, from first_local_device
  std::vector<CollectiveRecord> collectives;

  std::uint64_t step_cycles = 0;  // the slowest device
  double load_balance = 1;        // max / mean of the devices' compute cycles
  std::uint64_t interconnect_bytes = 0, analytic_min_bytes = 0;
  std::uint64_t collective_cycles = 0, overlapped_collective_cycles = 0;
  std::uint64_t hbm_peak_bytes = 0;                // the largest device's
  std::uint64_t single_device_hbm_peak_bytes = 0;  // the same run on one device (0: it does not fit one)
  double memory_saved = 0;                         // 1 - hbm_peak / single-device peak
  bool bit_exact = false;
  std::uint64_t checked_values = 0, mismatches = 0;
  std::string first_mismatch;
  double wall_seconds = 0;
};

// Throws Error naming the cause (bad split, mesh, world size, no interconnect in the preset; any
// device's failure, on every rank). `settings.requests` must be 1.
ShardReport run_sharded(const Preset& preset, const Model& model, const RunSettings& settings, const ShardSettings& shard,
                        Exchange& exchange);
ShardReport run_sharded(const Preset& preset, const Model& model, const RunSettings& settings, const ShardSettings& shard);

std::string format_shard_report(const ShardReport& report);
nlohmann::json shard_report_to_json(const ShardReport& report);

}  // namespace tpuemu::shard
