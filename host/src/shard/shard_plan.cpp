// SPDX-License-Identifier: Apache-2.0
#include "tpuemu/shard/shard_plan.h"

#include <optional>

#include <fmt/format.h>

#include "tpuemu/base/error.h"

namespace tpuemu::shard {

std::string_view to_string(ShardMode mode) {
  switch (mode) {
    case ShardMode::Batch: return "batch";
    case ShardMode::Tensor: return "tensor";
    case ShardMode::Fsdp: return "fsdp";
  }
  return "?";
}

ShardMode parse_shard_mode(std::string_view text) {
  if (text == "batch") return ShardMode::Batch;
  if (text == "tensor") return ShardMode::Tensor;
  if (text == "fsdp") return ShardMode::Fsdp;
  throw Error(fmt::format("unknown shard mode '{}' (batch, tensor, fsdp)", text));
}

namespace {

// Builds a device model layer by layer, remembering which device tensor holds which part of which
// unsharded tensor, and inserting a gather wherever a layer needs a whole tensor it only has a
// part of.
class DeviceModelBuilder {
 public:
  DeviceModelBuilder(const Model& model, ShardedModel& plan, Split input) : source_(model), plan_(plan) {
    plan_.model = model;
    plan_.model.layers.clear();
    plan_.tensors = {{0, input}};
    whole_.assign(model.layers.size() + 1, std::nullopt);
    part_.assign(model.layers.size() + 1, std::nullopt);
    (input == Split::Whole ? whole_ : part_)[0] = 0;
  }

  // The device tensor holding `source` whole, gathered from its parts if need be.
  std::size_t whole(std::size_t source) {
    if (whole_[source]) return *whole_[source];
    const std::size_t from = *part_[source];
    const ModelLayer& producer = plan_.model.layers[from - 1];
    const Split split = plan_.tensors[from].split;
    ModelLayer g;
    g.name = source_.tensor_name(source) + ".gather";
    g.kind = LayerKind::Gather;
    g.inputs = {from};
    g.in = producer.out;
    g.out = g.in;
    if (split == Split::Rows) {
      g.out.height *= plan_.devices;
      g.gather_rows = true;
    } else {
      g.out.channels *= plan_.devices;
    }
    g.gather_parts = plan_.devices;
    g.int32_output = producer.int32_output;
    whole_[source] = push(std::move(g), kGatherLayer, {source, Split::Whole});
    return *whole_[source];
  }
  std::optional<std::size_t> part(std::size_t source) const { return part_[source]; }

  std::size_t push(ModelLayer layer, std::size_t source_layer, TensorPart tensor) {
    layer.in = plan_.model.shape_of(layer.inputs[0]);
    plan_.model.layers.push_back(std::move(layer));
    plan_.source_layer.push_back(source_layer);
    plan_.tensors.push_back(tensor);
    const std::size_t t = plan_.model.layers.size();
    (tensor.split == Split::Whole ? whole_ : part_)[tensor.source] = t;
    return t;
  }

