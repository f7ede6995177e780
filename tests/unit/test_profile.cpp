// SPDX-License-Identifier: Apache-2.0
// Layer profile: the moment a memory profile shows, and the kinds and layers of buffers.
#include <gtest/gtest.h>

#include "test_support.h"
#include "tpuemu/alloc/alloc_trace.h"
#include "tpuemu/profile/chrome_trace.h"
#include "tpuemu/profile/memory_profile.h"

namespace tpuemu::profile {
namespace {

alloc::AllocTrace sample_trace() {
  return alloc::parse_alloc_trace(
      "time,event,id,size,alignment,space,padding,owner\n"
      "0,alloc,w,100,8,hbm,0,layer 0 weights\n"
      "0,alloc,x,50,8,hbm,0,input x\n"
      "5,alloc,y,300,8,hbm,0,layer 0 output\n"
      "5,free,x,,,hbm,,\n"
      "9,free,y,,,hbm,,\n"
      "9,alloc,z,10,8,vmem,0,scratch\n",
      "t.csv");
}

TEST(MemoryProfile, PeakIsTheStateAfterEveryEventAtItsTime) {
  const MemorySnapshot peak = snapshot_at(sample_trace(), {});
  EXPECT_EQ(peak.time, 5u);
  EXPECT_EQ(peak.live_bytes, 400u);  // w + y; x was freed at the same time
  ASSERT_EQ(peak.buffers.size(), 2u);
  EXPECT_EQ(peak.buffers[0].id, "w");
  EXPECT_EQ(peak.buffers[1].id, "y");
  const MemorySnapshot end = snapshot_at(sample_trace(), ProfileMoment::parse("end"));
  EXPECT_EQ(end.live_bytes, 110u);
  const MemorySnapshot t3 = snapshot_at(sample_trace(), ProfileMoment::parse("3"));
  EXPECT_EQ(t3.live_bytes, 150u);
  EXPECT_EQ(snapshot_at(sample_trace(), ProfileMoment::parse("9")).live_bytes, 110u);  // the last event's cycle
  // After the last event the run is over: an empty profile is refused, not written.
  EXPECT_EQ(test::error_of([] { (void)snapshot_at(sample_trace(), ProfileMoment::parse("10")); }),
            "--profile-at 10: after the end of the run (its last allocation event is at cycle 9): the profile would "
            "be empty; give a cycle up to 9, peak or end");
  EXPECT_THROW((void)ProfileMoment::parse("-1"), Error);
  EXPECT_THROW((void)ProfileMoment::parse("middle"), Error);
}

TEST(MemoryProfile, KindsAndLayersFromOwners) {
  EXPECT_EQ(buffer_kind("layer 0 weights"), "weight");
  EXPECT_EQ(buffer_kind("layer 2 output"), "activation");
  EXPECT_EQ(buffer_kind("input x"), "activation");
  EXPECT_EQ(buffer_kind("program"), "program");
  EXPECT_EQ(buffer_kind("im2col patches"), "scratch");
  EXPECT_EQ(buffer_layer("layer 12 weights"), "layer 12");
  EXPECT_EQ(buffer_layer("request 3 conv1.patches"), "request 3");
  EXPECT_EQ(buffer_layer("program"), "program");
  // the encoded profile is a gzip stream (magic 1f 8b)
  const std::string pb = memory_profile(snapshot_at(sample_trace(), {}), "m");
  ASSERT_GT(pb.size(), 2u);
  EXPECT_EQ(static_cast<unsigned char>(pb[0]), 0x1f);
  EXPECT_EQ(static_cast<unsigned char>(pb[1]), 0x8b);
}

TEST(ChromeTrace, OneSlicePerBufferAndCounterTracks) {
  const alloc::AllocTrace t = sample_trace();
  ChromeTraceInputs in;
  in.allocations = &t;
  in.samples["hbm"] = {alloc::SpaceSnapshot{.time = 5, .live_bytes = 400, .in_use_bytes = 400}};
  in.clock_ghz = 2;
  const nlohmann::json j = chrome_trace(in);
  int begins = 0, ends = 0, counters = 0;
  for (const auto& e : j["traceEvents"]) {
    begins += e["ph"] == "b";
    ends += e["ph"] == "e";
    counters += e["ph"] == "C";
    if (e["ph"] == "b" && e["args"]["buffer"] == "y") EXPECT_DOUBLE_EQ(e["ts"].get<double>(), 0.0025);  // 5 cycles at 2 GHz
  }
  EXPECT_EQ(begins, 4);
  EXPECT_EQ(ends, 4);  // z is never freed: it ends with the trace
  EXPECT_EQ(counters, 3);
}

}  // namespace
}  // namespace tpuemu::profile
