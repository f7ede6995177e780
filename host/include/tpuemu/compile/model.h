// SPDX-License-Identifier: Apache-2.0
// Models: a graph of int8 layers over activation tensors (docs/workloads.md). Every tensor is a
// matrix of rows x channels in HBM: rows = batch x height x width (an image is NHWC, a sequence is
// batch x positions), so a dense layer is one matmul, a convolution is a matmul over an im2col
// view gathered by DMA, and a residual add is a vector-unit operation on two such matrices.
// Matmul workloads and MLPs (workload.h) are models too (model_from_workload).
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tpuemu/compile/workload.h"
#include "tpuemu/config/config.h"

namespace tpuemu {

// Gather is not a kind a model file names: the sharded runner (docs/sharding.md) inserts it where a
// device needs the parts of a tensor that other devices computed. It runs on the interconnect, not
// on the core: no program, no weights.
enum class LayerKind { Dense, Conv2d, Add, Gather };
std::string_view layer_kind_name(LayerKind kind);
// Dense and conv2d layers have weights (and maybe a bias) and compile to a matmul.
inline bool has_weights(LayerKind kind) { return kind == LayerKind::Dense || kind == LayerKind::Conv2d; }
// The kinds a model file may name, in the order docs/workloads.md lists them (`ffn` expands into
// dense, dense, add).
const std::vector<std::string>& model_layer_kinds();
// The top-level "kind"s load_model reads: workload_kinds() and "model".
const std::vector<std::string>& model_file_kinds();

// Per-sample shape of an activation: height x width x channels (a vector is 1 x 1 x C, a sequence
// of length S is 1 x S x C).
struct TensorShape {
  std::size_t height = 1, width = 1, channels = 0;
  std::size_t pixels() const { return height * width; }
  bool operator==(const TensorShape&) const = default;
};

struct ModelLayer {
  std::string name;
  LayerKind kind = LayerKind::Dense;
  std::vector<std::size_t> inputs;  // tensor indices: 0 is the model input, i + 1 is layer i's output
  TensorShape in, out;               // in: of inputs[0]
  // dense and conv2d
  std::size_t kernel_h = 1, kernel_w = 1, stride = 1, padding = 0;
  bool flatten = false;  // dense over height x width x channels of its input (a whole-image kernel)
  bool bias = false;
  std::int32_t scale = 1;
  unsigned shift = 0;
  bool relu = false;
  bool int32_output = false;  // the model's last layer only: ACC read back without requantising
  // gather: its input is one of `gather_parts` equal parts of `out` (the parts side by side along
  // the channels, or one after another along the rows when gather_rows).
  std::size_t gather_parts = 1;
  bool gather_rows = false;
  // The K of the matmul: kernel_h * kernel_w * in.channels (dense: in.channels, or all of in).
  std::size_t reduction() const;
};

struct Model {
  std::string name = "model";
  std::size_t batch = 1;
  std::uint64_t seed = 1;
  std::string input_name = "input";
  TensorShape input;
  std::vector<ModelLayer> layers;  // in execution order (a topological order of the graph)
  std::optional<std::string> preset;
  std::string preset_place;  // "file:line:column" of "preset" in its file, for errors about it
  std::optional<unsigned> buffers;

  const TensorShape& shape_of(std::size_t tensor) const { return tensor == 0 ? input : layers[tensor - 1].out; }
  std::string tensor_name(std::size_t tensor) const { return tensor == 0 ? input_name : layers[tensor - 1].name; }
  // Rows of a tensor's matrix for `batch` samples.
  std::size_t rows(std::size_t tensor, std::size_t batch) const { return batch * shape_of(tensor).pixels(); }
};

// Loads a workload file of any kind: "model" (a layer graph), "mlp" or "matmul". Errors are one
// line "file:line:column: /layers/3/kernel: layer 'conv2': cause".
Model load_model(const std::filesystem::path& path);
// The same from a parsed document (text already read, e.g. by a fuzzer); `path` names defaults.
Model load_model(const JsonDocument& doc, const std::filesystem::path& path);
Model model_from_workload(const Workload& workload);
// The preset the model's file names (default: "default"); an unknown or invalid preset is an Error
// at the "preset" member of the file ("m.json:4:13: /preset: unknown preset 'x' ...").
Preset load_model_preset(const Model& model);

// Default requantisation shift for a K-term int8 dot product: keeps outputs of random inputs
// mostly inside int8 (docs/workloads.md).
unsigned default_shift(std::size_t reduction);

}  // namespace tpuemu
