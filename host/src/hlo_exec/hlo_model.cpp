// SPDX-License-Identifier: Apache-2.0
#include "tpuemu/hlo_exec/hlo_model.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "tpuemu/base/error.h"
#include "tpuemu/compile/workload.h"

namespace tpuemu::hlo_exec {

namespace {

using hlo::Instruction;
using hlo::Opcode;

// What an instruction's value is to the model being built.
enum class Kind {
  Weights,     // a parameter or constant (or a reshape of one): weights, a bias vector or the input
  Zero,        // a scalar zero or its broadcast: the second operand of a ReLU
  Scalar,      // another scalar constant: no layer reads one
  Bias,        // a rank-1 weights value broadcast along the last dimension
  Activation,  // a model tensor
};

struct Value {
  Kind kind = Kind::Weights;
  std::size_t source = 0;  // Weights, Bias: the parameter or constant instruction it comes from
  std::size_t tensor = 0;  // Activation: 0 the model input, i + 1 layer i's output
  bool flat = false;       // Activation viewed as [batch, height x width x channels]
};

// A parameter or constant is one thing on the device: weights of one layer, one bias, or the input.
enum class Role { None, Weights, Bias, Input };

// dim_labels=b01f_01io->b01f: the input NHWC, the kernel HWIO, the output NHWC (the compiler's
// conv2d).
hlo::ConvolutionDimensionNumbers nhwc_hwio() {
  hlo::ConvolutionDimensionNumbers n;
  n.input_batch_dimension = 0;
  n.input_spatial_dimensions = {1, 2};
  n.input_feature_dimension = 3;
  n.kernel_spatial_dimensions = {0, 1};
  n.kernel_input_feature_dimension = 2;
  n.kernel_output_feature_dimension = 3;
  n.output_batch_dimension = 0;
  n.output_spatial_dimensions = {1, 2};
  n.output_feature_dimension = 3;
  return n;
}

bool literal_is_zero(std::string_view literal) {
  std::string t;
  for (char c : literal) {
    if (c != ' ' && c != '{' && c != '}') t += c;
  }
  if (t == "false") return true;
  if (t.empty()) return false;
  try {
    std::size_t used = 0;
    const double v = std::stod(t, &used);
    return used == t.size() && v == 0.0;
  } catch (const std::exception&) {
    return false;
  }
}

// "[8,32]", "[<=8,?]": the dims as the module writes them.
std::string dims_text(const hlo::Shape& s) {
  std::vector<std::string> dims;
  for (std::size_t k = 0; k < s.dims.size(); ++k) {
    const bool dynamic = k < s.dynamic.size() && s.dynamic[k];
    dims.push_back(dynamic && s.dims[k] < 0 ? "?" : (dynamic ? "<=" : "") + std::to_string(s.dims[k]));
  }
  return fmt::format("[{}]", fmt::join(dims, ","));
}

class Translator {
 public:
  explicit Translator(const hlo::Module& module)
      : module_(module), entry_(module.entry_computation()), values_(entry_.instructions.size()),
        users_(entry_.instructions.size()), roles_(entry_.instructions.size(), Role::None) {}

  HloModel run() {
    refuse_unsupported_opcodes();
    for (const Instruction& ins : entry_.instructions) {
      for (std::size_t op : ins.operands) ++users_[op];
    }
    for (std::size_t i = 0; i < entry_.instructions.size(); ++i) {
      values_[i] = value_of(i);
      collect_dtype(entry_.instructions[i].shape);
    }
    finish();
    return std::move(out_);
  }

 private:
  const hlo::Module& module_;
  const hlo::Computation& entry_;
  std::vector<Value> values_;
  std::vector<std::size_t> users_;
  std::vector<Role> roles_;
  std::vector<std::size_t> head_;  // per tensor: the instruction whose value it currently is
  std::vector<bool> read_;         // per tensor: some layer reads it
  bool have_input_ = false;
  HloModel out_;

  Model& model() { return out_.model; }

  Error error(const Instruction& ins, std::string_view cause) const {
    return Error::at(module_.source, ins.pos.line, ins.pos.col, cause);
  }

  void refuse_unsupported_opcodes() const {
    for (const Instruction& ins : entry_.instructions) {
      const std::string_view name = hlo::opcode_name(ins.opcode);
      const auto& ok = executable_opcodes();
      if (std::find(ok.begin(), ok.end(), name) == ok.end()) {
        throw error(ins, fmt::format("opcode '{}' is not supported on the device (supported: {})", name,
                                     fmt::join(ok, ", ")));
      }
    }
  }

