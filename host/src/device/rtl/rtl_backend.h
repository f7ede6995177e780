// The in-process "rtl" backend: the Verilated core of the preset behind the firmware's simulator
// HAL. Compiled only when the Verilated core (CMake target tpuemu_sim) exists; open_device() picks
// it for the name "rtl".
#pragma once

#include <memory>

#include "tpuemu/device/device.h"

namespace tpuemu {

struct Preset;

namespace detail {

// Throws Error "device: backend rtl: ..." when the preset has no Verilated core in this build or
// the core cannot be started.
std::unique_ptr<Device> open_rtl_device(const Preset& preset, const DeviceOptions& options);

}  // namespace detail
}  // namespace tpuemu
