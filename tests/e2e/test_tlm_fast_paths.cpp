// SPDX-License-Identifier: Apache-2.0
// The core model's fast paths (docs/systemc.md, "Speed"): the quiet cycles repeated at once, the
// streaming loop and the engines' loop must not move a single cycle. Every workload runs on "tlm"
// and on "tlm-cycle" (the same model stepping every cycle in full); the whole JSON report, but
// for the backend's name and the simulation's wall time, must be equal - cycles, every counter,
// every step, the HBM statistics. Compiled matmuls of shapes that are and are not multiples of
// DIM with 1/2/3 buffers and the shipped models, on the simple memory (small) and on HBM
// (default, tpu-v4-like), and one that the HBM bridge back-pressures.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "tpuemu/compile/model.h"
#include "tpuemu/compile/workload.h"
#include "tpuemu/config/config.h"
#include "tpuemu/run/runner.h"

#include "case_model.h"

namespace tpuemu {
namespace {

struct Case {
  std::string preset;
  std::string workload;  // "MxKxN" or a shipped model's name
  unsigned buffers = 2;
};

std::vector<Case> cases() {
  std::vector<Case> out;
  for (const char* preset : {"small", "default", "tpu-v4-like"}) {
    for (unsigned buffers : {1u, 2u, 3u}) {
      out.push_back({preset, "64x64x64", buffers});
      out.push_back({preset, "37x50x29", buffers});
      out.push_back({preset, "128x96x160", buffers});
    }
    for (const char* model : {"mlp", "cnn", "ffn"}) out.push_back({preset, model, 2});
  }
  // 128-byte beats with 128 reads outstanding fill the HBM bridge's burst ids: the memory holds
  // requests back, and a write must wait behind a held read (it once took the read's place and
  // hung the run).
  out.push_back({"tpu-v4-like", "1024x256x1024", 2});
  return out;
}

// The report less what depends on the host, not the simulated device.
nlohmann::json simulated(const WorkloadReport& r) {
  nlohmann::json j = report_to_json(r);
  j.erase("backend");
  j.erase("simulation");
  return j;
}

class TlmFastPaths : public ::testing::TestWithParam<Case> {};

TEST_P(TlmFastPaths, ChangeNoCycle) {
  const Case& c = GetParam();
  const Preset preset = load_preset(c.preset);
  const Model model = test::case_model(c.workload);
  RunSettings s;
  s.compile.buffers = {c.buffers, c.buffers, c.buffers};
  s.backend = "tlm";
  const WorkloadReport fast = run_model(preset, model, s);
  s.backend = "tlm-cycle";
  const WorkloadReport full = run_model(preset, model, s);
  ASSERT_TRUE(fast.bit_exact) << fast.first_mismatch;
  ASSERT_TRUE(full.bit_exact) << full.first_mismatch;
  ASSERT_GT(full.cycles, 0u);
  EXPECT_EQ(fast.cycles, full.cycles);
  EXPECT_EQ(fast.counters.to_array(), full.counters.to_array());
  const nlohmann::json a = simulated(fast), b = simulated(full);
  if (a != b) {
    const nlohmann::json diff = nlohmann::json::diff(b, a);
    ADD_FAILURE() << "reports differ (tlm-cycle -> tlm): " << diff.dump().substr(0, 2000);
  }
}

INSTANTIATE_TEST_SUITE_P(Matrix, TlmFastPaths, ::testing::ValuesIn(cases()), [](const auto& info) {
  std::string n = fmt::format("{}_{}_b{}", info.param.preset, info.param.workload, info.param.buffers);
  for (char& ch : n) if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return n;
});

}  // namespace
}  // namespace tpuemu