  void collect_dtype(const hlo::Shape& s) {
    if (s.is_tuple()) {
      for (const hlo::Shape& e : s.elements) collect_dtype(e);
      return;
    }
    if (!s.is_array()) return;
    const std::string name(hlo::type_name(s.type));
    if (std::find(out_.original_dtypes.begin(), out_.original_dtypes.end(), name) == out_.original_dtypes.end())
      out_.original_dtypes.push_back(name);
  }

  const Instruction& ins(std::size_t i) const { return entry_.instructions[i]; }

  // Gives the parameter or constant `source` its one role.
  void claim(std::size_t at, std::size_t source, Role role) {
    static constexpr const char* kRole[] = {"", "weights", "a bias", "the input"};
    if (roles_[source] == role && role == Role::Input) return;
    if (roles_[source] != Role::None) {
      throw error(ins(at), fmt::format("'{}' is already {} of a layer; on the device each of weights, biases and the "
                                       "input is its own tensor",
                                       ins(source).name, kRole[static_cast<int>(roles_[source])]));
    }
    check_dims(source);
    roles_[source] = role;
  }

  // A tensor on the device has a static size of 1..kMaxDimension along each dimension (what a
  // model file's shapes and --batch accept); the program's tensors come in as parameters and
  // constants, so each is checked where it is written.
  void check_dims(std::size_t source) const {
    const hlo::Shape& s = ins(source).shape;
    for (std::size_t k = 0; k < s.dims.size(); ++k) {
      const std::string where = fmt::format("'{}' of shape {}: dimension {}", ins(source).name, dims_text(s), k);
      if (k < s.dynamic.size() && s.dynamic[k])
        throw error(ins(source), where + " is dynamic; the device runs static shapes");
      if (s.dims[k] < 1 || static_cast<std::uint64_t>(s.dims[k]) > kMaxDimension)
        throw error(ins(source), fmt::format("{} is {}; a tensor on the device holds 1..{} values along each dimension",
                                             where, s.dims[k], kMaxDimension));
    }
  }

  // The view `dims` of tensor t: [batch, ..., channels] (flat: false) or [batch, features] of a
  // tensor with more than one pixel (flat: true). nullopt when the dims are neither.
  std::optional<bool> view_of(std::size_t t, const hlo::Shape& s) const {
    const TensorShape& shape = out_.model.shape_of(t);
    const auto& d = s.dims;
    if (d.size() < 2 || static_cast<std::size_t>(d[0]) != out_.model.batch) return std::nullopt;
    if (static_cast<std::size_t>(d.back()) == shape.channels) {
      std::size_t pixels = 1;
      for (std::size_t k = 1; k + 1 < d.size(); ++k) pixels *= static_cast<std::size_t>(d[k]);
      if (pixels == shape.pixels()) return false;
    }
    if (d.size() == 2 && static_cast<std::size_t>(d[1]) == shape.pixels() * shape.channels) return true;
    return std::nullopt;
  }

  Value activation(std::size_t at, std::size_t t) {
    const std::optional<bool> flat = view_of(t, ins(at).shape);
    if (!flat) {
      throw error(ins(at), fmt::format("shape {} is not a view of '{}' ({} samples of {}x{}x{}): the device keeps a "
                                       "tensor as rows of channels",
                                       dims_text(ins(at).shape), out_.model.tensor_name(t), out_.model.batch,
                                       out_.model.shape_of(t).height, out_.model.shape_of(t).width,
                                       out_.model.shape_of(t).channels));
    }
    return Value{.kind = Kind::Activation, .tensor = t, .flat = *flat};
  }

  // Operand `op` of instruction `at` read as an activation: a weights value becomes the input.
  Value as_activation(std::size_t at, std::size_t op) {
    const Value v = values_[op];
    if (v.kind == Kind::Activation) return v;
    if (v.kind != Kind::Weights) {
      throw error(ins(at), fmt::format("operand '{}' is not a tensor a layer can read", ins(op).name));
    }
    if (roles_[v.source] != Role::Input) {
      if (have_input_) {
        throw error(ins(at), fmt::format("'{}' would be a second input; the device runs programs with one input "
                                         "(the others are weights and biases)",
                                         ins(v.source).name));
      }
      claim(at, v.source, Role::Input);
      have_input_ = true;
      const auto& d = ins(op).shape.dims;
      if (d.size() < 2 || d.size() > 4) {
        throw error(ins(op), fmt::format("an input of rank {}: the device reads [batch, features], [batch, positions, "
                                         "features] or [batch, height, width, channels]",
                                         d.size()));
      }
      Model& m = model();
      m.batch = static_cast<std::size_t>(d[0]);
      m.input_name = ins(v.source).name;
      const auto dim = [&](std::size_t k) { return static_cast<std::size_t>(d[k]); };
      m.input = d.size() == 2 ? TensorShape{1, 1, dim(1)}
              : d.size() == 3 ? TensorShape{1, dim(1), dim(2)}
                              : TensorShape{dim(1), dim(2), dim(3)};
      head_.push_back(op);
      read_.push_back(false);
    }
    return activation(op, 0);
  }

