// SPDX-License-Identifier: Apache-2.0
// Force-included into every translation unit of the product's Verilated models (-include):
// Verilator's VL_PRINTF is redirected here (sim/src/verilator_hooks.cpp).
#pragma once

int tpuemu_vl_printf(const char* format, ...) __attribute__((format(printf, 1, 2)));
