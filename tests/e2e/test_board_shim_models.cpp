// SPDX-License-Identifier: Apache-2.0
// Whole workloads on the `default` core with the board top's HBM side (rtl/board: the DRAM shim in
// front of a backing store of random latency, docs/fpga.md) instead of the simulation top's DRAM
// model: every target cycle count, core counter, HBM counter and result is the simulation top's,
// for several backing-store seeds. Only the host cycles the board needed differ.
#include <gtest/gtest.h>

#include <string>

#include "tpuemu/config/config.h"
#include "tpuemu/run/runner.h"
#include "tpuemu/compile/workload.h"

namespace tpuemu::test {
namespace {

WorkloadReport run(const Workload& w, std::optional<std::uint32_t> board_latency, std::uint64_t seed = 1) {
  RunSettings s;
  s.device.board_shim_max_latency = board_latency;
  s.device.seed = seed;
  return run_workload(load_preset("default"), w, s);
}

void expect_same_target(const WorkloadReport& board, const WorkloadReport& sim) {
  EXPECT_TRUE(board.bit_exact) << board.first_mismatch;
  EXPECT_EQ(board.checked_values, sim.checked_values);
  EXPECT_EQ(board.cycles, sim.cycles);
  EXPECT_EQ(board.counters, sim.counters);
  ASSERT_EQ(board.steps.size(), sim.steps.size());
  ASSERT_TRUE(board.hbm.has_value());
  ASSERT_TRUE(sim.hbm.has_value());
  for (const MemoryStatistic& st : sim.hbm->all()) {
    const MemoryStatistic* b = board.hbm->find(st.name);
    ASSERT_NE(b, nullptr) << st.name;
    EXPECT_EQ(b->total, st.total) << st.name;
    EXPECT_EQ(b->channels, st.channels) << st.name;
  }
  // the backing store was late and the shim held the target clock
  EXPECT_EQ(sim.hbm->find("board_host_cycles"), nullptr);
  EXPECT_GT(board.hbm->count("board_held_host_cycles"), 0u);
  EXPECT_EQ(board.hbm->count("board_host_cycles"),
            board.hbm->count("dram_cycles") + board.hbm->count("board_held_host_cycles"));
}

class BoardShimModel : public ::testing::TestWithParam<std::string> {};

TEST_P(BoardShimModel, TargetCyclesCountersAndResultsMatchTheSimulationTop) {
  const Workload w = load_workload(GetParam());
  const WorkloadReport sim = run(w, std::nullopt);
  ASSERT_TRUE(sim.bit_exact) << sim.first_mismatch;
  for (const std::uint64_t seed : {1u, 2u, 3u}) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    expect_same_target(run(w, 200, seed), sim);
  }
}

// a model (the MLP's three layers) and a matmul whose shape is no multiple of DIM
INSTANTIATE_TEST_SUITE_P(Workloads, BoardShimModel,
                         ::testing::Values(TPUEMU_EXAMPLES_DIR "/mlp.json", TPUEMU_TEST_DATA_DIR "/matmul-100.json"),
                         [](const auto& info) { return info.index == 0 ? std::string("mlp") : std::string("matmul_100"); });

TEST(BoardShimRun, IsRefusedWhereItCannotRun) {
  const Workload w = load_workload(std::string(TPUEMU_EXAMPLES_DIR) + "/mlp.json");
  RunSettings s;
  s.device.board_shim_max_latency = 10;
  try {
    (void)run_workload(load_preset("small"), w, s);
    FAIL() << "the small preset (simple memory model) took the board shim";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("needs the HBM model"), std::string::npos) << e.what();
  }
  s.backend = "tlm";
  try {
    (void)run_workload(load_preset("default"), w, s);
    FAIL() << "the tlm backend took the board shim";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("the board top's DRAM shim is RTL"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tpuemu::test