  std::size_t weights_of(std::size_t at, std::size_t op, std::size_t rank, Role role) {
    const Value v = values_[op];
    if (v.kind != Kind::Weights || ins(op).shape.dims.size() != rank) {
      throw error(ins(at), fmt::format("operand '{}' must be {} of rank {} (a parameter or constant)", ins(op).name,
                                       role == Role::Weights ? "weights" : "a bias", rank));
    }
    claim(at, v.source, role);
    return v.source;
  }

  Value add_layer(std::size_t at, ModelLayer layer) {
    Model& m = model();
    for (std::size_t t : layer.inputs) read_[t] = true;
    layer.shift = default_shift(layer.reduction());  // as a model file's default
    m.layers.push_back(std::move(layer));
    head_.push_back(at);
    read_.push_back(false);
    return activation(at, m.layers.size());
  }

  Value dense(std::size_t at) {
    const Instruction& dot = ins(at);
    const Value lhs = as_activation(at, dot.operands[0]);
    const std::size_t rank = ins(dot.operands[0]).shape.dims.size();
    // The dense layer's: the lhs's last dimension against the weights' first, no batch.
    hlo::DotDimensionNumbers dense_dims;
    dense_dims.lhs_contracting_dimensions = {static_cast<std::int64_t>(rank) - 1};
    dense_dims.rhs_contracting_dimensions = {0};
    if (dot.typed().dot_dims.value_or(hlo::DotDimensionNumbers{}) != dense_dims) {
      throw error(dot,
                  "a dot runs on the device as a dense layer: lhs_contracting_dims={last}, "
                  "rhs_contracting_dims={0}, no batch dimensions");
    }
    weights_of(at, dot.operands[1], 2, Role::Weights);
    ModelLayer l;
    l.name = dot.name;
    l.kind = LayerKind::Dense;
    l.inputs = {lhs.tensor};
    l.in = model().shape_of(lhs.tensor);
    l.flatten = lhs.flat;
    const std::size_t features = l.flatten ? l.in.pixels() * l.in.channels : l.in.channels;
    const auto& w = ins(dot.operands[1]).shape.dims;
    if (static_cast<std::size_t>(w[0]) != features) {
      throw error(dot, fmt::format("weights {} do not take the {} features of '{}'", dims_text(ins(dot.operands[1]).shape),
                                   features, model().tensor_name(lhs.tensor)));
    }
    const std::size_t n = static_cast<std::size_t>(w[1]);
    if (l.flatten) {
      l.kernel_h = l.in.height;
      l.kernel_w = l.in.width;
      l.out = {1, 1, n};
    } else {
      l.out = {l.in.height, l.in.width, n};
    }
    return add_layer(at, std::move(l));
  }

