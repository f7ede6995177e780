// Violation: config is below device.
#include "tpuemu/config/config.h"
#include "tpuemu/base/error.h"
#include "tpuemu/device/device.h"
#include "tpuemu/sim/core_sim.h"  // not a host layer: not checked here
