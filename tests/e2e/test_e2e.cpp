// SPDX-License-Identifier: Apache-2.0
// End to end through the runner: workloads generated, laid out, compiled, run through the firmware
// on the Verilated cores, checked bit-exactly; the acceptance figures of the issue as assertions.
#include <gtest/gtest.h>

#include "tpuemu/run/runner.h"
#include "tpuemu/spec/contract.h"

namespace tpuemu {
namespace {

WorkloadReport run(const std::string& preset, const Workload& w, unsigned buffers = 2,
                   bool tiled = true, bool resident = true, unsigned backpressure = 0) {
  RunSettings s;
  s.compile.buffers = {buffers, buffers, buffers};
  s.compile.reuse_resident = resident;
  s.tiled = tiled;
  s.device.backpressure_permille = backpressure;
  return run_workload(load_preset(preset), w, s);
}

TEST(EndToEnd, MlpExampleIsBitExact) {
  const Workload w = load_workload(TPUEMU_TEST_DATA_DIR "/mlp.json");
  const WorkloadReport r = run("default", w);
  EXPECT_TRUE(r.bit_exact) << r.first_mismatch;
  EXPECT_EQ(r.checked_values, 64u * 256 + 64u * 256 + 64u * 64);  // every layer's output
  EXPECT_EQ(r.layers.size(), 3u);
  // every MXU row of every weight tile is issued exactly once
  EXPECT_EQ(r.counters.mxu_busy, r.ideal_cycles);
  EXPECT_GT(r.roofline_fraction, 0.5);
  EXPECT_LE(r.roofline_fraction, 1.0);
  EXPECT_GT(r.counters.bytes_vmem_to_hbm, 0u);  // int8 layers drain through VMEM
  EXPECT_GT(r.counters.bytes_acc_to_hbm, 0u);   // the int32 layer drains from ACC
  // `default` runs over the HBM subsystem: every beat the core moved is a burst the device saw
  ASSERT_TRUE(r.hbm.has_value());
  EXPECT_EQ(r.hbm_timing_set, "hbm2-2000");
  const MemoryStatistics& t = *r.hbm;
  EXPECT_GT(t.count("reads"), 0u);
  EXPECT_GT(t.count("writes"), 0u);
  EXPECT_GE((t.count("reads") + t.count("writes")) * 64, r.dma_bytes);  // bursts cover every DMA byte
  EXPECT_EQ(t.count("row_hits") + t.count("row_misses") + t.count("row_conflicts"),
            t.count("reads") + t.count("writes"));
  EXPECT_GT(t.count("refs"), 0u);  // the run is longer than tREFI
  EXPECT_GT(t.count("read_latency_p99"), t.count("read_latency_p50"));
  // every counter of the contract's list is registered per channel, under its contract name
  EXPECT_EQ(t.channels(), 8u);
#define EXPECT_REGISTERED(index, stat, stat_unit, doc) \
  ASSERT_NE(t.find(#stat), nullptr) << #stat;               \
  EXPECT_TRUE(t.find(#stat)->per_channel) << #stat;         \
  EXPECT_EQ(t.find(#stat)->unit, stat_unit) << #stat;
  TPUEMU_SPEC_HBM_STATS(EXPECT_REGISTERED)
#undef EXPECT_REGISTERED
}

TEST(EndToEnd, SmallMlpOnSmallPresetWithBackPressure) {
  const Workload w = load_workload(TPUEMU_TEST_DATA_DIR "/small_mlp.json");
  const WorkloadReport r = run("small", w, 2, true, true, 400);
  EXPECT_TRUE(r.bit_exact) << r.first_mismatch;
  EXPECT_GT(r.counters.dma_stall_memory, 0u);
}

TEST(EndToEnd, UntiledAndStreamedLayoutsAreBitExact) {
  for (bool tiled : {true, false}) {
    for (bool resident : {true, false}) {
      const WorkloadReport r = run("small", make_matmul_workload(70, 45, 60, true, 9), 2, tiled, resident);
      EXPECT_TRUE(r.bit_exact) << "tiled " << tiled << " resident " << resident << ": " << r.first_mismatch;
    }
  }
}

TEST(EndToEnd, ResidentPanelsSkipReloads) {
  const Workload w = make_matmul_workload(64, 128, 256, false, 5);  // several N blocks on small
  const WorkloadReport resident = run("small", w, 2, true, true);
  const WorkloadReport streamed = run("small", w, 2, true, false);
  ASSERT_TRUE(resident.bit_exact);
  ASSERT_TRUE(streamed.bit_exact);
  EXPECT_GT(resident.layers[0].plan.bytes_a_reused, 0u);
  EXPECT_LT(resident.counters.bytes_hbm_to_vmem, streamed.counters.bytes_hbm_to_vmem);
}

// The pipelining target: 512x512x512 on `default` reaches 90% of its roofline bound with two buffers,
// and one buffer is measurably lower.
TEST(EndToEnd, DoubleBufferingReachesTheRoofline) {
  const Workload w = make_matmul_workload(512, 512, 512, false, 1);
  const WorkloadReport two = run("default", w, 2);
  const WorkloadReport one = run("default", w, 1);
  ASSERT_TRUE(two.bit_exact);
  ASSERT_TRUE(one.bit_exact);
  EXPECT_GE(two.roofline_fraction, 0.90);
  EXPECT_LT(one.roofline_fraction, two.roofline_fraction - 0.03);
  EXPECT_GT(one.counters.mxu_stall_semaphore, two.counters.mxu_stall_semaphore);
}

}  // namespace
}  // namespace tpuemu
