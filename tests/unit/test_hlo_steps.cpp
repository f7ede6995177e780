// SPDX-License-Identifier: Apache-2.0
// The runtime across steps (docs/hlo.md, "The runtime across steps"): the allocation trace of a
// JAX loop calling its programs step after step. Sizes are untiled so that every byte is
// hand-checked; the events are compared whole, so any change to the model fails here.
#include <gtest/gtest.h>

#include <map>

#include <fmt/format.h>

#include "test_support.h"
#include "tpuemu/hlo/hlo_parser.h"
#include "tpuemu/hlo/step_trace.h"

namespace tpuemu::hlo {
namespace {

using test::error_of;

// A train step: donates its state s (output {0} is s's buffer), reads a batch x, returns a
// non-donated y (and the result tuple's index table). Untiled: s 1024 B, x 256 B, y 128 B, the
// table 16 B (two pointers); the temporaries t 2048 B and u 1024 B are live together, so their
// block, XLA's heap simulator on the temporaries alone, is 3072 B.
constexpr const char* kTrain = R"(HloModule step_a, input_output_alias={ {0}: (0, {}, may-alias) }

ENTRY %main (s: f32[256], x: f32[64]) -> (f32[256], f32[32]) {
  %s = f32[256]{0} parameter(0)
  %x = f32[64]{0} parameter(1)
  %t = f32[512]{0} concatenate(%s, %s), dimensions={0}
  %u = f32[256]{0} slice(%t), slice={[0:256]}
  %new = f32[256]{0} add(%u, %s)
  %y = f32[32]{0} slice(%x), slice={[0:32]}
  ROOT %r = (f32[256]{0}, f32[32]{0}) tuple(%new, %y)
}
)";

// An eval step: reads x (256 B), a 512 B temporary, a 512 B output. Heap 1280 B: temporaries 512 B.
constexpr const char* kEval = R"(HloModule step_b

ENTRY %main (x: f32[64]) -> f32[128] {
  %x = f32[64]{0} parameter(0)
  %t = f32[128]{0} concatenate(%x, %x), dimensions={0}
  ROOT %o = f32[128]{0} negate(%t)
}
)";

StepProgram program(const char* text) {
  SizeOptions sizes;
  sizes.tiled = false;
  return step_program(parse_hlo(text, "test.hlo"), sizes);
}

// "time alloc id size" / "time free id", one string per event.
std::vector<std::string> events(const alloc::AllocTrace& trace) {
  std::vector<std::string> out;
  for (const alloc::TraceEvent& e : trace.events) {
    out.push_back(e.alloc ? fmt::format("{} alloc {} {}", e.time, e.id, e.size) : fmt::format("{} free {}", e.time, e.id));
  }
  return out;
}

TEST(HloSteps, ProgramSplitsResidentOutputsAndTemporaries) {
  const StepProgram p = program(kTrain);
  EXPECT_EQ(p.name, "step_a");
  std::map<std::string, std::uint64_t> resident, outputs;
  for (const LiveBuffer& b : p.resident) resident[b.name] = b.bytes;
  for (const LiveBuffer& b : p.outputs) outputs[b.name] = b.bytes;
  EXPECT_EQ(resident, (std::map<std::string, std::uint64_t>{{"s", 1024}, {"x", 256}}));
  EXPECT_EQ(outputs, (std::map<std::string, std::uint64_t>{{"r (index table)", 16}, {"y", 128}}));
  EXPECT_EQ(p.temporaries, 3072u);
  EXPECT_EQ(program(kEval).temporaries, 512u);
}

TEST(HloSteps, ThreeStepsAreExactlyTheModel) {
  const std::vector<StepProgram> programs{program(kTrain)};
  const std::vector<std::string> expected = {
      // resident: the donated state and the argument, once
      "0 alloc step_a.s 1024", "0 alloc step_a.x 256",
      // step 0: its outputs, its temporary block, the block freed
      "1 alloc s0.step_a.y 128", "1 alloc s0.step_a.r_(index_table) 16", "1 alloc s0.step_a.temp 3072",
      "1 free s0.step_a.temp",
      // step 1: the same, then step 0's outputs, which step 1 consumed
      "2 alloc s1.step_a.y 128", "2 alloc s1.step_a.r_(index_table) 16", "2 alloc s1.step_a.temp 3072",
      "2 free s1.step_a.temp", "2 free s0.step_a.y", "2 free s0.step_a.r_(index_table)",
      "3 alloc s2.step_a.y 128", "3 alloc s2.step_a.r_(index_table) 16", "3 alloc s2.step_a.temp 3072",
      "3 free s2.step_a.temp", "3 free s1.step_a.y", "3 free s1.step_a.r_(index_table)"};
  EXPECT_EQ(events(step_trace(programs, 3)), expected);
}

