// SPDX-License-Identifier: Apache-2.0
// Sharded runs on the Verilated cores and the tlm model (docs/sharding.md): the shipped MLP and transformer FFN
// bit-exact on 1, 2, 4 and 8 devices in every shard mode on `small` and on 2 and 4 devices on
// `default`; the interconnect bytes equal the analytic minimum; serial and threaded runs give the
// same cycles; fsdp's overlap switch and its memory/time trade-off; failures of one device.
#include <gtest/gtest.h>

#include <tuple>

#include "tpuemu/base/error.h"
#include "tpuemu/shard/sharded_run.h"

namespace tpuemu::shard {
namespace {

const std::string kExamples = TPUEMU_EXAMPLES_DIR;

// The FFN's batch of 1 sequence cannot be split 8 ways: the data-parallel modes run it with 8.
// The FFN on `small` runs on the tlm backend: what these cases check is the sharding (plans,
// collectives, the device model), which is the same on every backend, and tlm simulates small's
// core cycle for cycle like the Verilated one (test_tlm_crosscheck) at a fraction of the CI time.
// The MLP on small and everything on default stay on the Verilated cores.
RunSettings settings_for(const std::string& model, const std::string& preset, ShardMode mode) {
  RunSettings s;
  if (model == "ffn" && mode != ShardMode::Tensor) s.batch = 8;
  if (model == "ffn" && preset == "small") s.backend = "tlm";
  return s;
}

ShardReport run(const std::string& model, const std::string& preset, ShardMode mode, std::uint32_t devices, unsigned jobs = 0,
                bool overlap = true) {
  ShardSettings ss;
  ss.mode = mode;
  ss.devices = devices;
  ss.jobs = jobs;
  ss.overlap = overlap;
  return run_sharded(load_preset(preset), load_model(kExamples + "/" + model + ".json"), settings_for(model, preset, mode), ss);
}

using Case = std::tuple<std::string, std::string, ShardMode, std::uint32_t>;  // model, preset, mode, devices

class ShardedModelRun : public ::testing::TestWithParam<Case> {};

TEST_P(ShardedModelRun, IsBitExactAndMovesTheAnalyticMinimum) {
  const auto& [model, preset, mode, n] = GetParam();
  const ShardReport r = run(model, preset, mode, n);
  EXPECT_TRUE(r.bit_exact) << r.first_mismatch;
  EXPECT_EQ(r.mismatches, 0u);
  ASSERT_EQ(r.device_summaries.size(), n);
  for (const DeviceSummary& d : r.device_summaries) {
    EXPECT_TRUE(d.bit_exact) << d.device << ": " << d.first_mismatch;
    EXPECT_GT(d.checked_values, 0u);
    EXPECT_LE(d.cycles, r.step_cycles);
    EXPECT_GE(d.cycles, d.compute_cycles);
    EXPECT_GT(d.hbm_peak_bytes, 0u);
  }
  // the whole output is checked on every device against the single-device reference
  const Model m = load_model(kExamples + "/" + model + ".json");
  const std::size_t batch = settings_for(model, preset, mode).batch.value_or(m.batch);
  const std::size_t out_values = m.rows(m.layers.size(), batch) * m.layers.back().out.channels;
  EXPECT_GE(r.checked_values, out_values * n);
  EXPECT_EQ(r.interconnect_bytes, r.analytic_min_bytes);  // ring all-gathers move exactly the minimum
  if (n == 1) {
    EXPECT_TRUE(r.collectives.empty());
    EXPECT_EQ(r.interconnect_bytes, 0u);
    EXPECT_DOUBLE_EQ(r.memory_saved, 0.0);
  } else {
    EXPECT_FALSE(r.collectives.empty());
    for (const DeviceSummary& d : r.device_summaries) {
      EXPECT_GT(d.bytes_sent, 0u);
      EXPECT_EQ(d.bytes_sent * n, r.interconnect_bytes);
    }
    EXPECT_GT(r.single_device_hbm_peak_bytes, 0u);
    // tensor parallelism splits every weight and most activations: each device needs less
    if (mode == ShardMode::Tensor) {
      EXPECT_LT(r.hbm_peak_bytes, r.single_device_hbm_peak_bytes);
    }
  }
  EXPECT_GE(r.load_balance, 1.0);
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  return std::get<0>(info.param) + "_" + std::get<1>(info.param) + "_" + std::string(to_string(std::get<2>(info.param))) + "_" +
         std::to_string(std::get<3>(info.param));
}

INSTANTIATE_TEST_SUITE_P(Small, ShardedModelRun,
                         ::testing::Combine(::testing::Values("mlp", "ffn"), ::testing::Values("small"),
                                            ::testing::Values(ShardMode::Batch, ShardMode::Tensor, ShardMode::Fsdp),
                                            ::testing::Values(1u, 2u, 4u, 8u)),
                         case_name);
INSTANTIATE_TEST_SUITE_P(Default, ShardedModelRun,
                         ::testing::Combine(::testing::Values("mlp", "ffn"), ::testing::Values("default"),
                                            ::testing::Values(ShardMode::Batch, ShardMode::Tensor, ShardMode::Fsdp),
                                            ::testing::Values(2u, 4u)),
                         case_name);

// Every device is its own simulation: one thread or two give the same cycles to the cycle.
TEST(ShardedRun, SerialAndThreadedRunsAgreeOnEveryCycle) {
  for (ShardMode mode : {ShardMode::Batch, ShardMode::Tensor, ShardMode::Fsdp}) {
    SCOPED_TRACE(std::string(to_string(mode)));
    const ShardReport serial = run("mlp", "small", mode, 4, 1);
    const ShardReport threads = run("mlp", "small", mode, 4, 2);
    EXPECT_EQ(serial.jobs, 1u);
    EXPECT_EQ(threads.jobs, 2u);
    EXPECT_EQ(shard_report_to_json(serial)["per_device"], shard_report_to_json(threads)["per_device"]);
    EXPECT_EQ(serial.step_cycles, threads.step_cycles);
    ASSERT_EQ(serial.collectives.size(), threads.collectives.size());
    for (std::size_t i = 0; i < serial.collectives.size(); ++i) EXPECT_EQ(serial.collectives[i].end_cycle, threads.collectives[i].end_cycle);
  }
}

// fsdp with overlap gathers layer i+1's weights while layer i runs: less time, and two gathered
// weight buffers alive at once instead of one.
TEST(ShardedRun, FsdpOverlapTradesMemoryForTime) {
  const ShardReport overlapped = run("mlp", "small", ShardMode::Fsdp, 4, 0, true);
  const ShardReport serial = run("mlp", "small", ShardMode::Fsdp, 4, 0, false);
  ASSERT_TRUE(overlapped.bit_exact && serial.bit_exact);
  EXPECT_LT(overlapped.step_cycles, serial.step_cycles);
  EXPECT_GT(overlapped.overlapped_collective_cycles, 0u);
  EXPECT_EQ(serial.overlapped_collective_cycles, 0u);
  EXPECT_GT(overlapped.hbm_peak_bytes, serial.hbm_peak_bytes);
  EXPECT_EQ(overlapped.interconnect_bytes, serial.interconnect_bytes);
  // a collective ends when its bytes have crossed the links: issue <= start < end, one at a time
  std::uint64_t links_free = 0;
  for (const CollectiveRecord& c : serial.collectives) {
    EXPECT_LE(c.issue_cycle, c.start_cycle);
    EXPECT_GE(c.start_cycle, links_free);
    EXPECT_LT(c.start_cycle, c.end_cycle);
    links_free = c.end_cycle;
  }
}

// The collective's time is the interconnect model's, and the devices' clocks jump to its end.
TEST(ShardedRun, ClocksJumpToTheCollectivesEnd) {
  const Preset preset = load_preset("small");
  const ShardReport r = run("mlp", "small", ShardMode::Tensor, 4);
  ASSERT_EQ(r.collectives.size(), 3u);
  for (const CollectiveRecord& c : r.collectives) {
    const CollectiveCost cost = collective_cost(Collective::AllGather, c.bytes, ring_of(4), *preset.interconnect);
    EXPECT_EQ(c.end_cycle - c.start_cycle, cost.cycles);
    EXPECT_FALSE(c.overlapped);
  }
  // the last collective gathers the model's output: it ends the run on every device
  for (const DeviceSummary& d : r.device_summaries) EXPECT_EQ(d.cycles, r.collectives.back().end_cycle);
}

// A 2x4 torus (tpu-v4-like's torus2d interconnect; the fake backend, the functional core model,
// keeps the DIM-128 preset quick): rows, then columns, still the minimum and bit-exact.
TEST(ShardedRun, TorusMeshIsBitExactAndMovesTheMinimum) {
  const Preset preset = load_preset("tpu-v4-like");
  RunSettings s;
  s.backend = "fake";
  ShardSettings ss;
  ss.mode = ShardMode::Tensor;
  ss.devices = 8;
  ss.mesh = "2x4";
  const ShardReport r = run_sharded(preset, load_model(kExamples + "/mlp.json"), s, ss);
  EXPECT_TRUE(r.bit_exact) << r.first_mismatch;
  EXPECT_TRUE(r.mesh.torus());
  EXPECT_EQ(r.interconnect_bytes, r.analytic_min_bytes);
  for (const CollectiveRecord& c : r.collectives) {
    EXPECT_EQ(c.end_cycle - c.start_cycle, collective_cost(Collective::AllGather, c.bytes, r.mesh, *preset.interconnect).cycles);
  }
}

TEST(ShardedRun, BadRequestsAreOneLineErrors) {
  auto message = [](auto&& f) {
    try {
      f();
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const Preset small = load_preset("small");
  const Model mlp = load_model(kExamples + "/mlp.json");
  ShardSettings ss;
  ss.mode = ShardMode::Tensor;
  ss.devices = 4;
  ss.mesh = "2x3";
  EXPECT_EQ(message([&] { run_sharded(small, mlp, {}, ss); }), "--mesh 2x3 has 6 devices, --devices is 4");
  ss.mesh = "";
  RunSettings two_requests;
  two_requests.requests = 2;
  EXPECT_EQ(message([&] { run_sharded(small, mlp, two_requests, ss); }),
            "--requests 2 with --devices: a sharded run takes one request");
  ss.mode = ShardMode::Batch;
  ss.devices = 128;
  EXPECT_EQ(message([&] { run_sharded(small, mlp, {}, ss); }), "--devices 128 is not in 1..64");
}

}  // namespace
}  // namespace tpuemu::shard
