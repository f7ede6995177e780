// SPDX-License-Identifier: Apache-2.0
// Layer hlo: the runtime across steps (docs/hlo.md, "The runtime across steps"). A JAX training or
// serving loop calls its compiled programs over and over; what accumulates in HBM is not one
// program's heap but the runtime's allocations between steps: arguments kept resident, each
// step's outputs, and each program's temporary block. This builds that allocation trace
// (docs/allocation.md) so that `tpuemu replay` measures every runtime policy over many steps.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "tpuemu/alloc/alloc_trace.h"
#include "tpuemu/hlo/hlo_module.h"
#include "tpuemu/hlo/liveness.h"

namespace tpuemu::hlo {

// One program as the runtime sees it between steps.
struct StepProgram {
  std::string name;  // ids and owners are prefixed with it
  // Allocated once before the first step, never freed: the ENTRY parameters, the donated
  // arguments (input_output_alias) whose buffers every step's aliased output takes over, and the
  // program's constants (allocations of their own, loaded with the program).
  std::vector<LiveBuffer> resident;
  // Each step's outputs with their own buffers (not donated arguments' buffers).
  std::vector<LiveBuffer> outputs;
  // The program's temporary block, one allocation per step: XLA's block of the temporaries
  // (Analysis::usage.temporaries: the heap simulator on the temporaries alone, so it holds their
  // peak and the simulator's fragmentation inside it); 0: the program needs none.
  std::uint64_t temporaries = 0;
  std::uint64_t temporaries_padding = 0;  // tile padding inside it, at most `temporaries`
};

// The module analysed on `schedule` ("" = the default of analysis.h) with the xla heap.
// `stop` is the analysis's (AnalysisOptions::stop).
StepProgram step_program(const Module& module, const SizeOptions& sizes, const std::string& schedule = "",
                         const StopToken& stop = StopToken{});

// Steps a trace may hold: 10^6 steps of a few buffers is a trace of some 10^7 events.
inline constexpr std::uint64_t kMaxTraceSteps = 1'000'000;

// The allocation trace of `steps` steps, step i running programs[i % programs.size()]:
//   time 0: every program's resident buffers, program by program;
//   step i (time i+1): alloc its outputs, alloc its temporary block, free the temporary block,
//   then free step i-1's outputs (step i consumed them: a loop `state = f(state)` frees the old
//   results once the new ones exist).
// The last step's outputs stay allocated (the loop's result). Throws Error for no programs, or
// steps outside 1..kMaxTraceSteps.
// `stop` is asked every few thousand steps (Interrupted).
alloc::AllocTrace step_trace(std::span<const StepProgram> programs, std::uint64_t steps, const std::string& source = "",
                             const StopToken& stop = StopToken{});

}  // namespace tpuemu::hlo
