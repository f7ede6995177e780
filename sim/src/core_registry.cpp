// SPDX-License-Identifier: Apache-2.0
// The Verilated cores of this build by preset name: the generated table (core_factories.h, from
// TPUEMU_CORE_PRESETS), then the caller's loader for cores built at run time (core_loader.h).
#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "core_factories.h"
#include "tpuemu/sim/core_loader.h"

namespace tpuemu::sim {
namespace {

const CoreFactory* compiled_core(const std::string& preset) {
  const auto it = std::find_if(kCoreFactories.begin(), kCoreFactories.end(),
                               [&](const CoreFactory& f) { return f.preset == preset; });
  return it == kCoreFactories.end() ? nullptr : &*it;
}

// "default, small": the compiled cores, sorted, for messages.
std::string compiled_names() {
  std::vector<std::string> names;
  for (const CoreFactory& f : kCoreFactories) names.emplace_back(f.preset);
  std::sort(names.begin(), names.end());
  std::string known;
  for (const std::string& name : names) known += (known.empty() ? "" : ", ") + name;
  return known;
}

}  // namespace

bool core_sim_available(const std::string& preset) { return compiled_core(preset) != nullptr; }

std::unique_ptr<CoreSim> make_core_sim(const std::string& preset, const MemoryModelConfig& mem) {
  return make_core_sim(preset, mem, CoreLoader{});
}

std::unique_ptr<CoreSim> make_core_sim(const std::string& preset, const MemoryModelConfig& mem,
                                       const CoreLoader& loader) {
  if (const CoreFactory* f = compiled_core(preset)) return f->make(mem);
  // The one place a preset not compiled in goes on: the loader of cores built at run time.
  if (loader) return loader(preset, mem);
  throw std::invalid_argument("rtl backend: no Verilated core for preset '" + preset +
                              "' in this build (built: " + compiled_names() + ")");
}

}  // namespace tpuemu::sim
