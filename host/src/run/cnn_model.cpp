// SPDX-License-Identifier: Apache-2.0
// The "cnn" workload files of serving traces (examples/serving/), apart from the trace builder so
// that the loader builds without the device (tests/fuzz/fuzz_inputs.cpp compiles this file alone).
#include <cstddef>
#include <filesystem>
#include <string>

#include <fmt/format.h>

#include "tpuemu/base/error.h"
#include "tpuemu/base/json.h"
#include "tpuemu/run/serving_trace.h"

namespace tpuemu {

CnnModel load_cnn_model(const std::filesystem::path& path) { return load_cnn_model(JsonDocument::load(path), path); }

CnnModel load_cnn_model(const JsonDocument& doc, const std::filesystem::path& path) {
  JsonObjectReader root(doc, "");
  CnnModel m;
  m.name = root.has("name") ? root.get_string("name") : path.stem().string();
  const std::string kind = root.get_string("kind");
  if (kind != "cnn") throw root.error("kind", fmt::format("expected \"cnn\", not '{}'", kind));
  m.height = static_cast<std::size_t>(root.get_uint("height", 1, 4096));
  m.width = static_cast<std::size_t>(root.get_uint("width", 1, 4096));
  m.channels = static_cast<std::size_t>(root.get_uint("channels", 1, 65536));
  m.classes = static_cast<std::size_t>(root.get_uint("classes", 1, 1u << 20));
  if (root.has("seed")) root.get_uint("seed");
  const nlohmann::json* convs = root.find("convs");
  if (!convs || !convs->is_array() || convs->empty()) {
    throw doc.error_at("/convs", "expected a non-empty array of conv layers");
  }
  for (std::size_t i = 0; i < convs->size(); ++i) {
    JsonObjectReader cr(doc, fmt::format("/convs/{}", i));
    ConvLayer c;
    c.kernel = cr.has("kernel") ? static_cast<std::size_t>(cr.get_uint("kernel", 1, 15)) : 3;
    c.stride = cr.has("stride") ? static_cast<std::size_t>(cr.get_uint("stride", 1, 8)) : 1;
    c.out_channels = static_cast<std::size_t>(cr.get_uint("out", 1, 65536));
    cr.finish();
    m.convs.push_back(c);
  }
  root.finish();
  return m;
}

}  // namespace tpuemu
