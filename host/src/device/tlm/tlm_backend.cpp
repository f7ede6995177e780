// SPDX-License-Identifier: Apache-2.0
// The "tlm" and "tlm-at" backends: the SystemC/TLM-2.0 model of the core (sim/tlm,
// docs/systemc.md) behind the firmware's simulator HAL, like the Verilated core. It simulates any
// preset - the model takes the preset's sizes at run time, no core is compiled per preset - with
// the memory timed as the preset says. "tlm" codes the memory port loosely timed (b_transport,
// temporal decoupling), "tlm-at" approximately timed (the 4-phase base protocol, synchronised
// every cycle); both give the same cycles. "tlm-cycle" is "tlm" with the model's fast paths off
// (every cycle stepped in full): slower, the same cycles and counters - what they are checked
// against, and a way to rule them out when a result looks wrong.
#include <stdexcept>

#include <fmt/format.h>

#include "tpuemu/device/backend_registry.h"
#include "../sim_core_transport.h"
#include "tpuemu/base/error.h"
#include "tpuemu/sim_setup/core_shape.h"
#include "tpuemu/tlm/tlm_core_sim.h"

// libsystemc.so brings a main() that calls sc_main(); every program linking the tlm backend has
// its own main(), which the linker takes first, so this one is never called.
extern "C" int sc_main(int, char**) { return 1; }

namespace tpuemu {
namespace {

struct TlmVariant {
  std::string name;
  bool approximately_timed = false;
  bool fast_paths = true;
};

std::unique_ptr<Transport> open_tlm_transport(const Preset& preset, const DeviceOptions& options, const TlmVariant& v) {
  const std::string& name = v.name;
  if (!options.trace_fst.empty()) {
    throw Error("device", fmt::format("backend {}: a waveform trace needs the rtl backend (the model has no signals)", name));
  }
  tlm::TlmSimOptions o;
  o.shape = core_shape_from(preset);
  o.clock_ghz = preset.clock_ghz;
  if (options.board_shim_max_latency) {
    throw Error("device", fmt::format("backend {}: the board top's DRAM shim is RTL; use --backend rtl", name));
  }
  o.memory = memory_config_for(preset, options);
  o.approximately_timed = v.approximately_timed;
  o.fast_paths = v.fast_paths;
  SimCoreTransport::Parts parts;
  try {
    parts.core = tlm::make_tlm_core_sim(o);
  } catch (const std::exception& e) {
    throw Error("device", fmt::format("backend {}: cannot start the model for preset '{}': {}", name, preset.name, e.what()));
  }
  parts.hal = std::make_unique<fw::SimHal>(*parts.core, preset.smem_words);
  return std::make_unique<SimCoreTransport>(std::move(parts), name, memory_source_of(preset, "TLM HBM timing model"));
}

}  // namespace

// Called by the backend list of each program that links it (host/src/device/CMakeLists.txt).
void register_tlm_backend(DeviceBackendRegistry& registry) {
  registry.add({.name = "tlm",
                .description = "SystemC/TLM-2.0 model of the core and its memory (loosely timed), behind the firmware",
                .open = {},
                .open_transport = [](const Preset& p, const DeviceOptions& o) { return open_tlm_transport(p, o, {"tlm"}); }});
  registry.add({.name = "tlm-at",
                .description = "the tlm model with the memory port approximately timed (TLM-2.0 base protocol)",
                .open = {},
                .open_transport = [](const Preset& p, const DeviceOptions& o) {
                  return open_tlm_transport(p, o, {"tlm-at", true});
                }});
  registry.add({.name = "tlm-cycle",
                .description = "the tlm model stepped cycle by cycle, its fast paths off (the same cycles, slower)",
                .open = {},
                .open_transport = [](const Preset& p, const DeviceOptions& o) {
                  return open_tlm_transport(p, o, {"tlm-cycle", false, false});
                }});
}

}  // namespace tpuemu
