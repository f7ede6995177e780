// SPDX-License-Identifier: Apache-2.0
// What the Verilated models say. Verilator prints $display/$error text and "$stop" notices with
// printf and aborts the process on $fatal; the product's models are built with Verilator's user
// hooks instead (VL_PRINTF, VL_USER_STOP, VL_USER_FATAL, VL_USER_FINISH: rtl/CMakeLists.txt), which
// collect the text here and never print or abort. The simulator checks after each clock and turns
// an error into an exception, which the device layer reports as one line.
//
// The collection is process-wide because Verilator's hooks are plain functions without a context.
#pragma once

#include <string>

namespace tpuemu::sim {

// True once a model reported an error ($error/$fatal/$stop, a failed assertion) since the last
// take_verilator_error().
bool verilator_error_pending();
// The first error as one line ("hbm_refresh_timer.sv:49: hbm_refresh_timer: 8 REFs postponed (at
// 1234 ps; 7 more messages)"), and forgets all collected text.
std::string take_verilator_error();

}  // namespace tpuemu::sim
