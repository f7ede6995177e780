// SPDX-License-Identifier: Apache-2.0
// The factory tables of the Verilated cores are generated from the one list of presets with a core
// (TPUEMU_CORE_PRESETS): both tables - the CoreSim one (sim/src/core_registry.cpp) and the SystemC
// IP block's RtlCoreModel one - hold exactly the cores of compiled_cores.h, each core has its
// preset's DIM, and a preset without a compiled-in core falls through to the caller's loader.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "tpuemu/sim/compiled_cores.h"
#include "tpuemu/sim/core_loader.h"
#include "tpuemu/sim/core_sim.h"
#include "tpuemu/tlm/rtl_core_model.h"

namespace tpuemu::test {
namespace {

sim::MemoryModelConfig small_memory() {
  sim::MemoryModelConfig mem;
  mem.capacity_bytes = 1ull << 20;
  mem.latency_cycles = 4;
  mem.bytes_per_cycle = 8;
  return mem;
}

std::uint32_t field(const sim::CompiledCore& core, std::string_view key) {
  for (const sim::CompiledCoreField& f : core.fields) {
    if (f.key == key) return f.value;
  }
  throw std::logic_error("compiled_cores.h has no field " + std::string(key));
}

std::vector<std::string> compiled_names() {
  std::vector<std::string> names;
  for (const sim::CompiledCore& core : sim::kCompiledCores) names.emplace_back(core.preset);
  std::sort(names.begin(), names.end());
  return names;
}

TEST(CoreRegistry, EveryCompiledPresetHasItsCoreWithThePresetsDim) {
  ASSERT_GE(sim::kCompiledCores.size(), 2u);  // small and default at least
  for (const sim::CompiledCore& core : sim::kCompiledCores) {
    const std::string preset(core.preset);
    SCOPED_TRACE(preset);
    EXPECT_TRUE(sim::core_sim_available(preset));
    const auto sim_core = sim::make_core_sim(preset, small_memory());
    EXPECT_EQ(sim_core->dim(), field(core, "dim"));
  }
  EXPECT_FALSE(sim::core_sim_available("custom"));
}

TEST(CoreRegistry, TheSystemCTableListsTheSameCores) {
  EXPECT_EQ(tlm::RtlCoreModel::presets(), compiled_names());
}

TEST(CoreRegistry, APresetNotCompiledInFallsThroughToTheLoader) {
  std::vector<std::string> asked;
  const sim::CoreLoader loader = [&](const std::string& preset, const sim::MemoryModelConfig& mem) {
    asked.push_back(preset);
    return sim::make_core_sim("small", mem);  // stands in for a core built at run time
  };
  const auto loaded = sim::make_core_sim("custom", small_memory(), loader);
  EXPECT_EQ(loaded->dim(), 8u);
  // A compiled-in preset never reaches the loader.
  const auto stock = sim::make_core_sim("default", small_memory(), loader);
  EXPECT_EQ(stock->dim(), 16u);
  EXPECT_EQ(asked, std::vector<std::string>{"custom"});

  std::string built;
  for (const std::string& name : compiled_names()) built += (built.empty() ? "" : ", ") + name;
  const std::string refused =
      "rtl backend: no Verilated core for preset 'custom' in this build (built: " + built + ")";
  try {
    sim::make_core_sim("custom", small_memory());
    ADD_FAILURE() << "no core for 'custom' was refused";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(e.what(), refused);
  }
  try {
    sim::make_core_sim("custom", small_memory(),
                       sim::CoreLoader{});  // an empty loader refuses the same
    ADD_FAILURE() << "no core for 'custom' was refused";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(e.what(), refused);
  }
}

}  // namespace
}  // namespace tpuemu::test