 private:
  const Model& source_;
  ShardedModel& plan_;
  std::vector<std::optional<std::size_t>> whole_, part_;  // per unsharded tensor
};

// tensor: dense and conv2d layers compute their share of the output channels from whole inputs;
// an add runs on the parts when both inputs are split, else on the wholes.
void plan_tensor(const Model& model, ShardedModel& plan) {
  DeviceModelBuilder b(model, plan, Split::Whole);
  const std::uint32_t n = plan.devices;
  for (std::size_t i = 0; i < model.layers.size(); ++i) {
    ModelLayer l = model.layers[i];
    if (has_weights(l.kind)) {
      if (l.out.channels % n != 0) {
        throw Error(fmt::format("--shard tensor: layer '{}' has {} output channels, which do not split into {} equal parts",
                                l.name, l.out.channels, n));
      }
      l.inputs = {b.whole(l.inputs[0])};
      l.out.channels /= n;
      b.push(std::move(l), i, {i + 1, Split::Channels});
      continue;
    }
    const bool split = b.part(l.inputs[0]) && b.part(l.inputs[1]);
    for (std::size_t& t : l.inputs) t = split ? *b.part(t) : b.whole(t);
    if (split) l.out.channels /= n;
    b.push(std::move(l), i, {i + 1, split ? Split::Channels : Split::Whole});
  }
  b.whole(model.layers.size());
}

// batch and fsdp: the device model is the model on b = B/N samples; the output is gathered.
void plan_data_parallel(const Model& model, ShardedModel& plan) {
  DeviceModelBuilder b(model, plan, Split::Rows);
  for (std::size_t i = 0; i < model.layers.size(); ++i) {
    ModelLayer l = model.layers[i];
    for (std::size_t& t : l.inputs) t = *b.part(t);
    b.push(std::move(l), i, {i + 1, Split::Rows});
  }
  b.whole(model.layers.size());
}

// Rows [r0, r1) and columns [c0, c1) of a rows x cols row-major matrix.
template <typename T>
std::vector<T> block(const std::vector<T>& m, std::size_t cols, std::size_t r0, std::size_t r1, std::size_t c0, std::size_t c1) {
  std::vector<T> out;
  out.reserve((r1 - r0) * (c1 - c0));
  for (std::size_t r = r0; r < r1; ++r) {
    out.insert(out.end(), m.begin() + static_cast<std::ptrdiff_t>(r * cols + c0), m.begin() + static_cast<std::ptrdiff_t>(r * cols + c1));
  }
  return out;
}

// Device d's part of a rows x cols matrix.
template <typename T>
std::vector<T> part_of(const std::vector<T>& m, std::size_t cols, Split split, std::uint32_t d, std::uint32_t n) {
  if (m.empty() || split == Split::Whole) return m;
  const std::size_t rows = m.size() / cols;
  if (split == Split::Rows) return block(m, cols, d * rows / n, (d + 1) * rows / n, 0, cols);
  return block(m, cols, 0, rows, d * cols / n, (d + 1) * cols / n);
}

}  // namespace

ShardedModel plan_shards(const Model& model, std::size_t batch, ShardMode mode, std::uint32_t devices) {
  if (devices == 0 || devices > 64) throw Error(fmt::format("--devices {} is not in 1..64", devices));
  ShardedModel plan;
  plan.mode = mode;
  plan.devices = devices;
  plan.batch = batch;
  plan.device_batch = batch;
  if (devices == 1) {  // one device: the model itself
    plan.model = model;
    for (std::size_t t = 0; t <= model.layers.size(); ++t) plan.tensors.push_back({t, Split::Whole});
    for (std::size_t i = 0; i < model.layers.size(); ++i) plan.source_layer.push_back(i);
    return plan;
  }
  if (mode == ShardMode::Tensor) {
    plan_tensor(model, plan);
  } else {
    if (batch % devices != 0) {
      throw Error(fmt::format("--shard {}: a batch of {} does not split into {} equal parts (--devices {})", to_string(mode),
                              batch, devices, devices));
    }
    plan.device_batch = batch / devices;
    plan.shard_weights = mode == ShardMode::Fsdp;
    plan_data_parallel(model, plan);
  }
  return plan;
}

GlobalData global_data(const Model& model, std::size_t batch) {
  GlobalData g;
  for (std::size_t i = 0; i < model.layers.size(); ++i) g.params.push_back(random_layer_params(model.layers[i], model.seed, i));
  g.input = random_input(model.rows(0, batch) * model.input.channels, model.seed, 0);
  g.reference = model_reference(model, batch, g.input, g.params);
  return g;
}

DevicePart device_part(const ShardedModel& plan, const Model& model, const GlobalData& data, std::uint32_t device,
                       bool prefetch_weights) {
  const std::uint32_t n = plan.devices;
  DevicePart p;
  p.inputs.push_back(part_of(data.input, model.input.channels, plan.tensors[0].split, device, n));
  for (std::size_t j = 0; j < plan.model.layers.size(); ++j) {
    const std::size_t source = plan.source_layer[j];
    if (source == kGatherLayer) {
      p.params.emplace_back();
      continue;
    }
    const LayerParams& full = data.params[source];
    const Split split = plan.tensors[j + 1].split == Split::Channels && has_weights(model.layers[source].kind) ? Split::Channels : Split::Whole;
    const std::size_t cout = model.layers[source].out.channels;
    p.params.push_back({part_of(full.weights, cout, split, device, n), part_of(full.bias, cout, split, device, n)});
  }
  std::vector<ReferenceTensor> expected;
  for (const TensorPart& t : plan.tensors) {
    const ReferenceTensor& full = data.reference[t.source];
    const std::size_t cols = model.shape_of(t.source).channels;
    expected.push_back({part_of(full.int8, cols, t.split, device, n), part_of(full.int32, cols, t.split, device, n)});
  }
  p.expected.push_back(std::move(expected));
  if (plan.shard_weights) {
    p.weight_parts = n;
    p.weight_part = device;
  }
  p.prefetch_weights = prefetch_weights;
  return p;
}

}  // namespace tpuemu::shard
