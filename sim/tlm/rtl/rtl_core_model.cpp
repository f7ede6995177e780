// SPDX-License-Identifier: Apache-2.0
// RtlCoreModel::make: the factory keyed on the preset name (the presets rtl/CMakeLists.txt
// verilates: TPUEMU_CORE_PRESETS).
#include <functional>
#include <map>
#include <stdexcept>

#include "rtl_core_registry.h"

namespace tpuemu::tlm {
namespace {

using Factory = std::function<std::unique_ptr<RtlCoreModel>(BeatPort&)>;

const std::map<std::string, Factory>& factories() {
  static const std::map<std::string, Factory> table = {
      {"small", make_rtl_core_small},
      {"default", make_rtl_core_default},
#ifdef TPUEMU_HAVE_V4
      {"tpu-v4-like", make_rtl_core_tpu_v4_like},
#endif
  };
  return table;
}

}  // namespace

std::vector<std::string> RtlCoreModel::presets() {
  std::vector<std::string> names;
  for (const auto& [name, factory] : factories()) names.push_back(name);
  return names;
}

std::unique_ptr<RtlCoreModel> RtlCoreModel::make(const std::string& preset, BeatPort& port) {
  const auto it = factories().find(preset);
  if (it == factories().end()) {
    std::string known;
    for (const auto& [name, factory] : factories()) known += (known.empty() ? "" : ", ") + name;
    throw std::invalid_argument("rtl core: no Verilated core for preset '" + preset + "' in this build (built: " +
                                known + ")");
  }
  return it->second(port);
}

}  // namespace tpuemu::tlm