  Value convolution(std::size_t at) {
    const Instruction& conv = ins(at);
    if (conv.operands.size() != 2) throw error(conv, "a convolution reads an input and a kernel");
    if (conv.typed().conv_dims != nhwc_hwio()) {
      throw error(conv, "a convolution runs on the device in NHWC: dim_labels=b01f_01io->b01f");
    }
    if (conv.typed().feature_group_count != 1)
      throw error(conv,
                  fmt::format("feature_group_count={}: the device runs dense convolutions only",
                              conv.typed().feature_group_count));
    if (conv.typed().batch_group_count != 1)
      throw error(conv, fmt::format("batch_group_count={}: the device runs dense convolutions only",
                                    conv.typed().batch_group_count));
    // window={size=3x3 stride=2x2 pad=1_1x1_1}: square, the same stride and symmetric padding on
    // both axes, no dilation nor reversal (the compiler's conv2d).
    const std::vector<hlo::WindowDimension> window =
        conv.typed().window ? conv.typed().window->dimensions : std::vector<hlo::WindowDimension>{};
    for (const hlo::WindowDimension& d : window) {
      if (d.base_dilation != 1 || d.window_dilation != 1 || d.window_reversal) {
        throw error(
            conv, fmt::format("window={{{}}} has no form on the device (size, stride and pad only)",
                              hlo::to_string(*conv.typed().window)));
      }
    }
    const auto same_on_both_axes = [&](auto field) {
      return window.size() == 2 && field(window[0]) == field(window[1]);
    };
    if (!same_on_both_axes([](const hlo::WindowDimension& d) { return d.size; }) ||
        !same_on_both_axes([](const hlo::WindowDimension& d) { return d.stride; }) ||
        !same_on_both_axes([](const hlo::WindowDimension& d) { return d.padding_low; }) ||
        std::any_of(window.begin(), window.end(), [](const hlo::WindowDimension& d) {
          return d.padding_high != d.padding_low || d.padding_low < 0;
        })) {
      throw error(conv,
                  "the device's convolution has a square kernel, one stride and the same padding "
                  "on every side");
    }
    const std::int64_t size = window[0].size;
    const Value in = as_activation(at, conv.operands[0]);
    const auto& id = ins(conv.operands[0]).shape.dims;
    if (in.flat || id.size() != 4)
      throw error(conv, "a convolution reads a [batch, height, width, channels] tensor");
    weights_of(at, conv.operands[1], 4, Role::Weights);
    const auto& k = ins(conv.operands[1]).shape.dims;
    ModelLayer l;
    l.name = conv.name;
    l.kind = LayerKind::Conv2d;
    l.inputs = {in.tensor};
    l.in = model().shape_of(in.tensor);
    l.kernel_h = l.kernel_w = static_cast<std::size_t>(size);
    l.stride = static_cast<std::size_t>(window[0].stride);
    l.padding = static_cast<std::size_t>(window[0].padding_low);
    if (k[0] != size || k[1] != size || static_cast<std::size_t>(k[2]) != l.in.channels) {
      throw error(conv,
                  fmt::format("kernel {} is not {}x{}x{}xN", dims_text(ins(conv.operands[1]).shape),
                              size, size, l.in.channels));
    }
    const std::size_t ph = l.in.height + 2 * l.padding, pw = l.in.width + 2 * l.padding;
    if (l.kernel_h > ph || l.kernel_w > pw)
      throw error(conv, "the kernel is larger than its padded input");
    l.out = {(ph - l.kernel_h) / l.stride + 1, (pw - l.kernel_w) / l.stride + 1,
             static_cast<std::size_t>(k[3])};
    return add_layer(at, std::move(l));
  }

  // The layer writing tensor `t` when instruction `op`, its value so far, is read by `at` alone:
  // then a bias add or ReLU at `at` can be folded into that layer.
  ModelLayer* foldable(std::size_t at, std::size_t op, const Value& v) {
    (void)at;
    if (v.kind != Kind::Activation || v.tensor == 0 || head_[v.tensor] != op || users_[op] != 1) return nullptr;
    return &model().layers[v.tensor - 1];
  }

  Value add(std::size_t at) {
    const Instruction& a = ins(at);
    for (int side = 0; side < 2; ++side) {
      const std::size_t x = a.operands[static_cast<std::size_t>(side)], b = a.operands[static_cast<std::size_t>(1 - side)];
      if (values_[b].kind != Kind::Bias) continue;
      ModelLayer* l = foldable(at, x, values_[x]);
      if (!l || !has_weights(l->kind) || l->bias || l->relu) {
        throw error(a, fmt::format("a bias add runs on the device inside the dense or convolution layer it follows: "
                                   "'{}' must be such a layer's result, read only here",
                                   ins(x).name));
      }
      const std::size_t length = static_cast<std::size_t>(ins(values_[b].source).shape.element_count());
      if (length != l->out.channels) {
        throw error(a, fmt::format("bias of {} values for {} channels", length, l->out.channels));
      }
      claim(at, values_[b].source, Role::Bias);
      l->bias = true;
      head_[values_[x].tensor] = at;
      return values_[x];
    }
    const Value x = as_activation(at, a.operands[0]), y = as_activation(at, a.operands[1]);
    if (x.flat || y.flat || !(model().shape_of(x.tensor) == model().shape_of(y.tensor))) {
      throw error(a, "an add of two tensors runs on the device on two tensors of one shape");
    }
    ModelLayer l;
    l.name = a.name;
    l.kind = LayerKind::Add;
    l.inputs = {x.tensor, y.tensor};
    l.in = l.out = model().shape_of(x.tensor);
    return add_layer(at, std::move(l));
  }

