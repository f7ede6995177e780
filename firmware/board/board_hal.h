// SPDX-License-Identifier: Apache-2.0
// The HAL table of a board build (board_hal.cpp).
#pragma once

#include "tpuemu/fw/firmware.h"

const fw_hal* board_hal();
