// SPDX-License-Identifier: Apache-2.0
// The in-process "rtl" backend: the Verilated core (CoreSim) behind the firmware's simulator HAL
// (sim_core_transport.h).
#include "tpuemu/device/backend_registry.h"
#include "../sim_core_transport.h"
#include "core_module.h"

#include <stdexcept>

#include <fmt/format.h>

#include "tpuemu/config/config.h"
#include "tpuemu/sim/compiled_cores.h"
#include "tpuemu/sim/core_sim.h"

namespace tpuemu {

namespace {

// A preset may be a user's copy of a shipped one with the same name: every field the compiled core
// fixes must have the value it was compiled with, or the run would silently simulate the stock
// core instead of what the preset asks for. Empty when a compiled core fits; otherwise why none
// does, and the core cache (core_module.h) serves the preset.
std::string compiled_core_problem(const Preset& preset) {
  std::string built;
  for (const sim::CompiledCore& core : sim::kCompiledCores) {
    built += fmt::format("{}{}", built.empty() ? "" : ", ", core.preset);
  }
  for (const sim::CompiledCore& core : sim::kCompiledCores) {
    if (core.preset != preset.name) continue;
    const nlohmann::json asked = to_json(preset);
    for (const sim::CompiledCoreField& f : core.fields) {
      const std::uint64_t value = asked.at(std::string(f.key)).get<std::uint64_t>();
      if (value != f.value)
        return fmt::format("preset {} sets {}={} but the core was built with {}", preset.name, f.key, value, f.value);
    }
    return {};
  }
  return fmt::format("no Verilated core for preset '{}' in this build (built: {})", preset.name, built);
}

void check_compiled_core(const Preset& preset, const DeviceOptions& options) {
  if (const std::string problem = compiled_core_problem(preset); !problem.empty())
    ensure_cached_core(preset, options, problem);
}

}  // namespace

std::unique_ptr<Transport> open_rtl_transport(const Preset& preset, const DeviceOptions& options) {
  const std::string problem = compiled_core_problem(preset);
  const sim::MemoryModelConfig mem = memory_config_for(preset, options);
  SimCoreTransport::Parts parts;
  try {
    parts.core = problem.empty() ? sim::make_core_sim(preset.name, mem) : open_cached_core(preset, options, problem, mem);
    if (!options.trace_fst.empty()) parts.core->open_trace(options.trace_fst);
    parts.core->reset();
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw Error("device", fmt::format("backend rtl: cannot start the core for preset '{}': {}",
                                      preset.name, e.what()));
  }
  parts.hal = std::make_unique<fw::SimHal>(*parts.core, preset.smem_words);
  const std::string source =
      options.board_shim_max_latency
          ? fmt::format("{}: board top's memory system (RTL beat bridge, HBM controller, DRAM shim; backing store "
                        "0..{} host cycles), checked against the DRAM device model",
                        preset.hbm.timing_set, *options.board_shim_max_latency)
          : memory_source_of(preset, "RTL HBM controller");
  return std::make_unique<SimCoreTransport>(std::move(parts), "rtl", source);
}

void register_rtl_backend(DeviceBackendRegistry& registry) {
  registry.add({.name = "rtl",
                .description = "the preset's Verilated core in this process, behind the firmware",
                .open = {},
                .open_transport = open_rtl_transport,
                .check = check_compiled_core});
}

}  // namespace tpuemu
