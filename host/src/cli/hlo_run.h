// SPDX-License-Identifier: Apache-2.0
// `tpuemu run PROGRAM.hlo`: a JAX/XLA program's memory analysed without a device (docs/hlo.md).
// The run command hands a workload that is HLO text here, with the options the analysis reads;
// every other run option given beside an HLO program is refused, never ignored.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli_common.h"
#include "workload_input.h"

namespace tpuemu::cli {

// The placement policies an HLO program can be analysed with beside the runtime allocators.
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

// Refuses (exit 2) every option of `command` given on the command line that is not in `allowed`.
void refuse_options_except(const CLI::App& command, const std::vector<std::string>& allowed, const std::string& why);

// 0 when the program fits (or no --hbm-capacity), 1 (Error with the first line of the TPU
// compiler's message) when it does not: the full report is still printed.
int run_hlo(const HloRunArgs& args);

}  // namespace tpuemu::cli
