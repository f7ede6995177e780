// SPDX-License-Identifier: Apache-2.0
// Layer hlo_exec: a JAX/XLA program run on the device. An ENTRY made only of dense and
// convolution layers (dot or convolution, a broadcast bias add, a ReLU as maximum with a broadcast
// zero), residual adds, reshapes and bitcasts is translated into a tpuemu Model, which the model
// compiler runs int8-quantised like a model file (docs/hlo.md, "Executing on the device").
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "tpuemu/compile/model.h"
#include "tpuemu/hlo/hlo_module.h"

namespace tpuemu::hlo_exec {

struct HloModel {
  Model model;
  // The element types of ENTRY's arrays as the program declares them ("f32", "bf16"), in order of
  // first appearance: what the int8 run stands in for.
  std::vector<std::string> original_dtypes;
};

// The opcodes an executable ENTRY may hold, in the order messages list them.
const std::vector<std::string_view>& executable_opcodes();

// The model of `module`'s ENTRY: one layer per dot, convolution or add of two activations, with the
// bias add and ReLU that follow a dot or convolution folded into its layer. Weights, biases and the
// input are generated from the model's seed (the values of parameters and constants are not read).
// Throws Error "SOURCE:LINE:COL: cause" at the first instruction that cannot run: an opcode not in
// executable_opcodes() ("opcode 'exponential' is not supported on the device (supported: ...)"),
// or a supported opcode in a form the compiler has no layer for.
HloModel model_from_hlo(const hlo::Module& module);

}  // namespace tpuemu::hlo_exec
