// SPDX-License-Identifier: Apache-2.0
#include "tpuemu/compile/model_reference.h"

#include <algorithm>
#include <random>

#include <fmt/format.h>

#include "tpuemu/base/error.h"
#include "tpuemu/compile/reference.h"

namespace tpuemu {
namespace {

// int32 accumulators of a dense or conv2d layer: rows = batch x out pixels, cols = out channels.
std::vector<std::int32_t> accumulate(const ModelLayer& l, std::size_t batch, std::span<const std::int8_t> x,
                                     const LayerParams& p, const StopToken& stop) {
  const std::size_t cin = l.in.channels, cout = l.out.channels;
  std::vector<std::int32_t> acc(batch * l.out.pixels() * cout, 0);
  for (std::size_t n = 0; n < batch; ++n) {
    stop.throw_if_requested("the C++ reference");
    for (std::size_t oy = 0; oy < l.out.height; ++oy) {
      for (std::size_t ox = 0; ox < l.out.width; ++ox) {
        std::int32_t* out = &acc[((n * l.out.height + oy) * l.out.width + ox) * cout];
        for (std::size_t ky = 0; ky < l.kernel_h; ++ky) {
          for (std::size_t kx = 0; kx < l.kernel_w; ++kx) {
            // Input pixel (iy, ix); outside the image it is the zero padding. A dense layer is a
            // 1x1 convolution, a flattening dense one whose kernel covers the whole image.
            const std::int64_t iy = static_cast<std::int64_t>(oy * l.stride + ky) - static_cast<std::int64_t>(l.padding);
            const std::int64_t ix = static_cast<std::int64_t>(ox * l.stride + kx) - static_cast<std::int64_t>(l.padding);
            if (iy < 0 || ix < 0 || iy >= static_cast<std::int64_t>(l.in.height) ||
                ix >= static_cast<std::int64_t>(l.in.width)) {
              continue;
            }
            const std::size_t pix = static_cast<std::size_t>(iy) * l.in.width + static_cast<std::size_t>(ix);
            const std::int8_t* in = &x[(n * l.in.pixels() + pix) * cin];
            const std::int8_t* w = &p.weights[(ky * l.kernel_w + kx) * cin * cout];
            for (std::size_t c = 0; c < cin; ++c) {
              const std::int32_t v = in[c];
              for (std::size_t o = 0; o < cout; ++o) {
                out[o] = static_cast<std::int32_t>(static_cast<std::uint32_t>(out[o]) +
                                                   static_cast<std::uint32_t>(v * w[c * cout + o]));
              }
            }
          }
        }
      }
    }
  }
  return acc;
}

}  // namespace

std::vector<ReferenceTensor> model_reference(const Model& model, std::size_t batch, std::span<const std::int8_t> input,
                                             std::span<const LayerParams> params, const StopToken& stop) {
  if (params.size() != model.layers.size()) throw Error("model reference: one LayerParams per layer expected");
  if (input.size() != model.rows(0, batch) * model.input.channels) {
    throw Error(fmt::format("model reference: input has {} values, the model takes {}", input.size(),
                            model.rows(0, batch) * model.input.channels));
  }
  std::vector<ReferenceTensor> t(model.layers.size() + 1);
  t[0].int8.assign(input.begin(), input.end());
  for (std::size_t i = 0; i < model.layers.size(); ++i) {
    const ModelLayer& l = model.layers[i];
    ReferenceTensor& out = t[i + 1];
    if (l.kind == LayerKind::Gather) {
      throw Error(fmt::format("model reference: layer '{}' gathers from other devices; the reference runs the unsharded model", l.name));
    }
    if (l.kind == LayerKind::Add) {
      const auto& a = t[l.inputs[0]].int8;
      const auto& b = t[l.inputs[1]].int8;
      out.int8 = add_saturate(a, b, l.relu);
      continue;
    }
    std::vector<std::int32_t> acc = accumulate(l, batch, t[l.inputs[0]].int8, params[i], stop);
    if (l.int32_output) {
      out.int32 = std::move(acc);
      continue;
    }
    const std::size_t cout = l.out.channels;
    out.int8.resize(acc.size());
    for (std::size_t j = 0; j < acc.size(); ++j) {
      const std::int32_t bias = l.bias ? params[i].bias[j % cout] : 0;
      out.int8[j] = requantize(acc[j], bias, l.scale, l.shift, l.relu);
    }
  }
  return t;
}

LayerParams random_layer_params(const ModelLayer& layer, std::uint64_t seed, std::size_t layer_index) {
  LayerParams p;
  if (!has_weights(layer.kind)) return p;
  std::mt19937_64 rng(seed * 1000003u + layer_index + 1);
  std::uniform_int_distribution<int> w(-128, 127);
  p.weights.resize(layer.reduction() * layer.out.channels);
  for (auto& v : p.weights) v = static_cast<std::int8_t>(w(rng));
  if (layer.bias) {
    const std::int64_t range = std::int64_t{1} << std::min(layer.shift + 2, 30u);
    std::uniform_int_distribution<std::int64_t> b(-range, range);
    p.bias.resize(layer.out.channels);
    for (auto& v : p.bias) v = static_cast<std::int32_t>(b(rng));
  }
  return p;
}

std::vector<std::int8_t> random_input(std::size_t values, std::uint64_t seed, std::size_t request) {
  std::mt19937_64 rng(seed ^ (0x9E3779B97F4A7C15ull * (request + 1)));
  std::uniform_int_distribution<int> d(-128, 127);
  std::vector<std::int8_t> v(values);
  for (auto& x : v) x = static_cast<std::int8_t>(d(rng));
  return v;
}

}  // namespace tpuemu
