// SPDX-License-Identifier: Apache-2.0
// Model files (docs/workloads.md): the graph, its shapes and every bad input's message; the model
// reference against hand-computed layers; the DMA gather of an im2col view.
#include <gtest/gtest.h>

#include <random>

#include "gather_dma.h"
#include "test_support.h"
#include "tpuemu/base/json.h"
#include "tpuemu/compile/model.h"
#include "tpuemu/compile/model_reference.h"
#include "tpuemu/compile/reference.h"

namespace tpuemu {
namespace {

using test::error_of;
using test::expect_contains;
using test::TempDir;

std::string model_text(const std::string& layers, const std::string& input = R"({"height": 8, "width": 8, "channels": 4})") {
  return R"({"name": "m", "kind": "model", "batch": 2, "input": )" + input + R"(, "layers": [)" + layers + "]}";
}

Model load_text(const TempDir& dir, const std::string& text) { return load_model(dir.write("m.json", text)); }

TEST(ModelFile, ResNetBlockShapesAndOrder) {
  TempDir dir;
  const Model m = load_text(dir, model_text(R"(
    {"name": "c1", "kind": "conv2d", "out_channels": 8, "kernel": 3, "padding": 1, "relu": true},
    {"name": "c2", "kind": "conv2d", "out_channels": 8, "kernel": 3, "stride": 2, "padding": 1},
    {"name": "sc", "kind": "conv2d", "input": "input", "out_channels": 8, "kernel": 1, "stride": 2},
    {"name": "sum", "kind": "add", "inputs": ["c2", "sc"], "relu": true},
    {"name": "fc", "kind": "dense", "flatten": true, "out": 10, "output": "int32"})"));
  ASSERT_EQ(m.layers.size(), 5u);
  EXPECT_EQ(m.batch, 2u);
  EXPECT_EQ(m.layers[1].out, (TensorShape{4, 4, 8}));
  EXPECT_EQ(m.layers[2].out, (TensorShape{4, 4, 8}));
  EXPECT_EQ(m.layers[3].inputs, (std::vector<std::size_t>{2, 3}));
  EXPECT_EQ(m.layers[4].kernel_h, 4u);
  EXPECT_EQ(m.layers[4].reduction(), 4u * 4 * 8);
  EXPECT_EQ(m.layers[4].out, (TensorShape{1, 1, 10}));
  EXPECT_EQ(m.layers[0].shift, default_shift(3 * 3 * 4));
  EXPECT_EQ(m.rows(0, 2), 128u);
}

TEST(ModelFile, FfnExpandsIntoDenseDenseAdd) {
  TempDir dir;
  const Model m = load_text(dir, model_text(R"({"name": "f", "kind": "ffn", "d_ff": 64, "bias": true})",
                                            R"({"sequence": 16, "features": 32})"));
  ASSERT_EQ(m.layers.size(), 3u);
  EXPECT_EQ(m.layers[0].name, "f.up");
  EXPECT_EQ(m.layers[0].out.channels, 64u);
  EXPECT_TRUE(m.layers[0].relu);
  EXPECT_EQ(m.layers[1].name, "f.down");
  EXPECT_EQ(m.layers[1].out.channels, 32u);
  EXPECT_EQ(m.layers[2].kind, LayerKind::Add);
  EXPECT_EQ(m.layers[2].inputs, (std::vector<std::size_t>{2, 0}));  // down's output + the block's input
  EXPECT_EQ(m.rows(0, 2), 32u);
}

TEST(ModelFile, LayersRunInATopologicalOrder) {
  TempDir dir;
  // "sum" is written before the layer it reads; it runs after it.
  const Model m = load_text(dir, model_text(R"(
    {"name": "a", "kind": "dense", "out": 4},
    {"name": "sum", "kind": "add", "inputs": ["a", "b"]},
    {"name": "b", "kind": "dense", "input": "input", "out": 4})"));
  ASSERT_EQ(m.layers.size(), 3u);
  EXPECT_EQ(m.layers[0].name, "a");
  EXPECT_EQ(m.layers[1].name, "b");
  EXPECT_EQ(m.layers[2].name, "sum");
}

TEST(ModelFile, MlpFilesAreModelsToo) {
  TempDir dir;
  const Model m = load_model(dir.write("mlp.json", R"({"kind": "mlp", "batch": 4, "layers": [
      {"in": 16, "out": 8, "shift": 7}, {"in": 8, "out": 2, "output": "int32"}]})"));
  ASSERT_EQ(m.layers.size(), 2u);
  EXPECT_EQ(m.input, (TensorShape{1, 1, 16}));
  EXPECT_TRUE(m.layers[1].int32_output);
  EXPECT_EQ(m.layers[0].shift, 7u);
}

// The document entry point (fuzz target "model"): the same model as from the file, the name
// defaulting to the given path's stem and errors naming the document's source.
TEST(ModelFile, FromADocumentMatchesTheFile) {
  TempDir dir;
  const std::string text = model_text(R"({"name": "d", "kind": "dense", "out": 8})");
  const Model from_file = load_text(dir, text);
  const Model from_doc = load_model(JsonDocument::parse(text, "text.json"), "models/text.json");
  ASSERT_EQ(from_doc.layers.size(), from_file.layers.size());
  EXPECT_EQ(from_doc.layers[0].out, from_file.layers[0].out);
  EXPECT_EQ(from_doc.name, "m");
  const std::string unnamed = R"({"kind": "matmul", "m": 4, "k": 8, "n": 2})";
  EXPECT_EQ(load_model(JsonDocument::parse(unnamed, "text.json"), "models/mm.json").name, "mm");
  expect_contains(error_of([] { load_model(JsonDocument::parse(R"({"kind": "model"})", "text.json"), "x.json"); }),
                  "text.json:");
}

struct BadModel {
  const char* what;
  std::string text;
  std::vector<std::string> fragments;
};

TEST(ModelFile, BadInputNamesFileLayerAndField) {
  const std::vector<BadModel> cases = {
      {"shapes do not chain", model_text(R"({"name": "d1", "kind": "dense", "out": 8},
                                            {"name": "d2", "kind": "dense", "in": 9, "out": 8})"),
       {"m.json:", "/layers/1/in", "layer 'd2'", "takes 9 features", "gives 8"}},
      {"add operands differ", model_text(R"({"name": "c", "kind": "conv2d", "out_channels": 4, "kernel": 3, "stride": 2},
                                            {"name": "s", "kind": "add", "inputs": ["c", "input"]})"),
       {"/layers/1/inputs", "layer 's'", "differ in shape"}},
      {"unknown layer kind", model_text(R"({"name": "p", "kind": "maxpool"})"),
       {"/layers/0/kind", "layer 'p'", "unknown layer kind 'maxpool'", "\"conv2d\""}},
      {"missing field", model_text(R"({"name": "c", "kind": "conv2d", "kernel": 3})"),
       {"/layers/0", "out_channels"}},
      {"unknown field", model_text(R"({"name": "c", "kind": "conv2d", "out_channels": 4, "kernel": 3, "dilation": 2})"),
       {"/layers/0/dilation"}},
      {"cycle", model_text(R"({"name": "a", "kind": "dense", "input": "b", "out": 4},
                              {"name": "b", "kind": "dense", "input": "a", "out": 4},
                              {"name": "c", "kind": "dense", "input": "input", "out": 4})"),
       {"/layers/0/input", "layer 'a'", "the graph has a cycle", "a <- b <- a"}},
      {"self cycle", model_text(R"({"name": "a", "kind": "add", "inputs": ["a", "input"]})"),
       {"layer 'a'", "cycle"}},
      {"kernel larger than padded input", model_text(R"({"name": "big", "kind": "conv2d", "out_channels": 4, "kernel": 11, "padding": 1})"),
       {"/layers/0/kernel", "layer 'big'", "kernel 11x11 is larger than its padded input 10x10"}},
      {"unknown input", model_text(R"({"name": "a", "kind": "dense", "input": "nope", "out": 4})"),
       {"/layers/0/input", "unknown input 'nope'"}},
      {"unused output", model_text(R"({"name": "a", "kind": "dense", "out": 4}, {"name": "b", "kind": "dense", "input": "input", "out": 4})"),
       {"layer 'a'", "never used"}},
      {"int32 before the end", model_text(R"({"name": "a", "kind": "dense", "out": 4, "output": "int32"}, {"name": "b", "kind": "dense", "out": 4})"),
       {"layer 'a'", "int32"}},
      {"duplicate name", model_text(R"({"name": "a", "kind": "dense", "out": 4}, {"name": "a", "kind": "dense", "out": 4})"),
       {"/layers/1/name", "a second layer"}},
      {"empty layers", model_text(""), {"non-empty array"}},
  };
  TempDir dir;
  for (const BadModel& c : cases) {
    SCOPED_TRACE(c.what);
    const std::string msg = error_of([&] { load_text(dir, c.text); });
    for (const std::string& f : c.fragments) expect_contains(msg, f);
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  }
}

// A hand-computed 3x3 convolution with padding 1 on a 2x2 single-channel image.
TEST(ModelReference, ConvWithPaddingAndBias) {
  Model m;
  m.input = {2, 2, 1};
  ModelLayer c;
  c.name = "c";
  c.kind = LayerKind::Conv2d;
  c.inputs = {0};
  c.in = m.input;
  c.out = {2, 2, 1};
  c.kernel_h = c.kernel_w = 3;
  c.padding = 1;
  c.bias = true;
  c.shift = 0;
  m.layers = {c};
  LayerParams p;
  p.weights = {1, 2, 3, 4, 5, 6, 7, 8, 9};  // W[ky][kx]
  p.bias = {-10};
  const std::vector<std::int8_t> x = {1, 2, 3, 4};  // [[1, 2], [3, 4]]
  const auto out = model_reference(m, 1, x, std::vector<LayerParams>{p});
  // y[0][0] = 5*1 + 6*2 + 8*3 + 9*4 - 10 = 67; y[0][1] = 4*1 + 5*2 + 7*3 + 8*4 - 10 = 57;
  // y[1][0] = 2*1 + 3*2 + 5*3 + 6*4 - 10 = 37; y[1][1] = 1*1 + 2*2 + 4*3 + 5*4 - 10 = 27.
  EXPECT_EQ(out[1].int8, (std::vector<std::int8_t>{67, 57, 37, 27}));
}

TEST(ModelReference, AddSaturatesAndRelu) {
  Model m;
  m.input = {1, 1, 4};
  ModelLayer a;
  a.kind = LayerKind::Add;
  a.inputs = {0, 0};
  a.in = a.out = m.input;
  a.relu = true;
  m.layers = {a};
  const std::vector<std::int8_t> x = {100, -100, 3, -3};
  const auto out = model_reference(m, 1, x, std::vector<LayerParams>{{}});
  EXPECT_EQ(out[1].int8, (std::vector<std::int8_t>{127, 0, 6, 0}));
}

TEST(GatherDma, MergesRunsAndStridesAndZeroRows) {
  // rows 0-3 contiguous from 0x1000, then 2 zero rows, then rows at 0x2000 and 0x2010 (stride 2 rows)
  std::vector<std::optional<std::uint64_t>> src = {0x1000, 0x1008, 0x1010, 0x1018, std::nullopt, std::nullopt,
                                                   0x2000, 0x2010};
  const auto dmas = gather_dmas(src, GatherTarget{100, 0x9000, 32, 8, DmaPath::HbmToVmem});
  ASSERT_EQ(dmas.size(), 3u);
  EXPECT_EQ(dmas[0].hbm_addr, 0x1000u);
  EXPECT_EQ(dmas[0].len, 4u);
  EXPECT_EQ(dmas[0].count, 1u);
  EXPECT_EQ(dmas[1].hbm_addr, 0x9000u);
  EXPECT_EQ(dmas[1].len, 2u);
  EXPECT_EQ(dmas[1].local_addr, 104u);
  EXPECT_EQ(dmas[2].len, 1u);
  EXPECT_EQ(dmas[2].count, 2u);
  EXPECT_EQ(dmas[2].hbm_stride, 0x10u);
  EXPECT_EQ(dmas[2].local_stride, 1u);
  // Every row lands where it should: expand the descriptors again.
  std::vector<std::optional<std::uint64_t>> back(src.size());
  for (const auto& d : dmas) {
    for (std::uint32_t c = 0; c < d.count; ++c) {
      for (std::uint32_t r = 0; r < d.len; ++r) {
        const std::uint64_t hbm = d.hbm_addr + std::uint64_t{c} * d.hbm_stride + r * 8u;
        back[d.local_addr + c * d.local_stride + r - 100] = hbm >= 0x9000 ? std::nullopt : std::optional(hbm);
      }
    }
  }
  EXPECT_EQ(back, src);
}

TEST(GatherDma, RandomSourcesRoundTrip) {
  std::mt19937 rng(5);
  for (int trial = 0; trial < 50; ++trial) {
    std::vector<std::optional<std::uint64_t>> src(1 + rng() % 200);
    std::uint64_t next = 0x4000;
    for (auto& s : src) {
      const unsigned pick = rng() % 4;
      if (pick == 0) s = std::nullopt;
      else if (pick == 1) s = next = 0x4000 + 16 * (rng() % 512);
      else s = next = next + 16;
    }
    const auto dmas = gather_dmas(src, GatherTarget{0, 0x100000, 32, 16, DmaPath::HbmToVmem});
    std::vector<std::optional<std::uint64_t>> back(src.size());
    std::vector<int> hits(src.size(), 0);
    for (const auto& d : dmas) {
      for (std::uint32_t c = 0; c < d.count; ++c) {
        for (std::uint32_t r = 0; r < d.len; ++r) {
          const std::uint64_t hbm = d.hbm_addr + std::uint64_t{c} * d.hbm_stride + r * 16u;
          const std::size_t local = d.local_addr + c * d.local_stride + r;
          ASSERT_LT(local, src.size());
          ++hits[local];
          back[local] = hbm >= 0x100000 ? std::nullopt : std::optional(hbm);
          if (hbm >= 0x100000) {
            ASSERT_LT(hbm, 0x100000u + 32 * 16);  // inside the zero rows
          }
        }
      }
    }
    EXPECT_EQ(back, src);
    EXPECT_EQ(hits, std::vector<int>(src.size(), 1));
  }
}

}  // namespace
}  // namespace tpuemu
