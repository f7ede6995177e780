// SPDX-License-Identifier: Apache-2.0
// The C++ reference model: the oracle for bit-exact checks of the RTL and of compiled programs.
// Deliberately naive (triple loops, no tiling) so that it is obviously what docs/isa.md says. The
// per-element arithmetic is tpuemu/spec/arith.h, the one definition every model of the core shares.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace tpuemu {

// C = A . B with A m x k and B k x n int8 row-major; C m x n int32 row-major. Accumulation wraps
// modulo 2^32 like the MXU's int32 adders (only reachable for k > 2^17).
// Throws Error if a span's size does not match its shape.
std::vector<std::int32_t> matmul_int8(std::span<const std::int8_t> a, std::span<const std::int8_t> b,
                                      std::size_t m, std::size_t k, std::size_t n);

// VQUANT of docs/isa.md for one lane, spec::arith::vquant: the 64-bit product, rounded half up
// by the shift (a wrapping add, as the hardware's), saturated to int8, then ReLU.
// shift must be < 64 (it is a 6-bit field); throws Error otherwise.
std::int8_t requantize(std::int32_t x, std::int32_t scale, unsigned shift, bool relu);
std::vector<std::int8_t> requantize(std::span<const std::int32_t> x, std::int32_t scale,
                                    unsigned shift, bool relu);
// VQUANT with its bias flag: x' = x + bias (int32, wrapping) first, then as above.
std::int8_t requantize(std::int32_t x, std::int32_t bias, std::int32_t scale, unsigned shift, bool relu);
// x is rows x bias.size() (row-major, one ACC row per bias.size() lanes): lane n adds bias[n].
// Throws Error if x.size() is not a multiple of bias.size().
std::vector<std::int8_t> requantize(std::span<const std::int32_t> x, std::span<const std::int32_t> bias,
                                    std::int32_t scale, unsigned shift, bool relu);

// VADD of docs/isa.md for one lane, spec::arith::vadd: the sum saturated to int8, then ReLU.
std::int8_t add_saturate(std::int8_t a, std::int8_t b, bool relu);
// Element-wise; throws Error if the sizes differ.
std::vector<std::int8_t> add_saturate(std::span<const std::int8_t> a, std::span<const std::int8_t> b,
                                      bool relu);

// One fully connected layer without bias: y = requantize(x . W, scale, shift, relu).
struct MlpLayer {
  std::size_t in_features = 0;
  std::size_t out_features = 0;
  std::vector<std::int8_t> weights;  // in_features x out_features, row-major (W[k][n])
  std::int32_t scale = 1;
  unsigned shift = 0;
  bool relu = true;
};

// Runs x (batch x layers[0].in_features, int8 row-major) through every layer, requantising after
// each; returns batch x layers.back().out_features int8. Throws Error on shape mismatches
// (naming the layer) or an empty layer list.
std::vector<std::int8_t> mlp_reference(std::span<const std::int8_t> x, std::size_t batch,
                                       std::span<const MlpLayer> layers);
// Same, but the last layer's int32 accumulators are returned as they are (its scale, shift and
// relu are ignored): the "int32 out" variant where the result is read back from ACC.
std::vector<std::int32_t> mlp_reference_int32(std::span<const std::int8_t> x, std::size_t batch,
                                              std::span<const MlpLayer> layers);

}  // namespace tpuemu
