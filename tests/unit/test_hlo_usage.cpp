// SPDX-License-Identifier: Apache-2.0
// The HBM usage split (docs/hlo.md, "tpuemu analyze PROGRAM.hlo: the report"): arguments, outputs,
// constants and the temporaries' block as XLA's buffer assignment makes them. The figures must add
// up on every module the project ships or tests: arguments are every ENTRY parameter, the block
// holds the temporaries' peak, the parts sum to the total, and the runtime trace uses that block.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include "tpuemu/alloc/memory_space.h"
#include "hlo_test_modules.h"
#include "tpuemu/hlo/analysis.h"
#include "tpuemu/hlo/hlo_parser.h"
#include "tpuemu/hlo/step_trace.h"

namespace tpuemu::hlo {
namespace {

namespace fs = std::filesystem;

const fs::path kData = test::kHloTestData;
using test::every_valid_hlo_module;

// The HBM bytes of one ENTRY parameter, read from its shape alone: every array leaf outside VMEM
// (S(1)) and the index table liveness gives a tuple-shaped value, one for its top level.
std::uint64_t hbm_leaf_bytes(const Shape& shape, const SizeOptions& sizes) {
  if (!shape.is_tuple()) {
    const bool vmem = shape.layout && shape.layout->memory_space == 1;
    return vmem ? 0 : shape_bytes(shape, sizes).padded;
  }
  std::uint64_t sum = 0;
  for (const Shape& element : shape.elements) sum += hbm_leaf_bytes(element, sizes);
  return sum;
}
std::uint64_t entry_parameters_bytes(const Module& module, const SizeOptions& sizes) {
  std::uint64_t sum = 0;
  const Computation& entry = module.entry_computation();
  for (const std::size_t i : entry.parameters) {
    const Shape& shape = entry.instructions.at(i).shape;
    sum += hbm_leaf_bytes(shape, sizes) + (shape.is_tuple() ? shape_bytes(shape, sizes).padded : 0);
  }
  return sum;
}

Analysis analyse(const Module& module, bool tiled, std::optional<std::uint64_t> capacity = std::nullopt) {
  AnalysisOptions options;
  options.sizes.tiled = tiled;
  options.policies = {"xla"};
  options.hbm_capacity = capacity;
  return analyze(module, options);
}

// The value printed on the report line that starts with `label` (after its indentation).
std::string report_value(const std::string& report, const std::string& label) {
  const std::regex line("\\n\\s+" + label + "\\s+([0-9.]+ [KMGT]?i?B)");
  std::smatch m;
  return std::regex_search(report, m, line) ? m[1].str() : "(no line '" + label + "')";
}

// Every identity of the split on one module under one size rule.
void expect_split_adds_up(const Module& module, bool tiled, const std::string& where) {
  SCOPED_TRACE(where);
  const Analysis a = analyse(module, tiled);
  const HbmUsage& u = a.usage;
  EXPECT_EQ(u.arguments, entry_parameters_bytes(module, a.sizes)) << "arguments = every ENTRY parameter";
  EXPECT_GE(u.temporaries, u.temporaries_padded) << "the temporaries' block holds their peak";
  EXPECT_GE(u.temporaries_padded, u.temporaries_unpadded);
  EXPECT_EQ(u.arguments + u.outputs + u.constants + u.temporaries, u.total) << "the parts sum to the total";
  EXPECT_EQ(a.xla.heap_bytes, u.total) << "the xla placement is the assignment the split describes";

  const nlohmann::json j = analysis_to_json(a)["memory"];
  EXPECT_EQ(j["parameters_bytes"].get<std::uint64_t>() + j["outputs_bytes"].get<std::uint64_t>() +
                j["constants_bytes"].get<std::uint64_t>() + j["temporaries_bytes"].get<std::uint64_t>(),
            j["total_bytes"].get<std::uint64_t>());

  // The out-of-memory report one byte short: its lines are the split, outputs included.
  if (u.total > 0) {
    const std::string report = out_of_memory_report(analyse(module, tiled, u.total - 1));
    using alloc::format_bytes;
    EXPECT_EQ(report_value(report, "program"), format_bytes(u.constants + u.temporaries)) << report;
    EXPECT_EQ(report_value(report, "arguments"), format_bytes(u.arguments)) << report;
    EXPECT_EQ(report_value(report, "outputs"), format_bytes(u.outputs)) << report;
    EXPECT_EQ(report_value(report, "HLO temp"), format_bytes(u.temporaries)) << report;
    std::smatch m;
    ASSERT_TRUE(std::regex_search(report, m, std::regex("\\(([0-9.]+)% utilization"))) << report;
    EXPECT_LE(std::stod(m[1].str()), 100.0) << report;
  }

  // `tpuemu trace --steps` allocates that block each step.
  const StepProgram p = step_program(module, a.sizes);
  EXPECT_EQ(p.temporaries, u.temporaries);
}

TEST(HloUsage, IdentitiesHoldOnEveryShippedAndTestModule) {
  const std::vector<fs::path> files = every_valid_hlo_module();
  ASSERT_GE(files.size(), 20u) << "the module folders were not found from " << kData;
  for (const fs::path& file : files) {
    const Module module = read_hlo_file(file);
    for (const bool tiled : {true, false}) {
      expect_split_adds_up(module, tiled, file.string() + (tiled ? " (tiled)" : " (untiled)"));
    }
  }
}

Module parse(const char* text) { return parse_hlo(text, "test.hlo"); }

// Outputs are live out: XLA gives each its own allocation, never a hole the temporaries left.
// Tiled, each f32[100] is one 1 KiB granule: a and b are live together (2 KiB of temporaries);
// c, the output, starts where a dies.
TEST(HloUsage, OutputsDoNotFillTheTemporariesHoles) {
  const Module m = parse(R"(HloModule chain
ENTRY main {
  p0 = f32[100]{0} parameter(0)
  p1 = f32[100]{0} parameter(1)
  a = f32[100]{0} add(p0, p1)
  b = f32[100]{0} multiply(a, a)
  ROOT c = f32[100]{0} negate(b)
})");
  const HbmUsage u = analyse(m, true).usage;
  EXPECT_EQ(u.arguments, 2048u);
  EXPECT_EQ(u.outputs, 1024u);
  EXPECT_EQ(u.temporaries_padded, 2048u);
  EXPECT_EQ(u.temporaries_unpadded, 800u);
  EXPECT_EQ(u.temporaries, 2048u);
  EXPECT_EQ(u.total, 5120u);
  const std::string report = out_of_memory_report(analyse(m, true, 1024));
  EXPECT_EQ(report_value(report, "outputs"), "1.00 KiB") << report;
  EXPECT_NE(report.find("HLO temp          2.00 KiB (39.1% utilization: Unpadded (800 B) Padded (2.00 KiB)"),
            std::string::npos)
      << report;
}

// Two donated scalars whose outputs are swapped, and one value returned at two donated outputs:
// each ENTRY parameter keeps its own allocation (XLA's copy insertion copies instead of joining
// two arguments), so the arguments are every parameter's bytes.
TEST(HloUsage, DonatedParametersAreNeverJoined) {
  const Module swapped = parse(R"(HloModule swap, input_output_alias={ {0}: (0, {}, may-alias), {1}: (1, {}, may-alias) }
ENTRY main {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT t = (f32[], f32[]) tuple(b, a)
})");
  const HbmUsage s = analyse(swapped, false).usage;
  EXPECT_EQ(s.arguments, 8u);
  EXPECT_EQ(s.outputs_shared, 8u);
  EXPECT_EQ(s.outputs, 16u) << "the result tuple's index table";
  EXPECT_EQ(s.total, s.arguments + s.outputs + s.constants + s.temporaries);

  const Module twice = parse(R"(HloModule twice, input_output_alias={ {0}: (0, {}, may-alias), {1}: (1, {}, may-alias) }
ENTRY main {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  one = s32[] constant(1)
  n = s32[] add(a, one)
  ROOT t = (s32[], s32[]) tuple(n, n)
})");
  const HbmUsage t = analyse(twice, false).usage;
  EXPECT_EQ(t.arguments, 8u);
  EXPECT_EQ(t.constants, 4u);
  EXPECT_EQ(t.total, t.arguments + t.outputs + t.constants + t.temporaries);
}

// A parameter or a constant returned as is, and one value returned twice: XLA copies each into an
// output of its own (the entry's results are distinct and never read-only buffers).
TEST(HloUsage, ParametersAndConstantsReturnedAreCopiedIntoOutputs) {
  const Module m = parse(R"(HloModule passthrough
ENTRY main {
  p = f32[64]{0} parameter(0)
  k = f32[64]{0} constant({...})
  n = f32[64]{0} negate(p)
  ROOT t = (f32[64]{0}, f32[64]{0}, f32[64]{0}, f32[64]{0}) tuple(p, k, n, n)
})");
  const HbmUsage u = analyse(m, false).usage;
  EXPECT_EQ(u.arguments, 256u);
  EXPECT_EQ(u.constants, 256u);
  EXPECT_EQ(u.outputs, 4 * 256u + 32u) << "four distinct results and the tuple's index table";
  EXPECT_EQ(u.outputs_shared, 0u);
}

}  // namespace
}  // namespace tpuemu::hlo
