// SPDX-License-Identifier: Apache-2.0
// `tpuemu analyze PROGRAM.hlo`: a JAX/XLA program's memory analysed without a device
// (docs/hlo.md). The analyze command hands its program here, read once, with its options.
#pragma once

#include <string>
#include <vector>

#include "cli_common.h"
#include "workload_input.h"

namespace tpuemu::cli {

// The placement policies an HLO program can be analysed with beside the runtime allocators (run
// refuses them, naming analyze).
inline const std::vector<std::string> kHloOnlyPolicies = {"xla", "planner"};

struct HloRunArgs {
  const CommonOptions* common = nullptr;
  std::string file;
  WorkloadInput* input = nullptr;  // the program, read once (its text handed to the module)
  std::string preset;        // its lane count sizes the tiles; empty: tpu-v4-like
  std::string schedule;      // empty: text when the module is scheduled, else best
  std::string allocator;     // a policy, or all (the default)
  std::string hbm_capacity;  // empty: none
  bool untiled = false;
  std::string report_file;
};

// 0 when the program fits (or no --hbm-capacity), 1 (Error with the first line of the TPU
// compiler's message) when it does not: the full report is still printed.
int run_hlo(const HloRunArgs& args);

}  // namespace tpuemu::cli
