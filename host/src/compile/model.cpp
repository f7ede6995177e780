// SPDX-License-Identifier: Apache-2.0
#include "tpuemu/compile/model.h"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "tpuemu/base/error.h"
#include "tpuemu/base/json.h"
#include "tpuemu/config/config.h"

namespace tpuemu {

std::string_view layer_kind_name(LayerKind kind) {
  switch (kind) {
    case LayerKind::Dense: return "dense";
    case LayerKind::Conv2d: return "conv2d";
    case LayerKind::Add: return "add";
    case LayerKind::Gather: return "gather";
  }
  return "?";
}

const std::vector<std::string>& model_file_kinds() {
  static const std::vector<std::string> kinds = [] {
    std::vector<std::string> k = workload_kinds();
    k.push_back("model");
    return k;
  }();
  return kinds;
}

Preset load_model_preset(const Model& model) {
  if (!model.preset) return load_preset("default");
  try {
    return load_preset(*model.preset);
  } catch (const Error& e) {
    if (model.preset_place.empty()) throw;
    throw Error(model.preset_place, fmt::format("/preset: {}", e.what()));
  }
}

const std::vector<std::string>& model_layer_kinds() {
  static const std::vector<std::string> kinds = {"dense", "conv2d", "add", "ffn"};
  return kinds;
}

std::size_t ModelLayer::reduction() const {
  if (!has_weights(kind)) return 0;
  return kernel_h * kernel_w * in.channels;
}

unsigned default_shift(std::size_t reduction) {
  // A K-term dot product of uniform int8 values has a standard deviation of about
  // 74^2 * sqrt(K); dividing by 2^shift brings it to about 40, well inside int8.
  const double s = std::log2(74.0 * 74.0 * std::sqrt(static_cast<double>(std::max<std::size_t>(reduction, 1))) / 40.0);
  return static_cast<unsigned>(std::clamp(std::lround(s), 0L, 31L));
}

namespace {

std::string shape_text(const TensorShape& s) { return fmt::format("{}x{}x{}", s.height, s.width, s.channels); }

// A layer as written, before the graph is resolved.
struct RawLayer {
  ModelLayer layer;
  std::vector<std::string> input_names;  // empty: the previous layer (or the model input)
  std::optional<std::size_t> declared_in;  // dense "in" / conv2d "in_channels", checked against the chain
  std::size_t out_channels = 0;
  std::string pointer;  // /layers/i
  std::string inputs_key = "input";
};

struct Parser {
  const JsonDocument& doc;
  Model model;
  std::vector<RawLayer> raw;

  Error layer_error(const RawLayer& r, std::string_view key, std::string_view cause) const {
    const std::string ptr = key.empty() ? r.pointer : r.pointer + "/" + std::string(key);
    return doc.error_at(ptr, fmt::format("layer '{}': {}", r.layer.name, cause));
  }

  void quantisation(JsonObjectReader& lr, ModelLayer& l) {
    if (lr.has("scale")) l.scale = static_cast<std::int32_t>(lr.get_int("scale", INT32_MIN, INT32_MAX));
    if (lr.has("shift")) l.shift = static_cast<unsigned>(lr.get_uint("shift", 0, 63));
    else l.shift = ~0u;  // resolved from the reduction once shapes are known
    l.relu = lr.has("relu") && lr.get_bool("relu");
    l.bias = lr.has("bias") && lr.get_bool("bias");
  }

  void read_inputs(JsonObjectReader& lr, RawLayer& r, bool two) {
    if (two) {
      const nlohmann::json* in = lr.find("inputs");
      if (!in) throw lr.error("", fmt::format("layer '{}': missing \"inputs\" (the two tensors to add)", r.layer.name));
      if (!in->is_array() || in->size() != 2 || !(*in)[0].is_string() || !(*in)[1].is_string()) {
        throw lr.error("inputs", fmt::format("layer '{}': expected two tensor names", r.layer.name));
      }
      r.input_names = {(*in)[0].get<std::string>(), (*in)[1].get<std::string>()};
      r.inputs_key = "inputs";
    } else if (lr.has("input")) {
      r.input_names = {lr.get_string("input")};
    }
  }

