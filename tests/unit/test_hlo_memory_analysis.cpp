// SPDX-License-Identifier: Apache-2.0
// The four figures of JAX's compiled.memory_analysis() in the analysis JSON (docs/hlo.md, "tpuemu
// analyze PROGRAM.hlo: the report"): each equals the tpuemu figure the docs name, and users' rule
// temp + arguments + outputs - alias gives the xla heap less the constants, on every module the
// project ships or tests, tiled and untiled.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "hlo_test_modules.h"
#include "tpuemu/hlo/analysis.h"
#include "tpuemu/hlo/hlo_parser.h"

namespace tpuemu::hlo {
namespace {

namespace fs = std::filesystem;

using test::every_valid_hlo_module;

nlohmann::json analysis_json(const Module& module, bool tiled) {
  AnalysisOptions options;
  options.sizes.tiled = tiled;
  options.policies = {"xla"};
  return analysis_to_json(analyze(module, options));
}

std::uint64_t at(const nlohmann::json& j, const char* key) {
  return j.at(key).get<std::uint64_t>();
}

void expect_memory_analysis_holds(const Module& module, bool tiled, const std::string& where) {
  SCOPED_TRACE(where);
  const nlohmann::json j = analysis_json(module, tiled);
  const nlohmann::json& ma = j.at("memory_analysis");
  const nlohmann::json& memory = j.at("memory");
  ASSERT_EQ(ma.size(), 4u) << ma.dump();
  const std::uint64_t argument = at(ma, "argument_size_in_bytes");
  const std::uint64_t output = at(ma, "output_size_in_bytes");
  const std::uint64_t alias = at(ma, "alias_size_in_bytes");
  const std::uint64_t temp = at(ma, "temp_size_in_bytes");
  // Each is the tpuemu figure docs/hlo.md names.
  EXPECT_EQ(argument, at(memory, "parameters_bytes"));
  EXPECT_EQ(output,
            at(memory, "outputs_bytes") + at(memory, "outputs_shared_with_arguments_bytes"));
  EXPECT_EQ(alias, at(memory, "outputs_shared_with_arguments_bytes"));
  EXPECT_EQ(temp, at(memory, "temporaries_bytes"));
  // Aliased outputs are outputs, in arguments' buffers.
  EXPECT_LE(alias, output);
  EXPECT_LE(alias, argument);
  // The users' rule: the xla heap less the constants, which XLA counts in none of the four.
  EXPECT_EQ(temp + argument + output - alias,
            at(memory, "total_bytes") - at(memory, "constants_bytes"));
  // With the constants it bounds the schedule's peak live bytes from above: arguments and outputs
  // hold their allocations for the whole program, the temporaries' block holds their peak.
  EXPECT_GE(temp + argument + output - alias + at(memory, "constants_bytes"),
            at(memory, "peak_live_bytes"));
}

TEST(HloMemoryAnalysis, UsersRuleIsTheHeapLessConstantsOnEveryModule) {
  const std::vector<fs::path> files = every_valid_hlo_module();
  ASSERT_GE(files.size(), 10u);
  for (const fs::path& file : files) {
    const Module module = read_hlo_file(file);
    expect_memory_analysis_holds(module, true, file.filename().string() + " (tiled)");
    expect_memory_analysis_holds(module, false, file.filename().string() + " (untiled)");
  }
}

// A donated argument: its output is counted in output and alias both, once in the heap.
TEST(HloMemoryAnalysis, DonatedOutputsAreOutputsAndAliased) {
  const Module module = parse_hlo(R"(HloModule donate, input_output_alias={ {}: (0, {}, may-alias) }
ENTRY main {
  p = f32[8,128]{1,0} parameter(0)
  c = f32[8,128]{1,0} constant({...})
  t = f32[8,128]{1,0} multiply(p, c)
  ROOT o = f32[8,128]{1,0} add(t, p)
})",
                                  "donate.hlo");
  const nlohmann::json j = analysis_json(module, true);
  const nlohmann::json& ma = j.at("memory_analysis");
  EXPECT_EQ(at(ma, "argument_size_in_bytes"), 4096u);
  EXPECT_EQ(at(ma, "output_size_in_bytes"), 4096u);
  EXPECT_EQ(at(ma, "alias_size_in_bytes"), 4096u);
  EXPECT_EQ(at(ma, "temp_size_in_bytes"), 4096u);  // t
  EXPECT_EQ(at(j.at("memory"), "constants_bytes"), 4096u);
  EXPECT_EQ(at(j.at("memory"), "total_bytes"), 3u * 4096);  // p (with o), c, t
}

}  // namespace
}  // namespace tpuemu::hlo
