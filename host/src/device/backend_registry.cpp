// SPDX-License-Identifier: Apache-2.0
#include "tpuemu/device/backend_registry.h"

#include <algorithm>

#include <fmt/format.h>

namespace tpuemu {

void DeviceBackendRegistry::add(DeviceBackend backend) {
  if (backend.name.empty()) throw Error("device", "a device backend needs a name");
  if (!backend.open && backend.open_transport) {
    backend.open = [factory = backend.open_transport](std::string_view, const Preset& preset,
                                                      const DeviceOptions& options) {
      FirmwareDeviceOptions fo;
      fo.max_chunk = options.max_chunk;
      fo.smem_words = preset.smem_words;
      return make_firmware_device(factory(preset, options), fo);
    };
  }
  if (!backend.open) throw Error("device", fmt::format("device backend '{}' has no factory", backend.name));
  if (find(backend.name) != nullptr) {
    throw Error("device", fmt::format("device backend '{}' is registered twice", backend.name));
  }
  backends_.push_back(std::move(backend));
}

const DeviceBackend* DeviceBackendRegistry::find(std::string_view backend) const {
  for (const DeviceBackend& b : backends_) {
    const bool scheme = b.name.ends_with("://");
    if (scheme ? backend.starts_with(b.name) : backend == b.name) return &b;
  }
  return nullptr;
}

std::string DeviceBackendRegistry::names() const {
  std::vector<std::string> names;
  for (const DeviceBackend& b : backends_) names.push_back(b.name.ends_with("://") ? b.name + "host:port" : b.name);
  std::sort(names.begin(), names.end());
  return fmt::format("{}", fmt::join(names, ", "));
}

std::unique_ptr<Device> DeviceBackendRegistry::open(std::string_view backend, const Preset& preset,
                                                    const DeviceOptions& options) const {
  const DeviceBackend* b = find(backend);
  if (b == nullptr) throw Error("device", fmt::format("unknown backend '{}' (known: {})", backend, names()));
  return b->open(backend, preset, options);
}

const DeviceBackend& DeviceBackendRegistry::in_process(std::string_view backend) const {
  const DeviceBackend* b = find(backend);
  if (b == nullptr || !b->open_transport) {
    std::vector<std::string> local;
    for (const DeviceBackend& x : backends_) {
      if (x.open_transport) local.push_back(x.name);
    }
    std::sort(local.begin(), local.end());
    throw Error("device", fmt::format("backend '{}' cannot be served: it is not an in-process backend (in-process: {})",
                                      backend, fmt::join(local, ", ")));
  }
  return *b;
}

std::unique_ptr<Transport> DeviceBackendRegistry::open_transport(std::string_view backend, const Preset& preset,
                                                                 const DeviceOptions& options) const {
  return in_process(backend).open_transport(preset, options);
}

void DeviceBackendRegistry::check_transport(std::string_view backend, const Preset& preset,
                                            const DeviceOptions& options) const {
  const DeviceBackend& b = in_process(backend);
  if (b.check) b.check(preset, options);
}

}  // namespace tpuemu
