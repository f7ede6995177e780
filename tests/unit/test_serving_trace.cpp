// SPDX-License-Identifier: Apache-2.0
// The allocation traces the project generates from its workloads (tpuemu trace): a model served
// with requests of varying batch size.
#include <algorithm>
#include <set>

#include <gtest/gtest.h>

#include "test_support.h"
#include "tpuemu/alloc/alloc_trace.h"
#include "tpuemu/config/config.h"
#include "tpuemu/run/serving_trace.h"

namespace tpuemu::alloc {
namespace {

Preset small_preset() { return load_preset(std::string(TPUEMU_TEST_PRESET_DIR) + "/small.json"); }

Workload small_mlp() {
  Workload w;
  w.name = "mlp";
  w.batch = 1;
  w.layers = {{64, 48}, {48, 32}, {32, 16, 1, 0, false, true}};
  return w;
}

void expect_well_formed(const AllocTrace& trace) {
  // Reading it back checks ids, frees and time order; everything allocated per request is freed.
  const AllocTrace parsed = parse_alloc_trace(format_alloc_trace(trace), "gen.csv");
  std::set<std::string> live;
  for (const TraceEvent& e : parsed.events) {
    if (e.alloc) live.insert(e.space + "/" + e.id);
    else live.erase(e.space + "/" + e.id);
  }
  for (const std::string& id : live) EXPECT_EQ(id.rfind("hbm/w.", 0), 0u) << id << " is never freed";
}

TEST(ServingTrace, MlpRequestsOfVaryingBatchAllocateAndFreeTheirTensors) {
  ServingOptions options;
  options.batches = {1, 8, 32};
  options.requests = 6;
  const AllocTrace trace = serving_trace(small_preset(), small_mlp(), options);
  expect_well_formed(trace);
  // Inputs scale with the batch: 32-row tiles, so batch 1 and 8 share a size and 32 does too.
  std::vector<std::uint64_t> input_sizes;
  for (const TraceEvent& e : trace.events) {
    if (e.alloc && e.id.ends_with(".x")) input_sizes.push_back(e.size);
  }
  ASSERT_EQ(input_sizes.size(), 6u);
  EXPECT_EQ(input_sizes[0], input_sizes[3]);
  EXPECT_EQ(input_sizes[2], 32u * 64u);
  EXPECT_GT(std::count_if(trace.events.begin(), trace.events.end(), [](const TraceEvent& e) { return e.space == "vmem"; }), 0);
  // Deterministic: the same options give the same bytes.
  EXPECT_EQ(format_alloc_trace(trace), format_alloc_trace(serving_trace(small_preset(), small_mlp(), options)));
  // Interleaving two requests makes their lifetimes overlap.
  ReplayOptions replay;
  replay.capacity[""] = 64 << 20;
  replay.policies = {"bfc"};
  const ReplayResult r = replay_alloc_trace(trace, replay);
  EXPECT_EQ(r.runs[0].metrics.failed_allocations, 0u);
  EXPECT_GT(r.runs[0].metrics.peak_internal_waste_bytes, 0u);  // tile padding of batch 1
}

// The document entry point of the CNN files (fuzz target "cnn"): defaults, and errors naming the
// document's source, the field and the bound.
TEST(ServingTrace, CnnModelFromADocument) {
  const CnnModel m = load_cnn_model(
      JsonDocument::parse(R"({"kind": "cnn", "height": 8, "width": 4, "channels": 3, "convs": [{"out": 16}], "classes": 2})",
                          "cnn.json"),
      "serving/tiny.json");
  EXPECT_EQ(m.name, "tiny");
  ASSERT_EQ(m.convs.size(), 1u);
  EXPECT_EQ(m.convs[0].kernel, 3u);
  EXPECT_EQ(m.convs[0].stride, 1u);
  EXPECT_EQ(m.width, 4u);
  const std::string msg = test::error_of([] {
    load_cnn_model(JsonDocument::parse(R"({"kind": "cnn", "height": 8, "width": 8, "channels": 3,
                                           "convs": [{"kernel": 0, "out": 4}], "classes": 2})", "cnn.json"), "x.json");
  });
  test::expect_contains(msg, "cnn.json:");
  test::expect_contains(msg, "/convs/0/kernel");
}

TEST(ServingTrace, CnnLowersConvolutionsToIm2colMatmuls) {
  CnnModel cnn;
  cnn.height = cnn.width = 8;
  cnn.channels = 3;
  cnn.convs = {{3, 1, 16}, {3, 2, 32}, {1, 1, 32}};
  cnn.classes = 10;
  ServingOptions options;
  options.batches = {2, 4};
  options.in_flight = 1;
  const AllocTrace trace = serving_trace(small_preset(), cnn, options);
  expect_well_formed(trace);
  std::uint64_t patches0 = 0;
  bool patches_for_1x1 = false;
  for (const TraceEvent& e : trace.events) {
    if (e.alloc && e.id == "r0.conv0.patches") patches0 = e.size;
    if (e.id.find("conv2.patches") != std::string::npos) patches_for_1x1 = true;
  }
  // batch 2 x 8 x 8 pixels = 128 rows of 3*3*3 = 27 int8, padded to 32-row x 8-column tiles.
  EXPECT_EQ(patches0, 128u * 32u);
  EXPECT_FALSE(patches_for_1x1);
  EXPECT_NE(test::error_of([&] {
              ServingOptions bad = options;
              bad.batches = {0};
              serving_trace(small_preset(), cnn, bad);
            }).find("batch size 0"),
            std::string::npos);
}

}  // namespace
}  // namespace tpuemu::alloc
