// SPDX-License-Identifier: Apache-2.0
// The C++ reference of a model (model.h): naive loops over NHWC tensors, what docs/workloads.md
// says each layer computes, the oracle for bit-exact checks of the compiled programs.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "tpuemu/base/stop.h"
#include "tpuemu/compile/model.h"

namespace tpuemu {

// One layer's parameters. weights: reduction() x out.channels int8 row-major, rows ordered
// (ky, kx, c) (for a flattening dense: the input's NHWC order); bias: out.channels int32.
struct LayerParams {
  std::vector<std::int8_t> weights;
  std::vector<std::int32_t> bias;
};

// A tensor's values: rows x channels, row-major, rows = batch x height x width (NHWC).
struct ReferenceTensor {
  std::vector<std::int8_t> int8;
  std::vector<std::int32_t> int32;  // the last layer with int32_output
};

// Runs `input` (batch samples) through every layer. Returns every tensor of the model (index 0 the
// input, i + 1 layer i's output) so that a mismatch can be traced to the first layer it appears in.
// `stop` is asked before every sample (Interrupted): a large model's reference takes seconds.
std::vector<ReferenceTensor> model_reference(const Model& model, std::size_t batch, std::span<const std::int8_t> input,
                                             std::span<const LayerParams> params, const StopToken& stop = StopToken{});

// Random parameters of a layer from a generator seeded by the model's seed (weights uniform int8,
// bias uniform in +-2^(shift+2) so it moves outputs by a few units without saturating them).
LayerParams random_layer_params(const ModelLayer& layer, std::uint64_t seed, std::size_t layer_index);
std::vector<std::int8_t> random_input(std::size_t values, std::uint64_t seed, std::size_t request);

}  // namespace tpuemu
