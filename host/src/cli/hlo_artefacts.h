// SPDX-License-Identifier: Apache-2.0
// The artefacts of `tpuemu analyze PROGRAM.hlo -o DIR` (docs/hlo.md, "Artefacts"): an HLO program's
// placements drawn with the profile layer's machinery. The glue lives here, in cli, because the
// hlo layer must not include profile and profile needs nothing of hlo: the buffers become
// profile::MapBuffer rectangles, pprof samples with op_name stacks and the rows of the run's
// fragmentation.csv format.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "outputs.h"
#include "tpuemu/hlo/analysis.h"

namespace tpuemu::cli {

inline const std::vector<std::string> kHloArtefacts = {"summary.json", "fragmentation.csv", "memory.pb.gz",
                                                       "report.html"};

// The op_name path as pprof frames, leaf first: "jit(f)/attn/dot_general" -> dot_general, attn,
// jit(f); empty components dropped.
std::vector<std::string> op_name_frames(const std::string& op_name);

// Stages the four files in `out`, published with the command's other outputs or not at all.
// summary_text is the analysis JSON exactly as --json prints it.
void write_hlo_artefacts(CommandOutputs& out, const std::filesystem::path& dir, const hlo::Analysis& analysis,
                         const std::string& summary_text);

}  // namespace tpuemu::cli
