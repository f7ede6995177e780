// SPDX-License-Identifier: Apache-2.0
// Device backends by name, as IREE's HAL drivers register themselves: each backend folder
// (host/src/device/<backend>/) is its own library with one registration function,
// `void register_<backend>_backend(DeviceBackendRegistry&)`, that adds its name, a description and
// a factory; open_device() looks the name up here. Nothing in the registry names a backend's
// types, so the layers above never depend on one backend, and a program links only the backends
// of its list (host/src/device/CMakeLists.txt).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tpuemu/config/config.h"
#include "tpuemu/device/device.h"

namespace tpuemu {

struct DeviceBackend {
  // "rtl", or a scheme ending in "://" ("remote://") that matches every name starting with it.
  std::string name;
  std::string description;
  // Opens a device for `backend` (the full name the user gave, e.g. "remote://host:7000").
  std::function<std::unique_ptr<Device>(std::string_view backend, const Preset& preset,
                                        const DeviceOptions& options)>
      open;
  // In-process backends only: the transport to their firmware, for a server that forwards frames
  // to it (`tpuemu serve`). Empty for backends that are themselves remote.
  std::function<std::unique_ptr<Transport>(const Preset& preset, const DeviceOptions& options)> open_transport;
  // Optional: throws what open_transport would throw for this preset and these options that can be
  // known without opening a device (a core this build has not compiled), so that a server refuses
  // to start rather than fail every client.
  std::function<void(const Preset& preset, const DeviceOptions& options)> check;
};

class DeviceBackendRegistry {
 public:
  // Throws Error when the name is empty, registered already, or no factory is given. A backend
  // with only open_transport opens its Device as make_firmware_device(open_transport(...)).
  void add(DeviceBackend backend);
  // The backend for a name (exact, or by scheme prefix); nullptr when none matches.
  const DeviceBackend* find(std::string_view backend) const;
  const std::vector<DeviceBackend>& backends() const { return backends_; }
  // "fake, rtl": the registered names, sorted, for messages.
  std::string names() const;
  // Opens the named backend; throws Error "unknown backend 'x' (known: ...)" for no match.
  std::unique_ptr<Device> open(std::string_view backend, const Preset& preset,
                               const DeviceOptions& options) const;
  // The transport of an in-process backend; throws Error naming those that have one otherwise.
  std::unique_ptr<Transport> open_transport(std::string_view backend, const Preset& preset,
                                            const DeviceOptions& options) const;
  // Throws as open_transport would for a backend that is not in-process, then the backend's check.
  void check_transport(std::string_view backend, const Preset& preset, const DeviceOptions& options) const;

 private:
  const DeviceBackend& in_process(std::string_view backend) const;
  std::vector<DeviceBackend> backends_;
};

// The backends built into this binary (a new registry each call: there is no global one). Defined
// by the program's generated backend list (tpuemu_device: every backend this build enables).
DeviceBackendRegistry built_in_device_backends();

// open_device() over a given registry: opens the named backend and checks its CONFIG against the
// preset (options.check_config).
std::unique_ptr<Device> open_device(const DeviceBackendRegistry& registry, std::string_view backend,
                                    const Preset& preset, const DeviceOptions& options = {});

}  // namespace tpuemu
