// SPDX-License-Identifier: Apache-2.0
// Layer hlo, private: what the reader takes from the size algebra of shape_bytes.cpp - the bytes
// an array stores under its own tiles, exact, so that a layout whose stored size does not fit 64
// bits is refused at its T(...) instead of counted saturated.
#pragma once

#include <cstdint>
#include <optional>

#include "tpuemu/hlo/hlo_module.h"

namespace tpuemu::hlo::detail {

// The bytes `shape` (an array) stores under its layout's T(...) tiles, SC(...) splits (the
// largest part), L(n) tail padding and E(n) element size, as shape_bytes counts them when tiled;
// nullopt when they do not fit 64 bits. Without tiles: its dense bytes at the stored element size
// (XLA splits and pads only tiled arrays).
std::optional<std::uint64_t> own_tiled_bytes(const Shape& shape);

// The index tables of a tuple shape: one 8-byte pointer per element of every tuple in it, at
// every nesting level (XLA's buffer assignment gives each tuple-shaped index its own table).
// `nested` false: the outermost tuple's table only.
std::uint64_t index_table_bytes(const Shape& shape, bool nested = true);

}  // namespace tpuemu::hlo::detail
