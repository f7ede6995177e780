// SPDX-License-Identifier: Apache-2.0
// How models split across devices (shard_plan.h, docs/sharding.md): the per-device models' layers
// and gathers, the parts of every tensor, the device data cut from the single-device data, and
// the one-line errors for splits that cannot be made. No device is opened.
#include <gtest/gtest.h>

#include "tpuemu/base/error.h"
#include "tpuemu/shard/shard_plan.h"

namespace tpuemu::shard {
namespace {

// x -> up (d -> 4d) -> down (4d -> d) -> add(x, down): the shape of the shipped FFN.
Model ffn(std::size_t batch, std::size_t d) {
  Model m;
  m.name = "ffn";
  m.batch = batch;
  m.seed = 3;
  m.input = {1, 4, d};
  ModelLayer up;
  up.name = "up";
  up.inputs = {0};
  up.in = m.input;
  up.out = {1, 4, 4 * d};
  up.shift = 7;
  up.bias = true;
  ModelLayer down = up;
  down.name = "down";
  down.inputs = {1};
  down.in = up.out;
  down.out = m.input;
  ModelLayer add;
  add.name = "add";
  add.kind = LayerKind::Add;
  add.inputs = {0, 2};
  add.in = add.out = m.input;
  m.layers = {up, down, add};
  return m;
}

std::vector<std::string> names(const Model& m) {
  std::vector<std::string> n;
  for (const ModelLayer& l : m.layers) n.push_back(l.name);
  return n;
}

TEST(ShardPlan, OneDeviceIsTheModelItself) {
  const Model m = ffn(2, 16);
  for (ShardMode mode : {ShardMode::Batch, ShardMode::Tensor, ShardMode::Fsdp}) {
    const ShardedModel p = plan_shards(m, 2, mode, 1);
    EXPECT_EQ(names(p.model), names(m));
    EXPECT_EQ(p.device_batch, 2u);
    EXPECT_FALSE(p.shard_weights);
  }
}

TEST(ShardPlan, TensorGathersWhereALayerNeedsTheWholeTensor) {
  const Model m = ffn(2, 16);
  const ShardedModel p = plan_shards(m, 2, ShardMode::Tensor, 4);
  // up's parts are gathered for down; down's for the add with the (whole) input
  EXPECT_EQ(names(p.model), (std::vector<std::string>{"up", "up.gather", "down", "down.gather", "add"}));
  EXPECT_EQ(p.model.layers[0].out.channels, 16u);  // 64 / 4
  EXPECT_EQ(p.model.layers[1].kind, LayerKind::Gather);
  EXPECT_EQ(p.model.layers[1].out.channels, 64u);
  EXPECT_FALSE(p.model.layers[1].gather_rows);
  EXPECT_EQ(p.model.layers[2].inputs, std::vector<std::size_t>{2});
  EXPECT_EQ(p.model.layers[2].in.channels, 64u);
  EXPECT_EQ(p.model.layers[4].inputs, (std::vector<std::size_t>{0, 4}));
  EXPECT_EQ(p.tensors[1].split, Split::Channels);
  EXPECT_EQ(p.tensors[2].split, Split::Whole);
  EXPECT_EQ(p.tensors[5].source, 3u);
  EXPECT_EQ(p.tensors[5].split, Split::Whole);
  EXPECT_EQ(p.source_layer, (std::vector<std::size_t>{0, kGatherLayer, 1, kGatherLayer, 2}));
  EXPECT_EQ(p.device_batch, 2u);
}

TEST(ShardPlan, DataParallelSplitsTheBatchAndGathersTheOutput) {
  const Model m = ffn(8, 16);
  for (ShardMode mode : {ShardMode::Batch, ShardMode::Fsdp}) {
    const ShardedModel p = plan_shards(m, 8, mode, 4);
    EXPECT_EQ(names(p.model), (std::vector<std::string>{"up", "down", "add", "add.gather"}));
    EXPECT_EQ(p.device_batch, 2u);
    EXPECT_TRUE(p.model.layers[3].gather_rows);
    EXPECT_EQ(p.model.rows(4, p.device_batch), m.rows(3, 8));  // the gathered output has every row
    EXPECT_EQ(p.tensors[0].split, Split::Rows);
    EXPECT_EQ(p.shard_weights, mode == ShardMode::Fsdp);
  }
}

TEST(ShardPlan, DevicePartsAreCutFromTheSingleDeviceData) {
  const Model m = ffn(2, 16);
  const GlobalData g = global_data(m, 2);
  const ShardedModel p = plan_shards(m, 2, ShardMode::Tensor, 4);
  const std::size_t cout = 64, k = 16;
  for (std::uint32_t d = 0; d < 4; ++d) {
    const DevicePart part = device_part(p, m, g, d, true);
    EXPECT_EQ(part.inputs.front(), g.input);  // tensor mode: every device has the whole input
    const LayerParams& w = part.params[0];
    ASSERT_EQ(w.weights.size(), k * cout / 4);
    for (std::size_t r = 0; r < k; ++r) {
      for (std::size_t c = 0; c < cout / 4; ++c) EXPECT_EQ(w.weights[r * cout / 4 + c], g.params[0].weights[r * cout + d * 16 + c]);
    }
    for (std::size_t c = 0; c < cout / 4; ++c) EXPECT_EQ(w.bias[c], g.params[0].bias[d * 16 + c]);
    // expected: up's columns of device d, the gathered whole, the model's output whole
    const auto& up = part.expected.front()[1].int8;
    ASSERT_EQ(up.size(), m.rows(1, 2) * 16);
    EXPECT_EQ(up[17], g.reference[1].int8[1 * cout + d * 16 + 1]);
    EXPECT_EQ(part.expected.front()[2].int8, g.reference[1].int8);
    EXPECT_EQ(part.expected.front()[5].int8, g.reference[3].int8);
    EXPECT_EQ(part.weight_parts, 1u);
  }
  const ShardedModel f = plan_shards(m, 2, ShardMode::Fsdp, 2);
  const DevicePart second = device_part(f, m, g, 1, false);
  const std::size_t half = m.rows(0, 2) * 16 / 2;
  EXPECT_EQ(second.inputs.front(), std::vector<std::int8_t>(g.input.begin() + static_cast<std::ptrdiff_t>(half), g.input.end()));
  EXPECT_EQ(second.params[0].weights, g.params[0].weights);  // fsdp cuts the device image, not the parameters
  EXPECT_EQ(second.weight_parts, 2u);
  EXPECT_EQ(second.weight_part, 1u);
  EXPECT_FALSE(second.prefetch_weights);
}

TEST(ShardPlan, SplitsThatCannotBeMadeAreOneLineErrors) {
  const Model m = ffn(4, 16);
  auto message = [&](ShardMode mode, std::uint32_t n) {
    try {
      plan_shards(m, 4, mode, n);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message(ShardMode::Batch, 8), "--shard batch: a batch of 4 does not split into 8 equal parts (--devices 8)");
  EXPECT_EQ(message(ShardMode::Fsdp, 3), "--shard fsdp: a batch of 4 does not split into 3 equal parts (--devices 3)");
  EXPECT_EQ(message(ShardMode::Tensor, 3), "--shard tensor: layer 'up' has 64 output channels, which do not split into 3 equal parts");
  EXPECT_EQ(message(ShardMode::Tensor, 0), "--devices 0 is not in 1..64");
  EXPECT_THROW(parse_shard_mode("pipeline"), Error);
  EXPECT_EQ(parse_shard_mode("fsdp"), ShardMode::Fsdp);
}

}  // namespace
}  // namespace tpuemu::shard
