// SPDX-License-Identifier: Apache-2.0
// The HBM side of a model run (docs/workloads.md, "Schedule"): which buffers exist, when each is
// allocated and freed, where a policy or the offline planner puts them, and the allocator's view
// of that schedule at the cycles the device measured.
//
// Weights, biases and the zero rows are allocated before the first step and live to the end. Each
// step's program is loaded into HBM just before its launch and freed when it ends (a runtime that
// launches op by op holds only the running op's code). A request's input is allocated when its first step starts; every activation when the
// step producing it starts, and it is freed when the last step reading it ends (the model's output
// when the run ends). With R requests, request r runs layer l in wave r + l, so activations of
// different requests and layers interleave as they do in a server with R requests in flight.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tpuemu/alloc/alloc_trace.h"
#include "tpuemu/alloc/memory_space.h"
#include "tpuemu/compile/model_compiler.h"
#include "tpuemu/run/runner.h"

namespace tpuemu {

struct ScheduleStep {
  std::size_t layer = 0, request = 0;
  bool first_of_request = false;
  StepKind kind = StepKind::Launch;
  // GatherWeights: the gather runs beside the next launch (the layer before its consumer) instead
  // of before its consumer alone.
  bool overlapped = false;
};

struct ScheduledBuffer {
  std::string owner;  // "conv1 weights", "b1.add output r2", "input r0", "program", "zeros"
  std::uint64_t size = 0, padding = 0, alignment = 1;
  bool persistent = false;
  std::size_t first_step = 0, last_step = 0;  // alive from the start of first_step to the end of last_step
};

inline constexpr std::size_t kNoBuffer = static_cast<std::size_t>(-1);

struct HbmSchedule {
  std::vector<ScheduleStep> steps;
  std::vector<ScheduledBuffer> buffers;  // persistent ones first, then in allocation order
  std::vector<std::size_t> program_buffer;  // per step: its program, loaded just before its launch
  std::size_t zeros_buffer = kNoBuffer;
  std::vector<std::size_t> weight_buffer, bias_buffer;  // per layer (kNoBuffer: none)
  // Per layer, with weight sharding: this device's part of the weights (persistent); weight_buffer
  // is then the gathered whole, alive from its GatherWeights step to the end of its layer's launch.
  std::vector<std::size_t> weight_shard_buffer;
  std::uint64_t weight_shard_bytes(std::size_t layer) const;
  std::vector<std::vector<std::size_t>> tensor_buffer;  // [request][tensor]
};

// Weight sharding (fully sharded runs, docs/sharding.md): each device stores 1/parts of every
// weight image and gathers the whole into a temporary buffer before the layer runs - with
// `prefetch`, while the layer before it runs.
struct WeightSharding {
  std::size_t parts = 1;
  bool prefetch = true;
};

// The steps and buffers of `requests` requests; the program buffers' sizes are set by the caller.
// Steps of model layers of kind gather, and GatherWeights steps, have no program (kNoBuffer).
HbmSchedule make_hbm_schedule(const ModelCompiler& compiler, std::size_t requests, const WeightSharding& sharding = {});

struct HbmPlacement {
  std::string method;                  // the policy's name, or "planner"
  std::vector<std::uint64_t> offsets;  // per buffer
  std::uint64_t tensor_addr(const HbmSchedule& s, std::size_t request, std::size_t tensor) const {
    return offsets[s.tensor_buffer[request][tensor]];
  }
};

// Throws alloc::OutOfMemory (policy) or Error (planner: infeasible or timed out) naming the buffer
// or the reason.
HbmPlacement place_hbm_schedule(const HbmSchedule& schedule, const Preset& preset, const RunSettings& settings);

struct HbmTimeline {
  alloc::SpaceMetrics metrics;
  std::vector<alloc::SpaceSnapshot> samples;
  alloc::AllocTrace trace;  // with offsets
};

// The same allocations and frees at the measured cycles (steps[i] of the run), through the same
// policy (or the plan's fixed offsets); throws Error if a policy placed anything differently.
HbmTimeline replay_hbm_schedule(const HbmSchedule& schedule, const HbmPlacement& placement, const Preset& preset,
                                const RunSettings& settings, const std::vector<StepReport>& steps,
                                std::uint64_t end_cycle);

}  // namespace tpuemu