// The donated state is allocated once and never freed or allocated again: each step's output {0}
// is that buffer (input_output_alias), so live bytes between steps stay constant.
TEST(HloSteps, DonatedInputsAreTheOutputsBuffers) {
  const std::vector<StepProgram> programs{program(kTrain)};
  const alloc::AllocTrace trace = step_trace(programs, 50);
  std::map<std::string, std::int64_t> live;
  std::int64_t bytes = 0;
  std::vector<std::int64_t> between;  // live bytes at the end of each step
  for (std::size_t i = 0; i < trace.events.size(); ++i) {
    const alloc::TraceEvent& e = trace.events[i];
    EXPECT_EQ(e.id.find(".new"), std::string::npos) << "the aliased output has no buffer of its own: " << e.id;
    if (e.id == "step_a.s") EXPECT_TRUE(e.alloc && e.time == 0) << "the donated state is allocated once, never freed";
    bytes += e.alloc ? static_cast<std::int64_t>(e.size) : -live[e.id];
    if (e.alloc) live[e.id] = static_cast<std::int64_t>(e.size);
    if (e.time > 0 && (i + 1 == trace.events.size() || trace.events[i + 1].time != e.time)) between.push_back(bytes);
  }
  ASSERT_EQ(between.size(), 50u);
  for (std::int64_t b : between) EXPECT_EQ(b, 1024 + 256 + 128 + 16);  // state, batch, one step's outputs
}

TEST(HloSteps, AlsoAlternatesThePrograms) {
  const std::vector<StepProgram> programs{program(kTrain), program(kEval)};
  const std::vector<std::string> expected = {
      "0 alloc step_a.s 1024", "0 alloc step_a.x 256", "0 alloc step_b.x 256",
      "1 alloc s0.step_a.y 128", "1 alloc s0.step_a.r_(index_table) 16", "1 alloc s0.step_a.temp 3072",
      "1 free s0.step_a.temp",
      // the eval step: its own temporary block size; it consumes the train step's outputs
      "2 alloc s1.step_b.o 512", "2 alloc s1.step_b.temp 512", "2 free s1.step_b.temp", "2 free s0.step_a.y",
      "2 free s0.step_a.r_(index_table)",
      "3 alloc s2.step_a.y 128", "3 alloc s2.step_a.r_(index_table) 16", "3 alloc s2.step_a.temp 3072",
      "3 free s2.step_a.temp", "3 free s1.step_b.o"};
  EXPECT_EQ(events(step_trace(programs, 3)), expected);
}

// The same program twice: ids stay unique.
TEST(HloSteps, SameNameTwiceGetsDistinctIds) {
  const std::vector<StepProgram> programs{program(kEval), program(kEval)};
  const std::vector<std::string> got = events(step_trace(programs, 2));
  EXPECT_EQ(got[0], "0 alloc step_b.x 256");
  EXPECT_EQ(got[1], "0 alloc step_b#2.x 256");
  EXPECT_EQ(got[5], "2 alloc s1.step_b#2.o 512");
}

// What `tpuemu trace` writes is a trace `tpuemu replay` reads back the same, and replays.
TEST(HloSteps, TraceRoundTripsAndReplays) {
  const std::vector<StepProgram> programs{program(kTrain), program(kEval)};
  const alloc::AllocTrace trace = step_trace(programs, 20, "steps.csv");
  const alloc::AllocTrace back = alloc::parse_alloc_trace(alloc::format_alloc_trace(trace), "steps.csv");
  EXPECT_EQ(events(back), events(trace));
  alloc::ReplayOptions options;
  options.capacity[""] = 1 << 20;
  options.policies = {"bfc", "best-fit"};
  for (const alloc::ReplayRun& run : alloc::replay_alloc_trace(back, options).runs) {
    EXPECT_FALSE(run.first_failure) << *run.first_failure;
    EXPECT_EQ(run.metrics.failed_allocations, 0u);
  }
}

TEST(HloSteps, StepsAreBounded) {
  const std::vector<StepProgram> programs{program(kEval)};
  EXPECT_NE(error_of([&] { step_trace(programs, 0); }).find("0 steps"), std::string::npos);
  EXPECT_NE(error_of([&] { step_trace(programs, kMaxTraceSteps + 1); }).find("steps"), std::string::npos);
  EXPECT_NE(error_of([&] { step_trace({}, 3); }).find("no program"), std::string::npos);
}

}  // namespace
}  // namespace tpuemu::hlo
