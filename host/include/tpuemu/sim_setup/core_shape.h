// SPDX-License-Identifier: Apache-2.0
// A preset as the core's shape (sim::CoreShape, sim/include/tpuemu/sim/clocked_core.h): the sizes
// tpu_top is elaborated with, which every model of the core takes (the tlm backend's model, the
// fake backend's functional core; the Verilated cores were verilated with them).
#pragma once

#include "tpuemu/config/config.h"
#include "tpuemu/sim/clocked_core.h"

namespace tpuemu {

sim::CoreShape core_shape_from(const Preset& preset);

}  // namespace tpuemu