  // Errors of the JSON reader ("missing required key", a wrong type) learn the layer's name too.
  void parse_layer(std::size_t i) {
    const std::string pointer = fmt::format("/layers/{}", i);
    std::string name = fmt::format("layer{}", i);
    try {
      parse_layer(i, pointer, name);
    } catch (const Error& e) {
      const std::string msg = e.what();
      const std::string tag = "layer '" + name + "': ";
      if (msg.find(tag) != std::string::npos) throw;
      const std::size_t at = msg.find(": " + pointer);
      const std::size_t cause = at == std::string::npos ? std::string::npos : msg.find(": ", at + 2);
      if (cause == std::string::npos) throw;
      throw Error(msg.substr(0, cause + 2) + tag + msg.substr(cause + 2));
    }
  }

  void parse_layer(std::size_t /*index*/, const std::string& pointer, std::string& name) {
    RawLayer r;
    r.pointer = pointer;
    JsonObjectReader lr(doc, r.pointer);
    if (lr.has("name")) {
      name = lr.get_string("name");
      // "" would be the name of no tensor ("input": "" reads the layer before) and print as ''.
      if (name.empty()) throw lr.error("name", "a layer's name must not be empty (leave \"name\" out for layerN)");
    }
    r.layer.name = name;
    if (!lr.has("kind")) throw lr.error("", fmt::format("layer '{}': missing \"kind\" ({})", r.layer.name, kinds_text()));
    const std::string kind = lr.get_string("kind");
    if (kind == "dense") {
      r.layer.kind = LayerKind::Dense;
      read_inputs(lr, r, false);
      r.out_channels = lr.get_uint("out", 1, kMaxDimension);
      if (lr.has("in")) r.declared_in = lr.get_uint("in", 1, kMaxDimension);
      r.layer.flatten = lr.has("flatten") && lr.get_bool("flatten");
      quantisation(lr, r.layer);
      if (lr.has("output")) {
        const std::string out = lr.get_string("output");
        if (out != "int8" && out != "int32") throw lr.error("output", fmt::format("layer '{}': expected \"int8\" or \"int32\"", r.layer.name));
        r.layer.int32_output = out == "int32";
      }
      if (r.layer.int32_output && r.layer.bias) throw lr.error("bias", fmt::format("layer '{}': a bias needs int8 output (it is added in the vector unit)", r.layer.name));
      lr.finish();
      raw.push_back(std::move(r));
    } else if (kind == "conv2d") {
      r.layer.kind = LayerKind::Conv2d;
      read_inputs(lr, r, false);
      r.out_channels = lr.get_uint("out_channels", 1, kMaxDimension);
      if (lr.has("in_channels")) r.declared_in = lr.get_uint("in_channels", 1, kMaxDimension);
      r.layer.kernel_h = r.layer.kernel_w = lr.get_uint("kernel", 1, 64);
      r.layer.stride = lr.has("stride") ? lr.get_uint("stride", 1, 64) : 1;
      r.layer.padding = lr.has("padding") ? lr.get_uint("padding", 0, 64) : 0;
      quantisation(lr, r.layer);
      lr.finish();
      raw.push_back(std::move(r));
    } else if (kind == "add") {
      r.layer.kind = LayerKind::Add;
      read_inputs(lr, r, true);
      r.layer.relu = lr.has("relu") && lr.get_bool("relu");
      lr.finish();
      raw.push_back(std::move(r));
    } else if (kind == "ffn") {
      // dense (d_model -> d_ff, activation) -> dense (d_ff -> d_model) -> add (residual)
      read_inputs(lr, r, false);
      const std::size_t d_ff = lr.get_uint("d_ff", 1, kMaxDimension);
      if (lr.has("activation")) {
        const std::string act = lr.get_string("activation");
        if (act != "relu") throw lr.error("activation", fmt::format("layer '{}': only \"relu\" is supported (the vector unit's activation)", r.layer.name));
      }
      const bool bias = lr.has("bias") && lr.get_bool("bias");
      lr.finish();
      const std::string base = r.layer.name;
      RawLayer up = r, down = r, add = r;
      up.layer.name = base + ".up";
      up.layer.kind = LayerKind::Dense;
      up.out_channels = d_ff;
      up.layer.relu = true;
      up.layer.bias = bias;
      up.layer.shift = ~0u;
      down.layer.name = base + ".down";
      down.layer.kind = LayerKind::Dense;
      down.input_names = {up.layer.name};
      down.out_channels = 0;  // d_model: the block's input width, known once shapes are
      down.layer.bias = bias;
      down.layer.shift = ~0u;
      add.layer.name = base;
      add.layer.kind = LayerKind::Add;
      add.input_names = {down.layer.name, r.input_names.empty() ? std::string() : r.input_names[0]};
      add.inputs_key = "input";
      raw.push_back(std::move(up));
      raw.push_back(std::move(down));
      raw.push_back(std::move(add));
    } else {
      throw lr.error("kind", fmt::format("layer '{}': unknown layer kind '{}' ({})", r.layer.name, kind, kinds_text()));
    }
  }

