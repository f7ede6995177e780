// SPDX-License-Identifier: Apache-2.0
// Reference model (see reference.h). Correctness over speed: this is the oracle. The element
// arithmetic of each opcode is the one definition in tpuemu/spec/arith.h, which the RTL is tested
// against; this file adds the shapes, loops and checks around it.
#include "tpuemu/compile/reference.h"

#include <fmt/format.h>

#include "tpuemu/base/error.h"
#include "tpuemu/spec/arith.h"

namespace tpuemu {
namespace {

void check_size(std::string_view what, std::size_t got, std::size_t rows, std::size_t cols) {
  if (got != rows * cols) {
    throw Error(what, fmt::format("expected {}x{} = {} elements, got {}", rows, cols, rows * cols, got));
  }
}

// Runs every layer but the last fully (matmul + requantize); returns the int8 input of the last.
std::vector<std::int8_t> run_hidden(std::span<const std::int8_t> x, std::size_t batch,
                                    std::span<const MlpLayer> layers) {
  if (layers.empty()) throw Error("mlp_reference", "no layers");
  check_size("mlp input", x.size(), batch, layers[0].in_features);
  std::vector<std::int8_t> act(x.begin(), x.end());
  for (std::size_t i = 0; i < layers.size(); ++i) {
    const MlpLayer& l = layers[i];
    const std::string where = fmt::format("mlp layer {}", i);
    if (i > 0 && l.in_features != layers[i - 1].out_features) {
      throw Error(where, fmt::format("in_features {} does not match the previous out_features {}",
                                     l.in_features, layers[i - 1].out_features));
    }
    check_size(where + " weights", l.weights.size(), l.in_features, l.out_features);
  }
  for (std::size_t i = 0; i + 1 < layers.size(); ++i) {
    const MlpLayer& l = layers[i];
    const auto acc = matmul_int8(act, l.weights, batch, l.in_features, l.out_features);
    act = requantize(acc, l.scale, l.shift, l.relu);
  }
  return act;
}

}  // namespace

std::vector<std::int32_t> matmul_int8(std::span<const std::int8_t> a, std::span<const std::int8_t> b,
                                      std::size_t m, std::size_t k, std::size_t n) {
  check_size("matmul A", a.size(), m, k);
  check_size("matmul B", b.size(), k, n);
  std::vector<std::int32_t> c(m * n);
  for (std::size_t i = 0; i < m; ++i) {
    for (std::size_t j = 0; j < n; ++j) c[i * n + j] = spec::arith::mxu_lane(&a[i * k], &b[j], k, n);
  }
  return c;
}

std::int8_t requantize(std::int32_t x, std::int32_t scale, unsigned shift, bool relu) {
  // The hardware sees 6 bits; a larger shift here is a caller's mistake, not a value to truncate.
  if (shift > spec::arith::kShiftMask) throw Error("requantize", fmt::format("shift {} must be < 64", shift));
  return spec::arith::vquant(x, scale, shift, relu);
}

std::vector<std::int8_t> requantize(std::span<const std::int32_t> x, std::int32_t scale,
                                    unsigned shift, bool relu) {
  std::vector<std::int8_t> out(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) out[i] = requantize(x[i], scale, shift, relu);
  return out;
}

std::int8_t requantize(std::int32_t x, std::int32_t bias, std::int32_t scale, unsigned shift, bool relu) {
  return requantize(spec::arith::add_wrap32(x, bias), scale, shift, relu);
}

std::vector<std::int8_t> requantize(std::span<const std::int32_t> x, std::span<const std::int32_t> bias,
                                    std::int32_t scale, unsigned shift, bool relu) {
  if (bias.empty() || x.size() % bias.size() != 0) {
    throw Error("requantize", fmt::format("{} values are not rows of {} biased lanes", x.size(), bias.size()));
  }
  std::vector<std::int8_t> out(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) out[i] = requantize(x[i], bias[i % bias.size()], scale, shift, relu);
  return out;
}

std::int8_t add_saturate(std::int8_t a, std::int8_t b, bool relu) {
  return spec::arith::vadd(a, b, relu);
}

std::vector<std::int8_t> add_saturate(std::span<const std::int8_t> a, std::span<const std::int8_t> b,
                                      bool relu) {
  if (a.size() != b.size()) {
    throw Error("add_saturate", fmt::format("sizes differ: {} and {}", a.size(), b.size()));
  }
  std::vector<std::int8_t> out(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) out[i] = add_saturate(a[i], b[i], relu);
  return out;
}

std::vector<std::int8_t> mlp_reference(std::span<const std::int8_t> x, std::size_t batch,
                                       std::span<const MlpLayer> layers) {
  const auto act = run_hidden(x, batch, layers);
  const MlpLayer& last = layers.back();
  const auto acc = matmul_int8(act, last.weights, batch, last.in_features, last.out_features);
  return requantize(acc, last.scale, last.shift, last.relu);
}

std::vector<std::int32_t> mlp_reference_int32(std::span<const std::int8_t> x, std::size_t batch,
                                              std::span<const MlpLayer> layers) {
  const auto act = run_hidden(x, batch, layers);
  const MlpLayer& last = layers.back();
  return matmul_int8(act, last.weights, batch, last.in_features, last.out_features);
}

}  // namespace tpuemu