  Value maximum(std::size_t at) {
    const Instruction& m = ins(at);
    for (int side = 0; side < 2; ++side) {
      const std::size_t x = m.operands[static_cast<std::size_t>(side)], z = m.operands[static_cast<std::size_t>(1 - side)];
      if (values_[z].kind != Kind::Zero) continue;
      ModelLayer* l = foldable(at, x, values_[x]);
      if (!l || l->relu) {
        throw error(m, fmt::format("a ReLU runs on the device inside the layer it follows: '{}' must be a layer's "
                                   "result, read only here",
                                   ins(x).name));
      }
      l->relu = true;
      head_[values_[x].tensor] = at;
      return values_[x];
    }
    throw error(m, "maximum runs on the device only as a ReLU: maximum(x, broadcast(0))");
  }

  Value broadcast(std::size_t at) {
    const Instruction& b = ins(at);
    const Value& v = values_[b.operands[0]];
    if (v.kind == Kind::Zero) return v;
    const std::vector<std::int64_t> d = b.typed().dimensions.value_or(std::vector<std::int64_t>{});
    // A bias is one vector along the last dimension: b[N] with dimensions={last}, or (as JAX's
    // broadcast_in_dim of a reshaped bias prints it) b[1,N] with dimensions={0,last}.
    const auto& od = ins(b.operands[0]).shape.dims;
    std::optional<std::size_t> along;
    bool vector = v.kind == Kind::Weights && d.size() == od.size() && b.shape.dims.size() >= 2;
    for (std::size_t k = 0; vector && k < od.size(); ++k) {
      if (od[k] == 1) continue;
      vector = !along;
      along = k;
    }
    if (vector && along && d[*along] == static_cast<std::int64_t>(b.shape.dims.size()) - 1) {
      return Value{.kind = Kind::Bias, .source = v.source};
    }
    throw error(b, "broadcast runs on the device only as a bias (a vector along the last dimension) or a zero for ReLU");
  }

  Value value_of(std::size_t i) {
    const Instruction& x = ins(i);
    switch (x.opcode) {
      case Opcode::Parameter: return Value{.kind = Kind::Weights, .source = i};
      case Opcode::Constant:
        if (x.shape.is_array() && x.shape.dims.empty())
          return Value{.kind = literal_is_zero(module_.literal(x)) ? Kind::Zero : Kind::Scalar, .source = i};
        return Value{.kind = Kind::Weights, .source = i};
      case Opcode::Dot: return dense(i);
      case Opcode::Convolution: return convolution(i);
      case Opcode::Add: return add(i);
      case Opcode::Maximum: return maximum(i);
      case Opcode::Broadcast: return broadcast(i);
      case Opcode::Reshape:
      case Opcode::Bitcast: {
        const Value& v = values_[x.operands[0]];
        if (v.kind == Kind::Activation) return activation(i, v.tensor);
        if (v.kind == Kind::Weights) return v;  // weights reshaped: the layer reads its own shape
        throw error(x, fmt::format("{} of '{}' has no meaning on the device", hlo::opcode_name(x.opcode),
                                   ins(x.operands[0]).name));
      }
      case Opcode::Tuple:
        if (!x.is_root || x.operands.size() != 1)
          throw error(x, "a tuple runs on the device only as the ROOT of one result");
        return values_[x.operands[0]];
      default: break;
    }
    throw error(x, "not supported on the device");  // refused earlier by refuse_unsupported_opcodes
  }

  void finish() {
    const Instruction& root = ins(entry_.root);
    const Value& v = values_[entry_.root];
    const Model& m = out_.model;
    if (v.kind != Kind::Activation || v.tensor == 0) {
      throw error(root, "the result is not written by a dense or convolution layer: nothing would run on the device");
    }
    if (v.tensor != m.layers.size()) {
      throw error(root, fmt::format("the result is '{}', but layer '{}' comes after it: the device runs one chain of "
                                    "layers to one result",
                                    m.tensor_name(v.tensor), m.layers.back().name));
    }
    for (std::size_t t = 1; t < m.layers.size(); ++t) {
      if (!read_[t]) {
        throw error(ins(head_[t]), fmt::format("the value of '{}' is not used by the result: the device runs one chain of "
                                               "layers to one result",
                                               m.tensor_name(t)));
      }
    }
    out_.model.name = module_.name.empty() ? "hlo" : module_.name;
  }
};

}  // namespace

const std::vector<std::string_view>& executable_opcodes() {
  static const std::vector<std::string_view> names = {"dot",     "convolution", "add",      "maximum", "broadcast",
                                                      "reshape", "bitcast",     "parameter", "constant", "tuple"};
  return names;
}

HloModel model_from_hlo(const hlo::Module& module) { return Translator(module).run(); }

}  // namespace tpuemu::hlo_exec
