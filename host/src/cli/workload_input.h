// SPDX-License-Identifier: Apache-2.0
// The workload of `run` and `trace` (and trace's --also): a JSON workload or a JAX/XLA program as
// HLO text, told apart by content wherever it comes from - a file, standard input ("-"), a FIFO,
// a process substitution. Standard input and FIFOs can be read only once, so the input is read
// here once and every reader of the workload takes its text from it (docs/cli.md, docs/hlo.md).
#pragma once

#include <string>

#include "tpuemu/base/input_file.h"
#include "tpuemu/base/json.h"
#include "tpuemu/hlo/hlo_module.h"

namespace tpuemu::cli {

// Read under the wider of the two kinds' bounds (an HLO module's 128 MiB), then held to its own
// kind's once known.
inline constexpr InputLimits kWorkloadInput{std::size_t{128} << 20, std::size_t{128} << 20,
                                            "workload file or HLO program"};

struct WorkloadInput {
  std::string path;    // as given
  std::string source;  // as messages name it: the path, or "standard input"
  std::string text;
  // HLO text: what hlo::looks_like_hlo_text takes for a module's start, or a file named *.hlo
  // (whose errors are then the HLO reader's).
  bool hlo = false;

  hlo::Module hlo_module() const;  // parse_hlo, errors at SOURCE:LINE:COL
  // The same, handing the text over to the module (which keeps its text) instead of copying it:
  // `text` is empty after. For the one reading of a large program.
  hlo::Module take_hlo_module();
  JsonDocument json() const;       // bounded like any JSON file (kJsonInput), then parsed
};

WorkloadInput read_workload_input(const std::string& path);

}  // namespace tpuemu::cli
