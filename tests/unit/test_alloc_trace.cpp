// SPDX-License-Identifier: Apache-2.0
// Allocation traces: the CSV reader's errors, round trips, replay through every policy (the
// serving traces generated from the workloads are in test_serving_trace.cpp).
#include <gtest/gtest.h>

#include "test_support.h"
#include "tpuemu/alloc/alloc_trace.h"

namespace tpuemu::alloc {
namespace {

std::string parse_error(const std::string& text) {
  return test::error_of([&] { parse_alloc_trace(text, "t.csv"); });
}

TEST(AllocTraceCsv, ReportsEveryMalformedRowWithLineAndColumn) {
  const std::string header = "time,event,id,size\n";
  EXPECT_EQ(parse_error(""), "t.csv:1: empty file (expected a header row naming the columns)");
  EXPECT_EQ(parse_error("time,event,size\n"), "t.csv:1: missing column 'id' in the header");
  EXPECT_EQ(parse_error(header + "0,alloc,a,64\n1,alloc,b,-5\n"), "t.csv:3:11: negative size -5");
  EXPECT_EQ(parse_error(header + "0,alloc,a,6x4\n"), "t.csv:2:11: size '6x4' is not a non-negative integer");
  EXPECT_EQ(parse_error(header + "0,alloc,a\n"), "t.csv:2:10: row has 3 fields, the header has 4");
  EXPECT_EQ(parse_error(header + "0,alloc,a,1,9\n"), "t.csv:2:13: row has 5 fields, the header has 4");
  EXPECT_EQ(parse_error(header + "0,grab,a,64\n"), "t.csv:2:3: unknown event 'grab' (alloc or free)");
  EXPECT_EQ(parse_error(header + "0,free,ghost,\n"), "t.csv:2:8: free of unknown id 'ghost' in space hbm");
  EXPECT_EQ(parse_error(header + "0,alloc,a,64\n0,alloc,a,64\n"),
            "t.csv:3:9: alloc of 'a', which is still live (allocated on line 2)");
  EXPECT_EQ(parse_error(header + "5,alloc,a,64\n4,free,a,\n"), "t.csv:3:1: time 4 goes backwards (previous event at 5)");
  // A free may repeat its alloc's fields; another value would be ignored, so it is refused.
  EXPECT_EQ(parse_error(header + "0,alloc,a,128\n1,free,a,64\n"),
            "t.csv:3:10: free of 'a' with size 64, but it was allocated with size 128 on line 2");
  EXPECT_NO_THROW((void)parse_alloc_trace(header + "0,alloc,a,128\n1,free,a,128\n", "t.csv"));
  const std::string all = "time,event,id,size,alignment,space,padding,owner\n";
  EXPECT_EQ(parse_error(all + "0,alloc,a,128,64,hbm,0,w\n1,free,a,,32,hbm,,\n"),
            "t.csv:3:11: free of 'a' with alignment 32, but it was allocated with alignment 64 on line 2");
  EXPECT_EQ(parse_error(all + "0,alloc,a,128,64,hbm,8,w\n1,free,a,,,hbm,0,\n"),
            "t.csv:3:16: free of 'a' with padding 0, but it was allocated with padding 8 on line 2");
  EXPECT_EQ(parse_error(all + "0,alloc,a,128,64,hbm,0,w\n1,free,a,,,hbm,,v\n"),
            "t.csv:3:17: free of 'a' by owner 'v', but it was allocated by 'w' on line 2");
  EXPECT_NO_THROW((void)parse_alloc_trace(all + "0,alloc,a,128,64,vmem,8,w\n1,free,a,128,64,vmem,8,w\n", "t.csv"));
  EXPECT_EQ(parse_error(header + "0,alloc,a,0\n"), "t.csv:2:11: alloc of 'a' with size 0");
  EXPECT_EQ(parse_error("time,event,id,size,alignment\n0,alloc,a,64,24\n"), "t.csv:2:14: alignment 24 is not a power of two");
}

TEST(AllocTraceCsv, RoundTripsAndKeepsSpacesApart) {
  const std::string text =
      "# a comment\n"
      "time,event,id,size,alignment,space,padding,owner\n"
      "0,alloc,a,100,64,hbm,4,input x\n"
      "0,alloc,a,32,16,vmem,0,\n"
      "\n"
      "3,free,a,,,vmem,,\n"
      "7,free,a,,,hbm,,\n";
  const AllocTrace t = parse_alloc_trace(text, "t.csv");
  ASSERT_EQ(t.events.size(), 4u);
  EXPECT_EQ(t.events[0].owner, "input x");
  EXPECT_EQ(t.events[0].padding, 4u);
  EXPECT_EQ(t.events[1].owner, "a");  // defaults to the id
  EXPECT_EQ(t.events[1].line, 4u);
  EXPECT_EQ(t.spaces(), (std::vector<std::string>{"hbm", "vmem"}));
  const AllocTrace again = parse_alloc_trace(format_alloc_trace(t), "again.csv");
  ASSERT_EQ(again.events.size(), t.events.size());
  for (std::size_t i = 0; i < t.events.size(); ++i) {
    EXPECT_EQ(again.events[i].time, t.events[i].time);
    EXPECT_EQ(again.events[i].alloc, t.events[i].alloc);
    EXPECT_EQ(again.events[i].size, t.events[i].size);
    EXPECT_EQ(again.events[i].space, t.events[i].space);
    EXPECT_EQ(again.events[i].owner, t.events[i].owner);
  }
}

TEST(AllocTraceReplay, ComparesPoliciesAndRecordsFailuresWithoutStopping) {
  // Fragmentation by design: 16 blocks of 1 KiB, every other one freed, then a 2 KiB request.
  std::string text = "time,event,id,size\n";
  for (int i = 0; i < 16; ++i) text += fmt::format("{},alloc,b{},1024\n", i, i);
  for (int i = 0; i < 16; i += 2) text += fmt::format("20,free,b{},\n", i);
  text += "30,alloc,big,2048\n31,alloc,small,1024\n";
  const AllocTrace trace = parse_alloc_trace(text, "frag.csv");
  ReplayOptions options;
  options.capacity[""] = 16 * 1024;
  options.policies = allocator_names();
  options.keep_samples = true;
  const ReplayResult r = replay_alloc_trace(trace, options);
  ASSERT_EQ(r.runs.size(), allocator_names().size());
  for (const ReplayRun& run : r.runs) {
    SCOPED_TRACE(run.metrics.policy);
    EXPECT_EQ(run.metrics.failed_allocations, 1u);
    EXPECT_EQ(run.metrics.allocations, 17u);  // the later small request still fits
    ASSERT_TRUE(run.first_failure.has_value());
    EXPECT_NE(run.first_failure->find("frag.csv:26: out of hbm memory"), std::string::npos) << *run.first_failure;
    EXPECT_NE(run.first_failure->find("it would fit without fragmentation"), std::string::npos);
    EXPECT_EQ(run.samples.size(), 16u + 8u + 1u);
    EXPECT_NEAR(run.metrics.max_external_fragmentation, 7.0 / 8.0, 1e-9);
  }
  const std::string table = format_replay(r);
  EXPECT_NE(table.find("failed allocations"), std::string::npos);
  const std::string csv = replay_samples_csv(r);
  EXPECT_EQ(static_cast<std::size_t>(std::count(csv.begin(), csv.end(), '\n')), 1 + 25 * allocator_names().size());
  EXPECT_EQ(replay_to_json(r)["runs"].size(), allocator_names().size());
}

TEST(AllocTraceReplay, KeepsEachPlacementThatSucceeded) {
  // 4 KiB: a and b fill it, c cannot be placed until a is freed, then d goes where a was.
  const AllocTrace trace = parse_alloc_trace(
      "time,event,id,size\n0,alloc,a,2048\n0,alloc,b,2048\n1,alloc,c,1024\n2,free,a,\n3,alloc,d,1024\n", "p.csv");
  ReplayOptions options;
  options.capacity[""] = 4096;
  options.policies = {"first-fit"};
  EXPECT_TRUE(replay_alloc_trace(trace, options).runs.at(0).placements.empty());  // only when asked
  options.keep_placements = true;
  const ReplayRun run = replay_alloc_trace(trace, options).runs.at(0);
  ASSERT_EQ(run.placements.size(), 3u);  // c failed
  EXPECT_EQ(run.placements[0].event, 0u);
  EXPECT_EQ(run.placements[1].event, 1u);
  EXPECT_EQ(run.placements[2].event, 4u);
  EXPECT_EQ(run.placements[0].offset, 0u);
  EXPECT_EQ(run.placements[1].offset, 2048u);
  EXPECT_EQ(run.placements[2].offset, 0u);  // the hole a left
  EXPECT_TRUE(run.first_failure.has_value());
}

// The rules `tpuemu replay` and Python's replay() share for the policies and the granularity.
TEST(AllocTraceReplay, PoliciesAndGranularityFollowOneRule) {
  using Names = std::vector<std::string>;
  EXPECT_EQ(replay_policies_problem(Names{"bfc", "tlsf"}), std::nullopt);
  EXPECT_EQ(replay_policies_problem(Names{"bfc", "tlsf", "bfc"}), "'bfc' is given twice");
  EXPECT_EQ(replay_policies_problem(Names{"slab"}),
            "'slab' is not one of bfc, first-fit, best-fit, buddy, tlsf (or all of them: all)");
  EXPECT_EQ(replay_policies_problem(Names{}), "no policy");
  EXPECT_EQ(replay_granularity_problem(256), std::nullopt);
  EXPECT_EQ(replay_granularity_problem(0), "is not a power of two");
  EXPECT_EQ(replay_granularity_problem(384), "is not a power of two");
  EXPECT_EQ(replay_granularity_problem(kMaxReplayGranularity * 2), "is more than 2^30");
}

TEST(AllocTraceReplay, NeedsACapacityForEverySpace) {
  const AllocTrace trace = parse_alloc_trace("time,event,id,size,space\n0,alloc,a,64,vmem\n", "t.csv");
  ReplayOptions options;
  options.capacity["hbm"] = 1 << 20;
  options.policies = {"bfc"};
  EXPECT_EQ(test::error_of([&] { replay_alloc_trace(trace, options); }),
            "replay: no capacity for memory space 'vmem' (--capacity vmem=BYTES)");
}

}  // namespace
}  // namespace tpuemu::alloc
