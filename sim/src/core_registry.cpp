// SPDX-License-Identifier: Apache-2.0
#include "core_registry.h"

#include <functional>
#include <map>
#include <stdexcept>
#include <string>

namespace tpuemu::sim {
namespace {

using Factory = std::function<std::unique_ptr<CoreSim>(const MemoryModelConfig&)>;

const std::map<std::string, Factory>& factories() {
  static const std::map<std::string, Factory> table = {
      {"small", make_core_small},
      {"default", make_core_default},
#ifdef TPUEMU_HAVE_V4
      {"tpu-v4-like", make_core_tpu_v4_like},
#endif
  };
  return table;
}

}  // namespace

bool core_sim_available(const std::string& preset) { return factories().count(preset) != 0; }

std::unique_ptr<CoreSim> make_core_sim(const std::string& preset, const MemoryModelConfig& mem) {
  const auto it = factories().find(preset);
  if (it == factories().end()) {
    std::string known;
    for (const auto& [name, factory] : factories()) known += (known.empty() ? "" : ", ") + name;
    throw std::invalid_argument("rtl backend: no Verilated core for preset '" + preset +
                                "' in this build (built: " + known + ")");
  }
  return it->second(mem);
}

}  // namespace tpuemu::sim
