// SPDX-License-Identifier: Apache-2.0
// The registration function of every backend folder (host/src/device/<backend>/), called by
// built_in_device_backends(). A new backend adds its folder, its line here and one call there.
#pragma once

#include "tpuemu/device/backend_registry.h"

namespace tpuemu {

void register_rtl_backend(DeviceBackendRegistry& registry);   // rtl/: the Verilated core
void register_fake_backend(DeviceBackendRegistry& registry);  // fake/: the functional model
void register_remote_backend(DeviceBackendRegistry& registry);  // remote/: TCP to tpuemu serve or a board
void register_tlm_backend(DeviceBackendRegistry& registry);   // tlm/: the SystemC/TLM-2.0 model

}  // namespace tpuemu
