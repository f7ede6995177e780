// SPDX-License-Identifier: Apache-2.0
// Allocation policies in the runtime: every HBM policy and runtime VMEM placement by a policy run
// the workload bit-exactly on the Verilated core, and the reports carry the policies' figures.
#include <algorithm>

#include <gtest/gtest.h>

#include "tpuemu/run/runner.h"

namespace tpuemu {
namespace {

class EveryHbmPolicy : public ::testing::TestWithParam<std::string> {};

TEST_P(EveryHbmPolicy, PlacesTheMlpAndStaysBitExact) {
  RunSettings s;
  s.allocator = GetParam();
  const Workload w = load_workload(TPUEMU_TEST_DATA_DIR "/small_mlp.json");
  const WorkloadReport r = run_workload(load_preset("small"), w, s);
  EXPECT_TRUE(r.bit_exact) << r.first_mismatch;
  const alloc::SpaceMetrics& m = r.hbm_allocation;
  EXPECT_EQ(m.policy, GetParam());
  EXPECT_EQ(m.allocations, 1 + 3 * w.layers.size());  // the input; per layer its program, weights and output
  EXPECT_EQ(m.frees, m.allocations);                    // everything freed when the run ends
  EXPECT_GE(m.peak_in_use_bytes, m.peak_live_bytes);
  EXPECT_GE(m.peak_footprint_bytes, m.peak_in_use_bytes);
  EXPECT_EQ(m.now.in_use_bytes, 0u);
  // The trace of the run holds the same events.
  EXPECT_EQ(r.allocation_trace.events.size(), m.allocations + m.frees);
  EXPECT_EQ(r.hbm_allocation_samples.size(), m.allocations + m.frees);  // the time series of the report
  EXPECT_EQ(r.hbm_allocation_samples.back().in_use_bytes, 0u);
}

INSTANTIATE_TEST_SUITE_P(Policies, EveryHbmPolicy, ::testing::ValuesIn(alloc::allocator_names()),
                         [](const auto& info) {
                           std::string n = info.param;
                           std::replace(n.begin(), n.end(), '-', '_');
                           return n;
                         });

TEST(RuntimeVmemPlacement, EveryPolicyPlacesTheCompilersBuffersBitExactly) {
  const Workload w = load_workload(TPUEMU_TEST_DATA_DIR "/small_mlp.json");
  RunSettings planned;
  const WorkloadReport base = run_workload(load_preset("small"), w, planned);
  ASSERT_TRUE(base.bit_exact);
  EXPECT_FALSE(base.vmem_allocation.has_value());
  for (const std::string& policy : alloc::allocator_names()) {
    RunSettings s;
    s.vmem_allocator = policy;
    const WorkloadReport r = run_workload(load_preset("small"), w, s);
    EXPECT_TRUE(r.bit_exact) << policy << ": " << r.first_mismatch;
    ASSERT_TRUE(r.vmem_allocation.has_value());
    const alloc::SpaceMetrics& m = *r.vmem_allocation;
    EXPECT_EQ(m.policy, policy);
    EXPECT_GE(m.allocations, 2 * w.layers.size());  // A and B of every layer at least
    EXPECT_EQ(m.frees, m.allocations);              // freed when each matmul's program ends
    EXPECT_LE(m.peak_footprint_bytes, r.vmem_capacity_bytes);
    // The planner packs the same buffers at least as tightly as any runtime policy.
    EXPECT_LE(base.vmem_peak_bytes, r.vmem_peak_bytes) << policy;
  }
}

TEST(RuntimeHbmPlacement, OutOfHbmNamesThePolicyAndTheLargestBuffers) {
  RunSettings s;
  s.allocator = "buddy";
  try {
    run_workload(load_preset("small"), make_matmul_workload(6000, 6000, 16), s);
    FAIL() << "expected out of memory";
  } catch (const alloc::OutOfMemory& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("out of HBM memory (buddy"), std::string::npos) << m;
    EXPECT_NE(m.find("'input' asks for 34.4 MiB"), std::string::npos) << m;
    EXPECT_NE(m.find("largest live buffers: 'program'"), std::string::npos) << m;
    // 59.9 MiB are free in one block, but buddy can only hand out a 64 MiB block for 34.4 MiB: the
    // rounded size would not fit even without fragmentation, and the diagnosis says why.
    EXPECT_NE(m.find("buddy needs 64.0 MiB (the request rounded up to a power of two"), std::string::npos) << m;
    EXPECT_EQ(e.needed(), 64u << 20);
    EXPECT_FALSE(e.fits_without_fragmentation()) << m;
  }
}

}  // namespace
}  // namespace tpuemu
