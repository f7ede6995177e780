// SPDX-License-Identifier: Apache-2.0
// HLO programs as models for the device (tpuemu/hlo_exec/hlo_model.h): the layers, their shapes,
// folded biases and ReLUs, and the first instruction that cannot run named at its line and column.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <string_view>

#include "tpuemu/base/error.h"
#include "tpuemu/hlo/hlo_parser.h"
#include "tpuemu/hlo_exec/hlo_model.h"

namespace tpuemu::hlo_exec {
namespace {

// A message holds `part` (the failure shows the whole message).
void expect_has(const std::string& message, std::string_view part) {
  EXPECT_NE(message.find(part), std::string::npos) << "message: " << message;
}

const std::filesystem::path kData = std::filesystem::path(TPUEMU_TEST_DATA_DIR) / "hlo";

HloModel translate(std::string_view text) { return model_from_hlo(hlo::parse_hlo(std::string(text), "t.hlo")); }

// The translation's error message, or "" when it translates.
std::string error_of(std::string_view text) {
  try {
    (void)translate(text);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(HloExecute, Mlp3IsThreeDenseLayersWithBiasAndRelu) {
  const HloModel m = model_from_hlo(hlo::read_hlo_file(kData / "mlp3.hlo"));
  EXPECT_EQ(m.model.name, "jit_mlp");
  EXPECT_EQ(m.model.batch, 8u);
  EXPECT_EQ(m.model.input_name, "x");
  EXPECT_EQ(m.model.input, (TensorShape{1, 1, 32}));
  ASSERT_EQ(m.model.layers.size(), 3u);
  const std::size_t outs[] = {64, 64, 16};
  for (std::size_t i = 0; i < 3; ++i) {
    const ModelLayer& l = m.model.layers[i];
    EXPECT_EQ(l.name, "dot." + std::to_string(i + 1));
    EXPECT_EQ(l.kind, LayerKind::Dense);
    EXPECT_EQ(l.inputs, std::vector<std::size_t>{i});
    EXPECT_EQ(l.out, (TensorShape{1, 1, outs[i]}));
    EXPECT_TRUE(l.bias) << i;
    EXPECT_TRUE(l.relu) << i;
    EXPECT_FALSE(l.flatten);
    EXPECT_FALSE(l.int32_output);
    EXPECT_EQ(l.shift, default_shift(l.reduction()));
  }
  EXPECT_EQ(m.model.layers[0].in.channels, 32u);
  EXPECT_EQ(m.original_dtypes, std::vector<std::string>{"f32"});
}

// A convolution with bias and ReLU, a residual add, a 1x1 stride-2 convolution without either, a
// reshape to [batch, features] and a flattening dense layer without bias: every form the compiler
// has, and bf16 beside f32 in the dtypes.
constexpr std::string_view kCnn = R"(HloModule cnn
ENTRY main {
  img = bf16[2,8,8,4]{3,2,1,0} parameter(0)
  k1 = f32[3,3,4,4] parameter(1)
  b1 = f32[4] parameter(2)
  k2 = f32[1,1,4,8] parameter(3)
  w = f32[128,10] parameter(4)
  zero = f32[] constant(0)
  c1 = f32[2,8,8,4] convolution(img, k1), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
  bb = f32[2,8,8,4] broadcast(b1), dimensions={3}
  a1 = f32[2,8,8,4] add(bb, c1)
  z = f32[2,8,8,4] broadcast(zero), dimensions={}
  r1 = f32[2,8,8,4] maximum(z, a1)
  res = f32[2,8,8,4] add(r1, img)
  c2 = f32[2,4,4,8] convolution(res, k2), window={size=1x1 stride=2x2}, dim_labels=b01f_01io->b01f
  flat = f32[2,128] reshape(c2)
  d = f32[2,10] dot(flat, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT t = (f32[2,10]) tuple(d)
}
)";

TEST(HloExecute, ConvolutionsResidualAndFlatteningDense) {
  const HloModel m = translate(kCnn);
  EXPECT_EQ(m.model.batch, 2u);
  EXPECT_EQ(m.model.input, (TensorShape{8, 8, 4}));
  ASSERT_EQ(m.model.layers.size(), 4u);
  const ModelLayer &c1 = m.model.layers[0], &res = m.model.layers[1], &c2 = m.model.layers[2], &d = m.model.layers[3];
  EXPECT_EQ(c1.kind, LayerKind::Conv2d);
  EXPECT_EQ(c1.kernel_h, 3u);
  EXPECT_EQ(c1.padding, 1u);
  EXPECT_EQ(c1.stride, 1u);
  EXPECT_TRUE(c1.bias);
  EXPECT_TRUE(c1.relu);
  EXPECT_EQ(c1.out, (TensorShape{8, 8, 4}));
  EXPECT_EQ(res.kind, LayerKind::Add);
  EXPECT_EQ(res.inputs, (std::vector<std::size_t>{1, 0}));
  EXPECT_FALSE(res.relu);
  EXPECT_EQ(c2.kind, LayerKind::Conv2d);
  EXPECT_EQ(c2.stride, 2u);
  EXPECT_EQ(c2.padding, 0u);
  EXPECT_FALSE(c2.bias);
  EXPECT_FALSE(c2.relu);
  EXPECT_EQ(c2.out, (TensorShape{4, 4, 8}));
  EXPECT_EQ(d.kind, LayerKind::Dense);
  EXPECT_TRUE(d.flatten);
  EXPECT_EQ(d.kernel_h, 4u);
  EXPECT_EQ(d.reduction(), 128u);
  EXPECT_EQ(d.out, (TensorShape{1, 1, 10}));
  EXPECT_FALSE(d.bias);
  EXPECT_EQ(m.original_dtypes, (std::vector<std::string>{"bf16", "f32"}));
}

// JAX's bias add as it prints it before optimizations: the bias reshaped to [1,N], then broadcast
// with dimensions={0,1}; and a bias broadcast along another dimension, which is no bias.
TEST(HloExecute, BiasReshapedToARowAsJaxPrintsIt) {
  const std::string head = "HloModule m\nENTRY e {\n  x = f32[2,4] parameter(0)\n  w = f32[4,8] parameter(1)\n"
                           "  b = f32[8] parameter(2)\n  d = f32[2,8] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n";
  const HloModel m = translate(head + "  r = f32[1,8] reshape(b)\n  bb = f32[2,8] broadcast(r), dimensions={0,1}\n"
                                      "  ROOT a = f32[2,8] add(d, bb)\n}\n");
  ASSERT_EQ(m.model.layers.size(), 1u);
  EXPECT_TRUE(m.model.layers[0].bias);
  EXPECT_FALSE(m.model.layers[0].relu);
  expect_has(error_of("HloModule m\nENTRY e {\n  x = f32[8,4] parameter(0)\n  w = f32[4,8] parameter(1)\n"
                      "  b = f32[8] parameter(2)\n  d = f32[8,8] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
                      "  bb = f32[8,8] broadcast(b), dimensions={0}\n  ROOT a = f32[8,8] add(d, bb)\n}\n"),
             "t.hlo:7:3: broadcast runs on the device only as a bias");
}

TEST(HloExecute, FirstUnsupportedOpcodeNamedAtItsLine) {
  try {
    (void)model_from_hlo(hlo::read_hlo_file(kData / "exponential.hlo"));
    FAIL() << "exponential translated";
  } catch (const Error& e) {
    EXPECT_EQ(e.place(), (kData / "exponential.hlo").string() + ":9:8");
    EXPECT_NE(e.cause().find("opcode 'exponential' is not supported on the device (supported: dot, "), std::string::npos)
        << e.what();
  }
  // The first in the file wins, before any form is looked at.
  expect_has(error_of("HloModule m\nENTRY e {\n  x = f32[2,4] parameter(0)\n  n = f32[2,4] negate(x)\n"
                     "  ROOT t = f32[2,4] tanh(n)\n}\n"), "t.hlo:4:3: opcode 'negate'");
}

TEST(HloExecute, SupportedOpcodesInFormsWithoutALayerAreRefused) {
  const std::string head = "HloModule m\nENTRY e {\n  x = f32[2,4] parameter(0)\n  w = f32[4,4] parameter(1)\n";
  // maximum with something other than zero
  expect_has(error_of(head + "  d = f32[2,4] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
                            "  ROOT m = f32[2,4] maximum(d, x)\n}\n"), "t.hlo:6:8: maximum runs on the device only as a ReLU");
  // a ReLU of a value read twice cannot fold into its layer
  expect_has(error_of(head + "  zero = f32[] constant(0)\n  z = f32[2,4] broadcast(zero), dimensions={}\n"
                            "  d = f32[2,4] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
                            "  r = f32[2,4] maximum(d, z)\n  ROOT a = f32[2,4] add(r, d)\n}\n"), "t.hlo:8:3: a ReLU runs on the device inside the layer it follows");
  // a dot contracting the wrong dimension
  expect_has(error_of(head + "  ROOT d = f32[4,4] dot(x, w), lhs_contracting_dims={0}, rhs_contracting_dims={0}\n}\n"), "t.hlo:5:8: a dot runs on the device as a dense layer");
  // weights shared by two layers
  expect_has(error_of(head + "  d = f32[2,4] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
                            "  ROOT e = f32[2,4] dot(d, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}\n"), "t.hlo:6:8: 'w' is already weights of a layer");
  // a layer whose value the result never reads
  expect_has(error_of(head + "  d = f32[2,4] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
                            "  ROOT a = f32[2,4] add(x, x)\n}\n"), "t.hlo:5:3: the value of 'd' is not used by the result");
  // nothing runs
  expect_has(error_of(head + "  ROOT t = (f32[2,4]) tuple(x)\n}\n"), "t.hlo:5:8: the result is not written by a dense");
}

// A tensor of the device holds 1..kMaxDimension values along each dimension: an empty or a
// dynamic one is refused at the instruction that brings it in, never later as a --batch nobody
// gave.
TEST(HloExecute, EmptyAndDynamicDimensionsRefusedAtTheirInstruction) {
  const auto dense = [](std::string_view input, std::string_view weights) {
    return "HloModule m\nENTRY e {\n  x = " + std::string(input) + " parameter(0)\n  w = " + std::string(weights) +
           " parameter(1)\n  ROOT d = f32[2,4] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}\n";
  };
  EXPECT_EQ(error_of(dense("f32[0,32]", "f32[32,4]")),
            "t.hlo:3:3: 'x' of shape [0,32]: dimension 0 is 0; a tensor on the device holds 1..1048576 "
            "values along each dimension");
  EXPECT_EQ(error_of(dense("f32[2,32]", "f32[32,0]")),
            "t.hlo:4:3: 'w' of shape [32,0]: dimension 1 is 0; a tensor on the device holds 1..1048576 "
            "values along each dimension");
  EXPECT_EQ(error_of(dense("f32[2,2097152]", "f32[2097152,4]")),
            "t.hlo:3:3: 'x' of shape [2,2097152]: dimension 1 is 2097152; a tensor on the device holds "
            "1..1048576 values along each dimension");
  EXPECT_EQ(error_of(dense("f32[<=2,32]", "f32[32,4]")),
            "t.hlo:3:3: 'x' of shape [<=2,32]: dimension 0 is dynamic; the device runs static shapes");
  EXPECT_EQ(error_of(dense("f32[?,32]", "f32[32,4]")),
            "t.hlo:3:3: 'x' of shape [?,32]: dimension 0 is dynamic; the device runs static shapes");
}

}  // namespace
}  // namespace tpuemu::hlo_exec
