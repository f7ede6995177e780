// SPDX-License-Identifier: Apache-2.0
// Backend selection by name: each backend lives in its own folder and library, and a program's
// backend list registers them (backend_registry.h); open_device() opens one and checks its CONFIG
// against the preset. open_device() by name alone, over built_in_device_backends(), is defined
// with that list.
#include <fmt/format.h>

#include "tpuemu/config/config.h"
#include "tpuemu/device/device.h"

#include "tpuemu/device/backend_registry.h"

namespace tpuemu {

namespace {

void check_config(const Device& dev, const Preset& preset) {
  const std::uint32_t want = preset.config_csr();
  const DeviceInfo& info = dev.info();
  if (info.config != want)
    throw Error("device",
                fmt::format("backend {}: the core reports CONFIG 0x{:08x} (DIM {}, {} VMEM rows, "
                            "{} ACC rows) but preset '{}' expects 0x{:08x}",
                            info.backend, info.config, info.dim, info.vmem_rows, info.acc_rows,
                            preset.name, want));
  if (info.smem_words != preset.smem_words)
    throw Error("device",
                fmt::format("backend {}: the core reports {} SMEM words but preset '{}' has {}",
                            info.backend, info.smem_words, preset.name, preset.smem_words));
}

}  // namespace

std::unique_ptr<Device> open_device(const DeviceBackendRegistry& registry, std::string_view backend,
                                    const Preset& preset, const DeviceOptions& options) {
  std::unique_ptr<Device> dev = registry.open(backend, preset, options);
  if (options.check_config) check_config(*dev, preset);
  return dev;
}

}  // namespace tpuemu