  static std::string kinds_text() {
    std::string s = "expected one of";
    for (const auto& k : model_layer_kinds()) s += " \"" + k + "\"";
    return s;
  }

  // Names -> tensors, then a topological order (stable: file order among ready layers).
  void resolve() {
    std::map<std::string, std::size_t> index;  // layer name -> raw index
    for (std::size_t i = 0; i < raw.size(); ++i) {
      if (raw[i].layer.name == model.input_name) {
        throw layer_error(raw[i], "name", fmt::format("'{}' is the model input's name", model.input_name));
      }
      if (!index.emplace(raw[i].layer.name, i).second) throw layer_error(raw[i], "name", "a second layer of this name");
    }
    // Inputs by raw index (-1: the model input). A layer without "input" reads the layer written
    // before it; an ffn's residual add reads what the ffn reads.
    std::vector<std::vector<long>> deps(raw.size());
    std::string previous;
    for (std::size_t i = 0; i < raw.size(); ++i) {
      RawLayer& r = raw[i];
      if (r.input_names.empty()) r.input_names = {previous.empty() ? model.input_name : previous};
      for (std::string& n : r.input_names) {
        if (n.empty()) n = previous.empty() ? model.input_name : previous;
      }
      for (const std::string& n : r.input_names) {
        if (n == model.input_name) {
          deps[i].push_back(-1);
        } else if (const auto it = index.find(n); it != index.end()) {
          deps[i].push_back(static_cast<long>(it->second));
        } else {
          throw layer_error(r, r.inputs_key, fmt::format("unknown input '{}' (not the model input '{}' nor a layer)", n, model.input_name));
        }
      }
      if (!r.layer.name.ends_with(".up") && !r.layer.name.ends_with(".down")) previous = r.layer.name;
    }
    // Kahn's algorithm, lowest raw index first.
    std::vector<std::size_t> missing(raw.size());
    for (std::size_t i = 0; i < raw.size(); ++i) {
      missing[i] = static_cast<std::size_t>(std::count_if(deps[i].begin(), deps[i].end(), [](long d) { return d >= 0; }));
    }
    std::vector<bool> done(raw.size(), false);
    std::vector<std::size_t> order;
    while (order.size() < raw.size()) {
      std::size_t pick = raw.size();
      for (std::size_t i = 0; i < raw.size(); ++i) {
        if (!done[i] && missing[i] == 0) { pick = i; break; }
      }
      if (pick == raw.size()) {
        const std::size_t first = static_cast<std::size_t>(std::find(done.begin(), done.end(), false) - done.begin());
        throw layer_error(raw[first], raw[first].inputs_key, fmt::format("the graph has a cycle: {}", cycle_text(first, deps, done)));
      }
      done[pick] = true;
      order.push_back(pick);
      for (std::size_t j = 0; j < raw.size(); ++j) {
        for (long d : deps[j]) if (d == static_cast<long>(pick)) --missing[j];
      }
    }
    std::vector<std::size_t> tensor_of(raw.size());  // raw index -> tensor index
    for (std::size_t k = 0; k < order.size(); ++k) tensor_of[order[k]] = k + 1;
    for (std::size_t k = 0; k < order.size(); ++k) {
      RawLayer& r = raw[order[k]];
      r.layer.inputs.clear();
      for (long d : deps[order[k]]) r.layer.inputs.push_back(d < 0 ? 0 : tensor_of[static_cast<std::size_t>(d)]);
      model.layers.push_back(r.layer);
      shapes(r, model.layers.back());
    }
    // Every output but the last one is read by someone.
    std::vector<bool> used(model.layers.size() + 1, false);
    for (const ModelLayer& l : model.layers) for (std::size_t t : l.inputs) used[t] = true;
    for (std::size_t k = 0; k + 1 < order.size(); ++k) {
      if (!used[k + 1]) throw layer_error(raw[order[k]], "", "its output is never used (only the last layer's output is the model's)");
      if (model.layers[k].int32_output) throw layer_error(raw[order[k]], "output", "only the model's last layer can output int32");
    }
  }

