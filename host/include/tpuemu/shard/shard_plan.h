// SPDX-License-Identifier: Apache-2.0
// How a model is split across N devices (docs/sharding.md, "Shard modes"): every device runs the
// same per-device model - the original layers on its part of the data, plus gather layers where
// it needs what the other devices computed - and this plan says which part of which tensor of the
// unsharded model each of its tensors is, so its inputs, parameters and expected values are cut
// from the single-device ones and the results stay bit-exact against the single-device reference.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "tpuemu/compile/model.h"
#include "tpuemu/compile/model_reference.h"
#include "tpuemu/run/runner.h"

namespace tpuemu::shard {

// batch: data parallel, each device 1/N of the batch and all weights. tensor: each dense/conv2d
// layer's output channels split (Megatron's column split), activations gathered where a layer
// needs all of them. fsdp: data parallel with 1/N of every weight stored per device, each layer's
// weights gathered just before (or, with prefetch, while the layer before) it runs.
enum class ShardMode { Batch, Tensor, Fsdp };
std::string_view to_string(ShardMode mode);
// Throws Error "unknown shard mode 'x' (batch, tensor, fsdp)".
ShardMode parse_shard_mode(std::string_view text);

// Which part of a tensor of the unsharded model a device holds: all of it, its rows (samples
// d*b .. (d+1)*b - 1) or its channels (d*C/N .. (d+1)*C/N - 1).
enum class Split { Whole, Rows, Channels };

struct TensorPart {
  std::size_t source = 0;  // the tensor of the unsharded model
  Split split = Split::Whole;
};

inline constexpr std::size_t kGatherLayer = static_cast<std::size_t>(-1);

struct ShardedModel {
  ShardMode mode = ShardMode::Batch;
  std::uint32_t devices = 1;
  std::size_t batch = 0, device_batch = 0;  // samples in all, per device
  Model model;                              // each device's model
  std::vector<TensorPart> tensors;          // per tensor of `model`
  std::vector<std::size_t> source_layer;    // per layer of `model`: the unsharded layer, or kGatherLayer
  bool shard_weights = false;               // fsdp
};

// Throws Error naming the cause: more devices than the batch (batch, fsdp) or a layer's output
// channels (tensor) split into equal parts.
ShardedModel plan_shards(const Model& model, std::size_t batch, ShardMode mode, std::uint32_t devices);

// The unsharded run's data, generated from the model's seed exactly as run_model does.
struct GlobalData {
  std::vector<std::int8_t> input;
  std::vector<LayerParams> params;
  std::vector<ReferenceTensor> reference;  // every tensor of the unsharded model
};
GlobalData global_data(const Model& model, std::size_t batch);

// Device d's inputs, parameters and expected values (weight part d of N with fsdp).
DevicePart device_part(const ShardedModel& plan, const Model& model, const GlobalData& data, std::uint32_t device,
                       bool prefetch_weights);

}  // namespace tpuemu::shard
