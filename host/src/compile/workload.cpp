// SPDX-License-Identifier: Apache-2.0
#include "tpuemu/compile/workload.h"

#include <charconv>

#include <fmt/format.h>

#include "tpuemu/base/error.h"
#include "tpuemu/config/config.h"
#include "tpuemu/layout/layout.h"

namespace tpuemu {

Workload make_matmul_workload(std::uint64_t m, std::uint64_t k, std::uint64_t n, bool requantize,
                              std::uint64_t seed) {
  Workload w;
  w.name = fmt::format("matmul {}x{}x{}", m, k, n);
  w.batch = static_cast<std::size_t>(m);
  LayerSpec layer;
  layer.in_features = static_cast<std::size_t>(k);
  layer.out_features = static_cast<std::size_t>(n);
  layer.int32_output = !requantize;
  layer.relu = false;
  // Keeps a k-term dot product of int8 values mostly inside int8 after requantisation.
  layer.shift = requantize ? 12 : 0;
  w.layers.push_back(layer);
  w.seed = seed;
  validate_workload(w);
  return w;
}

Workload parse_matmul_shape(const std::string& text, bool requantize, std::uint64_t seed) {
  std::uint64_t dims[3] = {};
  std::size_t pos = 0;
  for (int i = 0; i < 3; ++i) {
    const std::size_t end = i < 2 ? text.find('x', pos) : text.size();
    if (end == std::string::npos) {
      throw Error("--matmul", fmt::format("'{}' is not MxKxN (e.g. 512x512x512)", text));
    }
    const std::string part = text.substr(pos, end - pos);
    const char* first = part.data();
    const char* last = part.data() + part.size();
    auto [ptr, ec] = std::from_chars(first, last, dims[i]);
    if (part.empty() || ec != std::errc() || ptr != last) {
      throw Error("--matmul", fmt::format("'{}': '{}' is not a positive integer", text, part));
    }
    pos = end + 1;
  }
  return make_matmul_workload(dims[0], dims[1], dims[2], requantize, seed);
}

void validate_workload(const Workload& w) {
  auto check_dim = [&](std::uint64_t v, const std::string& what) {
    if (v == 0) throw Error(fmt::format("workload '{}': {} is zero", w.name, what));
    if (v > kMaxDimension) {
      throw Error(fmt::format("workload '{}': {} = {} is larger than {}", w.name, what, v, kMaxDimension));
    }
  };
  check_dim(w.batch, "batch (M)");
  if (w.layers.empty()) throw Error(fmt::format("workload '{}': no layers", w.name));
  // Every matrix of a layer must be one that can be laid out: refused here, with the workload's
  // own sizes, not by the layout in the middle of compiling. Dimensions are at most 2^20, so the
  // products fit.
  const auto check_matrix = [&](std::size_t i, std::string_view what, std::uint64_t rows, std::uint64_t cols) {
    if (rows * cols > static_cast<std::uint64_t>(kMaxTensorElements)) {
      throw Error(fmt::format("workload '{}': layer {}: {} is {}x{}, more than 2^31 elements", w.name, i, what, rows, cols));
    }
  };
  for (std::size_t i = 0; i < w.layers.size(); ++i) {
    const LayerSpec& l = w.layers[i];
    check_dim(l.in_features, fmt::format("layer {} in_features (K)", i));
    check_dim(l.out_features, fmt::format("layer {} out_features (N)", i));
    check_matrix(i, "the input (MxK)", w.batch, l.in_features);
    check_matrix(i, "the weights (KxN)", l.in_features, l.out_features);
    check_matrix(i, "the output (MxN)", w.batch, l.out_features);
    if (i > 0 && l.in_features != w.layers[i - 1].out_features) {
      throw Error(fmt::format("workload '{}': layer {} takes {} features but layer {} gives {}", w.name, i,
                              l.in_features, i - 1, w.layers[i - 1].out_features));
    }
    if (l.int32_output && i + 1 != w.layers.size()) {
      throw Error(fmt::format("workload '{}': layer {}: only the last layer can output int32", w.name, i));
    }
    if (l.shift > 63) throw Error(fmt::format("workload '{}': layer {}: shift {} > 63", w.name, i, l.shift));
  }
}

const std::vector<std::string>& workload_kinds() {
  static const std::vector<std::string> kinds = {"matmul", "mlp"};
  return kinds;
}

std::string expected_kinds_text(const std::vector<std::string>& kinds) {
  std::string s = "expected one of";
  for (std::size_t i = 0; i < kinds.size(); ++i) s += fmt::format("{} \"{}\"", i == 0 ? "" : ",", kinds[i]);
  return s;
}

Workload load_workload(const std::filesystem::path& path) { return load_workload(JsonDocument::load(path), path); }

Workload load_workload(const JsonDocument& doc, const std::filesystem::path& path) {
  JsonObjectReader root(doc, "");
  Workload w;
  w.name = root.has("name") ? root.get_string("name") : path.stem().string();
  const std::string kind = root.get_string("kind");
  w.seed = root.has("seed") ? root.get_uint("seed") : 1;
  if (root.has("preset")) {
    w.preset = root.get_string("preset");
    w.preset_place = doc.error_at("/preset", "").place();
  }
  if (root.has("buffers")) w.buffers = static_cast<unsigned>(root.get_uint("buffers", 1, 3));
  if (kind == "matmul") {
    const auto m = root.get_uint("m", 1, kMaxDimension);
    const auto k = root.get_uint("k", 1, kMaxDimension);
    const auto n = root.get_uint("n", 1, kMaxDimension);
    const bool rq = root.has("requantize") && root.get_bool("requantize");
    const std::string name = w.name;
    const auto seed = w.seed;
    auto preset = w.preset;
    auto preset_place = w.preset_place;
    auto buffers = w.buffers;
    w = make_matmul_workload(m, k, n, rq, seed);
    w.name = name;
    w.preset = preset;
    w.preset_place = preset_place;
    w.buffers = buffers;
    if (rq && root.has("shift")) w.layers[0].shift = static_cast<unsigned>(root.get_uint("shift", 0, 63));
    if (rq && root.has("scale")) {
      w.layers[0].scale = static_cast<std::int32_t>(root.get_int("scale", INT32_MIN, INT32_MAX));
    }
    if (rq && root.has("relu")) w.layers[0].relu = root.get_bool("relu");
  } else if (kind == "mlp") {
    w.batch = static_cast<std::size_t>(root.get_uint("batch", 1, kMaxDimension));
    const nlohmann::json* layers = root.find("layers");
    if (!layers || !layers->is_array() || layers->empty()) {
      throw doc.error_at("/layers", "expected a non-empty array of layers");
    }
    for (std::size_t i = 0; i < layers->size(); ++i) {
      JsonObjectReader lr(doc, fmt::format("/layers/{}", i));
      LayerSpec l;
      l.in_features = static_cast<std::size_t>(lr.get_uint("in", 1, kMaxDimension));
      l.out_features = static_cast<std::size_t>(lr.get_uint("out", 1, kMaxDimension));
      l.scale = lr.has("scale") ? static_cast<std::int32_t>(lr.get_int("scale", INT32_MIN, INT32_MAX)) : 1;
      l.shift = lr.has("shift") ? static_cast<unsigned>(lr.get_uint("shift", 0, 63)) : 0;
      l.relu = lr.has("relu") ? lr.get_bool("relu") : true;
      if (lr.has("output")) {
        const std::string out = lr.get_string("output");
        if (out != "int8" && out != "int32") throw lr.error("output", "expected \"int8\" or \"int32\"");
        l.int32_output = out == "int32";
      }
      lr.finish();
      if (i > 0 && l.in_features != w.layers.back().out_features) {
        throw lr.error("in", fmt::format("layer {} takes {} features but the previous layer gives {}", i,
                                         l.in_features, w.layers.back().out_features));
      }
      if (l.int32_output && i + 1 != layers->size()) {
        throw lr.error("output", "only the last layer can output int32");
      }
      w.layers.push_back(l);
    }
  } else {
    throw root.error("kind", fmt::format("unknown workload kind '{}' ({})", kind, expected_kinds_text(workload_kinds())));
  }
  root.finish();
  validate_workload(w);
  return w;
}

}  // namespace tpuemu
