// SPDX-License-Identifier: Apache-2.0
// RtlCoreModel::make: the factory keyed on the preset name, from the generated table
// (rtl_core_factories.h: one entry per preset of TPUEMU_CORE_PRESETS, rtl/CMakeLists.txt).
#include <algorithm>
#include <stdexcept>

#include "rtl_core_factories.h"

namespace tpuemu::tlm {

std::vector<std::string> RtlCoreModel::presets() {
  std::vector<std::string> names;
  for (const RtlCoreFactory& f : kRtlCoreFactories) names.emplace_back(f.preset);
  std::sort(names.begin(), names.end());
  return names;
}

std::unique_ptr<RtlCoreModel> RtlCoreModel::make(const std::string& preset, BeatPort& port) {
  for (const RtlCoreFactory& f : kRtlCoreFactories) {
    if (f.preset == preset) return f.make(port);
  }
  std::string known;
  for (const std::string& name : presets()) known += (known.empty() ? "" : ", ") + name;
  throw std::invalid_argument("rtl core: no Verilated core for preset '" + preset +
                              "' in this build (built: " + known + ")");
}

}  // namespace tpuemu::tlm