  std::string cycle_text(std::size_t start, const std::vector<std::vector<long>>& deps, const std::vector<bool>& done) const {
    // Walk unresolved dependencies from `start` until a layer repeats.
    std::vector<std::size_t> path{start};
    for (;;) {
      const std::size_t cur = path.back();
      std::size_t next = raw.size();
      for (long d : deps[cur]) if (d >= 0 && !done[static_cast<std::size_t>(d)]) { next = static_cast<std::size_t>(d); break; }
      if (next == raw.size()) break;
      const std::size_t seen = static_cast<std::size_t>(std::find(path.begin(), path.end(), next) - path.begin());
      path.push_back(next);
      if (seen + 1 < path.size()) {  // `next` was on the path already: the cycle is path[seen..]
        std::string s;
        for (std::size_t i = seen; i < path.size(); ++i) s += (s.empty() ? "" : " <- ") + raw[path[i]].layer.name;
        return s;
      }
    }
    return raw[start].layer.name;
  }

  void shapes(RawLayer& r, ModelLayer& l) {
    l.in = model.shape_of(l.inputs[0]);
    const TensorShape& in = l.in;
    switch (l.kind) {
      case LayerKind::Add: {
        const TensorShape& other = model.shape_of(l.inputs[1]);
        if (!(other == in)) {
          throw layer_error(r, r.inputs_key, fmt::format("inputs '{}' ({}) and '{}' ({}) differ in shape",
                                                        model.tensor_name(l.inputs[0]), shape_text(in),
                                                        model.tensor_name(l.inputs[1]), shape_text(other)));
        }
        l.out = in;
        return;
      }
      case LayerKind::Dense: {
        if (r.out_channels == 0) {  // an ffn's down projection returns to the block's width
          const std::string up = l.name.substr(0, l.name.size() - 5) + ".up";
          for (const ModelLayer& done : model.layers) {
            if (done.name == up) r.out_channels = done.in.channels;
          }
        }
        const std::size_t features = l.flatten ? in.height * in.width * in.channels : in.channels;
        if (r.declared_in && *r.declared_in != features) {
          throw layer_error(r, "in", fmt::format("takes {} features but its input '{}' gives {} ({})", *r.declared_in,
                                                 model.tensor_name(l.inputs[0]), features, shape_text(in)));
        }
        if (l.flatten) {
          l.kernel_h = in.height;
          l.kernel_w = in.width;
          l.out = {1, 1, r.out_channels};
        } else {
          l.out = {in.height, in.width, r.out_channels};
        }
        break;
      }
      case LayerKind::Conv2d: {
        if (r.declared_in && *r.declared_in != in.channels) {
          throw layer_error(r, "in_channels", fmt::format("takes {} channels but its input '{}' gives {} ({})", *r.declared_in,
                                                          model.tensor_name(l.inputs[0]), in.channels, shape_text(in)));
        }
        const std::size_t ph = in.height + 2 * l.padding, pw = in.width + 2 * l.padding;
        if (l.kernel_h > ph || l.kernel_w > pw) {
          throw layer_error(r, "kernel", fmt::format("kernel {}x{} is larger than its padded input {}x{} ({}x{} + 2 x padding {})",
                                                     l.kernel_h, l.kernel_w, ph, pw, in.height, in.width, l.padding));
        }
        l.out = {(ph - l.kernel_h) / l.stride + 1, (pw - l.kernel_w) / l.stride + 1, r.out_channels};
        break;
      }
      case LayerKind::Gather:  // not a kind a file can name (model_layer_kinds)
        throw layer_error(r, "kind", "a gather layer is inserted by the sharded runner, not written in a model");
    }
    if (l.shift == ~0u) l.shift = default_shift(l.reduction());
  }
};

}  // namespace

Model model_from_workload(const Workload& w) {
  validate_workload(w);
  Model m;
  m.name = w.name;
  m.batch = w.batch;
  m.seed = w.seed;
  m.preset = w.preset;
  m.preset_place = w.preset_place;
  m.buffers = w.buffers;
  m.input = {1, 1, w.layers.front().in_features};
  for (std::size_t i = 0; i < w.layers.size(); ++i) {
    const LayerSpec& s = w.layers[i];
    ModelLayer l;
    l.name = w.layers.size() == 1 ? "matmul" : fmt::format("layer {}", i);
    l.kind = LayerKind::Dense;
    l.inputs = {i};
    l.in = m.shape_of(i);
    l.out = {1, 1, s.out_features};
    l.scale = s.scale;
    l.shift = s.shift;
    l.relu = s.relu && !s.int32_output;
    l.int32_output = s.int32_output;
    m.layers.push_back(l);
  }
  return m;
}

Model load_model(const std::filesystem::path& path) { return load_model(JsonDocument::load(path), path); }

Model load_model(const JsonDocument& doc, const std::filesystem::path& path) {
  {
    JsonObjectReader probe(doc, "");
    if (probe.has("kind")) {
      const std::string kind = probe.get_string("kind");
      const auto& workloads = workload_kinds();
      if (std::find(workloads.begin(), workloads.end(), kind) != workloads.end()) {
        return model_from_workload(load_workload(doc, path));
      }
      if (kind != "model") {
        throw probe.error("kind", fmt::format("unknown workload kind '{}' ({})", kind, expected_kinds_text(model_file_kinds())));
      }
    }
  }
  JsonObjectReader root(doc, "");
  Parser p{doc, {}, {}};
  Model& m = p.model;
  m.name = root.has("name") ? root.get_string("name") : path.stem().string();
  root.get_string("kind");
  m.batch = root.has("batch") ? root.get_uint("batch", 1, kMaxDimension) : 1;
  m.seed = root.has("seed") ? root.get_uint("seed") : 1;
  if (root.has("preset")) {
    m.preset = root.get_string("preset");
    m.preset_place = doc.error_at("/preset", "").place();
  }
  if (root.has("buffers")) m.buffers = static_cast<unsigned>(root.get_uint("buffers", 1, 3));
  JsonObjectReader in = root.get_object("input");
  if (in.has("name")) m.input_name = in.get_string("name");
  if (m.input_name.empty()) throw in.error("name", "the input's name must not be empty (leave \"name\" out for \"input\")");
  if (in.has("features") && in.has("channels")) {
    // Two ways to give the width: a vector or sequence (features) or an image (channels).
    throw in.error("channels", "give either \"features\" (a vector or sequence) or \"height\", \"width\" and "
                               "\"channels\" (an image), not both");
  }
  if (in.has("features")) {
    m.input.channels = in.get_uint("features", 1, kMaxDimension);
    if (in.has("sequence")) m.input.width = in.get_uint("sequence", 1, kMaxDimension);
  } else {
    m.input.height = in.get_uint("height", 1, 4096);
    m.input.width = in.get_uint("width", 1, 4096);
    m.input.channels = in.get_uint("channels", 1, kMaxDimension);
  }
  in.finish();
  const nlohmann::json* layers = root.find("layers");
  if (!layers || !layers->is_array() || layers->empty()) throw doc.error_at(layers ? "/layers" : "", "expected a non-empty array \"layers\"");
  for (std::size_t i = 0; i < layers->size(); ++i) p.parse_layer(i);
  root.finish();
  p.resolve();
  return m;
}

}  // namespace tpuemu
