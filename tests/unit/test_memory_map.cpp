// SPDX-License-Identifier: Apache-2.0
// Layer profile: the memory map built from an allocation trace (the runtime's placements and a
// replay's), its JSON round trip, and the errors of reading it back.
#include <gtest/gtest.h>

#include "test_support.h"
#include "tpuemu/alloc/alloc_trace.h"
#include "tpuemu/profile/memory_map.h"

namespace tpuemu::profile {
namespace {

// w and x placed by the "runtime"; y freed at 9, w never freed.
alloc::AllocTrace placed_trace() {
  alloc::AllocTrace t = alloc::parse_alloc_trace(
      "time,event,id,size,alignment,space,padding,owner\n"
      "0,alloc,w,100,8,hbm,0,layer 0 weights\n"
      "0,alloc,x,50,8,hbm,0,input x\n"
      "5,free,x,,,hbm,,\n"
      "5,alloc,y,300,8,hbm,0,layer 1 output\n"
      "9,free,y,,,hbm,,\n"
      "12,alloc,v,16,8,vmem,0,scratch\n",
      "t.csv");
  t.events[0].offset = 0;
  t.events[1].offset = 256;
  t.events[3].offset = 256;
  t.events[5].offset = 0;
  return t;
}

TEST(MemoryMap, OneBufferPerAllocationWithItsLifetimeAndPlacement) {
  const SpaceMap m = space_map_as_placed(placed_trace(), "hbm", "bfc", 4096);
  EXPECT_EQ(m.space, "hbm");
  EXPECT_EQ(m.policy, "bfc");
  EXPECT_EQ(m.capacity, 4096u);
  EXPECT_EQ(m.end, 12u);  // the trace's last event, in any space
  ASSERT_EQ(m.buffers.size(), 3u);
  const MapBuffer& w = m.buffers[0];
  EXPECT_EQ(w.id, "w");
  EXPECT_EQ(w.name, "layer 0 weights");
  EXPECT_EQ(w.layer, "layer 0");
  EXPECT_EQ(w.kind, "weight");
  EXPECT_EQ(w.offset, 0u);
  EXPECT_EQ(w.size, 100u);
  EXPECT_EQ(w.start, 0u);
  EXPECT_EQ(w.end, 12u);  // never freed: ends with the trace
  EXPECT_EQ(m.buffers[1].end, 5u);
  EXPECT_EQ(m.buffers[1].kind, "activation");
  EXPECT_EQ(m.buffers[2].id, "y");
  EXPECT_EQ(m.buffers[2].start, 5u);
  EXPECT_EQ(m.buffers[2].end, 9u);
  EXPECT_EQ(m.buffers[2].offset, 256u);  // reuses the hole x left
  EXPECT_EQ(space_map_as_placed(placed_trace(), "vmem", "bfc", 64).buffers.size(), 1u);
}

TEST(MemoryMap, AReplayGivesItsOwnPlacementsAndItsFailure) {
  const alloc::AllocTrace t = placed_trace();
  alloc::ReplayOptions options;
  options.capacity["hbm"] = 512;  // w (128 reserved) + y (512) cannot both fit
  options.capacity["vmem"] = 256;
  options.policies = {"first-fit"};
  options.keep_placements = true;
  const alloc::ReplayResult r = alloc::replay_alloc_trace(t, options);
  const SpaceMap m = space_map_of_replay(t, r.runs.at(0));
  EXPECT_EQ(m.policy, "first-fit");
  EXPECT_EQ(m.capacity, 512u);
  ASSERT_EQ(m.buffers.size(), 2u);  // y failed
  EXPECT_EQ(m.buffers[0].id, "w");
  EXPECT_EQ(m.buffers[1].id, "x");
  ASSERT_TRUE(m.failure.has_value());
  test::expect_contains(*m.failure, "t.csv:5: out of hbm memory");
}

TEST(MemoryMap, RoundTripsThroughJsonAndNamesThePlaceOfABadValue) {
  MemoryMap map;
  map.spaces.push_back(space_map_as_placed(placed_trace(), "hbm", "bfc", 4096));
  map.spaces.back().failure = "nothing failed, but the field must survive";
  const nlohmann::json j = memory_map_to_json(map);
  EXPECT_EQ(j["spaces"][0]["buffers"].size(), 3u);
  EXPECT_EQ(j["spaces"][0]["buffers"][2]["offset"], 256);
  const JsonDocument doc = JsonDocument::parse(nlohmann::json{{"memory_map", j}}.dump(1), "s.json");
  const MemoryMap back = memory_map_from_json(doc, "/memory_map");
  ASSERT_EQ(back.spaces.size(), 1u);
  EXPECT_EQ(memory_map_to_json(back), j);

  auto error = [](const std::string& text) {
    return test::error_of([&] { (void)memory_map_from_json(JsonDocument::parse(text, "s.json"), ""); });
  };
  EXPECT_EQ(error("{\"spaces\": 3}"), "s.json:1:2: /spaces: expected an array");
  test::expect_contains(error("{\"spaces\": [{\"space\": \"hbm\", \"policy\": \"bfc\", \"capacity\": 10, \"end\": 5,"
                              " \"buffers\": [{\"id\": \"a\", \"name\": \"a\", \"layer\": \"a\", \"kind\": \"scratch\","
                              " \"offset\": 8, \"size\": 4, \"start\": 0, \"end\": 5}]}]}"),
                        "/spaces/0/buffers/0: buffer a ends past the capacity 10");
  test::expect_contains(error("{\"spaces\": [{\"space\": \"hbm\", \"policy\": \"bfc\", \"capacity\": 10, \"end\": 5,"
                              " \"buffers\": [], \"colour\": 1}]}"),
                        "colour");
}

}  // namespace
}  // namespace tpuemu::profile
