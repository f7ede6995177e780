// SPDX-License-Identifier: Apache-2.0
// The typed attributes (tpuemu/hlo/hlo_attributes.h): every one read from HLO text into its field,
// each malformed form refused at its line and column, the values printed back as XLA prints them
// and read again to the same value, and every shipped module still read.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "tpuemu/base/error.h"
#include "tpuemu/hlo/hlo_attributes.h"
#include "tpuemu/hlo/hlo_module.h"
#include "tpuemu/hlo/hlo_parser.h"

namespace tpuemu::hlo {
namespace {

using Dims = std::vector<std::int64_t>;

// A module whose ENTRY holds three parameters and `line` (line 7, from column 3) as its ROOT's
// operand chain: p an NHWC image, k an HWIO kernel, z a scalar.
constexpr std::uint32_t kLine = 7;
std::string module_with(std::string_view line) {
  return fmt::format(
      "HloModule m\n\nENTRY e {{\n  p = f32[2,8,8,4]{{3,2,1,0}} parameter(0)\n"
      "  k = f32[3,3,4,8]{{3,2,1,0}} parameter(1)\n  z = f32[] parameter(2)\n  {}\n}}\n",
      line);
}

// The ROOT instruction of module_with(line).
Instruction root_of(std::string_view line) {
  const Module m = parse_hlo(module_with(line), "m.hlo");
  const Computation& e = m.entry_computation();
  return e.instructions[e.root];
}

std::string parse_error(std::string_view line) {
  try {
    (void)parse_hlo(module_with(line), "m.hlo");
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(HloAttributes, DimensionListsOfEveryOpcode) {
  EXPECT_EQ(root_of("ROOT b = f32[2,4] broadcast(z), dimensions={}").typed().dimensions, Dims{});
  EXPECT_EQ(root_of("ROOT t = f32[4,8,8,2] transpose(p), dimensions={3,1,2,0}").typed().dimensions,
            (Dims{3, 1, 2, 0}));
  EXPECT_EQ(root_of("ROOT r = f32[2,8,8,4] reverse(p), dimensions={ 1 , 2 }").typed().dimensions,
            (Dims{1, 2}));
  const Instruction neg = root_of("ROOT n = f32[2,8,8,4] negate(p)");
  EXPECT_FALSE(neg.typed().dimensions);
  EXPECT_FALSE(neg.typed().dot_dims);
  EXPECT_FALSE(neg.typed().conv_dims);
  EXPECT_FALSE(neg.typed().window);
  EXPECT_FALSE(neg.typed().slice);
  EXPECT_FALSE(neg.typed().padding);
  EXPECT_EQ(neg.typed().feature_group_count, 1);
  EXPECT_EQ(neg.typed().batch_group_count, 1);
  // The text stays as written too.
  EXPECT_EQ(root_of("ROOT r = f32[2,8,8,4] reverse(p), dimensions={ 1 , 2 }")
                .attribute("dimensions")
                ->value,
            "{ 1 , 2 }");
}

TEST(HloAttributes, DotDimensionNumbers) {
  const Instruction d = root_of(
      "ROOT d = f32[2,8,8] dot(p, p), lhs_batch_dims={0}, lhs_contracting_dims={2,3}, "
      "rhs_batch_dims={0}, "
      "rhs_contracting_dims={1,3}");
  ASSERT_TRUE(d.typed().dot_dims);
  EXPECT_EQ(d.typed().dot_dims->lhs_batch_dimensions, Dims{0});
  EXPECT_EQ(d.typed().dot_dims->rhs_batch_dimensions, Dims{0});
  EXPECT_EQ(d.typed().dot_dims->lhs_contracting_dimensions, (Dims{2, 3}));
  EXPECT_EQ(d.typed().dot_dims->rhs_contracting_dimensions, (Dims{1, 3}));
  EXPECT_EQ(to_string(*d.typed().dot_dims),
            "lhs_batch_dims={0}, lhs_contracting_dims={2,3}, rhs_batch_dims={0}, "
            "rhs_contracting_dims={1,3}");
  // Without batch dimensions, in the other order; absent lists are empty.
  const Instruction m =
      root_of("ROOT d = f32[2,8] dot(p, k), rhs_contracting_dims={0}, lhs_contracting_dims={1}");
  EXPECT_TRUE(m.typed().dot_dims->lhs_batch_dimensions.empty());
  EXPECT_EQ(to_string(*m.typed().dot_dims), "lhs_contracting_dims={1}, rhs_contracting_dims={0}");
  // An outer product names no dimension at all.
  EXPECT_FALSE(root_of("ROOT d = f32[2,8] dot(p, k)").typed().dot_dims);
}

TEST(HloAttributes, ConvolutionDimensionNumbersOfEveryRank) {
  const Instruction c = root_of(
      "ROOT c = f32[2,8,8,8] convolution(p, k), window={size=3x3 pad=1_1x1_1}, "
      "dim_labels=b01f_01io->b01f");
  ASSERT_TRUE(c.typed().conv_dims);
  const ConvolutionDimensionNumbers& n = *c.typed().conv_dims;
  EXPECT_EQ(n.input_batch_dimension, 0);
  EXPECT_EQ(n.input_feature_dimension, 3);
  EXPECT_EQ(n.input_spatial_dimensions, (Dims{1, 2}));
  EXPECT_EQ(n.kernel_input_feature_dimension, 2);
  EXPECT_EQ(n.kernel_output_feature_dimension, 3);
  EXPECT_EQ(n.kernel_spatial_dimensions, (Dims{0, 1}));
  EXPECT_EQ(n.output_batch_dimension, 0);
  EXPECT_EQ(n.output_feature_dimension, 3);
  EXPECT_EQ(n.output_spatial_dimensions, (Dims{1, 2}));

  // NCHW with OIHW, spatial dimensions in another order than their positions.
  const ConvolutionDimensionNumbers nchw =
      *root_of(
           "ROOT c = f32[2,8,8,8] convolution(p, k), window={size=3x3}, dim_labels=bf10_oi10->bf10")
           .typed().conv_dims;
  EXPECT_EQ(nchw.input_feature_dimension, 1);
  EXPECT_EQ(nchw.input_spatial_dimensions, (Dims{3, 2}));
  EXPECT_EQ(nchw.kernel_output_feature_dimension, 0);
  EXPECT_EQ(nchw.kernel_spatial_dimensions, (Dims{3, 2}));
  // 3-D, 1-D and 0-D convolutions, and '?' for a dimension none names.
  const ConvolutionDimensionNumbers three =
      *root_of(
           "ROOT c = f32[1] convolution(p, k), window={size=1x1x1}, dim_labels=b012f_012io->b012f")
           .typed().conv_dims;
  EXPECT_EQ(three.input_spatial_dimensions, (Dims{1, 2, 3}));
  EXPECT_EQ(three.input_feature_dimension, 4);
  EXPECT_EQ(root_of("ROOT c = f32[1] convolution(p, k), window={size=2}, dim_labels=b0f_0io->b0f")
                .typed().conv_dims->kernel_input_feature_dimension,
            1);
  const ConvolutionDimensionNumbers zero =
      *root_of("ROOT c = f32[1] convolution(p, k), dim_labels=bf_io->bf").typed().conv_dims;
  EXPECT_TRUE(zero.input_spatial_dimensions.empty());
  EXPECT_EQ(zero.kernel_output_feature_dimension, 1);
  const ConvolutionDimensionNumbers unnamed =
      *root_of("ROOT c = f32[1] convolution(p, k), window={size=3}, dim_labels=b?0f_0io->b?0f")
           .typed().conv_dims;
  EXPECT_EQ(unnamed.input_spatial_dimensions, Dims{2});
  EXPECT_EQ(unnamed.input_feature_dimension, 3);
  EXPECT_EQ(to_string(unnamed), "b?0f_0io->b?0f");

  const Instruction g = root_of(
      "ROOT c = f32[2,8,8,8] convolution(p, k), window={size=3x3}, dim_labels=b01f_01io->b01f, "
      "feature_group_count=2, "
      "batch_group_count=4");
  EXPECT_EQ(g.typed().feature_group_count, 2);
  EXPECT_EQ(g.typed().batch_group_count, 4);
}

TEST(HloAttributes, WindowsWithEveryField) {
  const Instruction c = root_of(
      "ROOT c = f32[2,4,4,8] convolution(p, k), window={size=3x2 stride=2x1 pad=1_0x-1_2 "
      "lhs_dilate=1x3 rhs_dilate=2x1 "
      "rhs_reversal=0x1}, dim_labels=b01f_01io->b01f");
  ASSERT_TRUE(c.typed().window);
  ASSERT_EQ(c.typed().window->dimensions.size(), 2u);
  const WindowDimension& y = c.typed().window->dimensions[0];
  const WindowDimension& x = c.typed().window->dimensions[1];
  EXPECT_EQ(y, (WindowDimension{.size = 3,
                                .stride = 2,
                                .padding_low = 1,
                                .padding_high = 0,
                                .base_dilation = 1,
                                .window_dilation = 2,
                                .window_reversal = false}));
  EXPECT_EQ(x, (WindowDimension{.size = 2,
                                .stride = 1,
                                .padding_low = -1,
                                .padding_high = 2,
                                .base_dilation = 3,
                                .window_dilation = 1,
                                .window_reversal = true}));

  // Fields in any order, over several lines with a comment; the ones left out have their defaults.
  const Instruction spread = root_of(
      "ROOT c = f32[2,8,8,8] convolution(p, k),\n    window={pad=2_2x2_2 /* same */\n    "
      "size=5x5},\n"
      "    dim_labels=b01f_01io->b01f");
  ASSERT_EQ(spread.typed().window->dimensions.size(), 2u);
  EXPECT_EQ(spread.typed().window->dimensions[1],
            (WindowDimension{.size = 5, .stride = 1, .padding_low = 2, .padding_high = 2}));
  // A 1-D window as one number, and the empty window of a 0-D convolution.
  EXPECT_EQ(root_of("ROOT c = f32[1] convolution(p, k), window={size=4 stride=2 pad=-1_3}, "
                    "dim_labels=b0f_0io->b0f")
                .typed().window->dimensions,
            (std::vector<WindowDimension>{
                {.size = 4, .stride = 2, .padding_low = -1, .padding_high = 3}}));
  EXPECT_TRUE(root_of("ROOT c = f32[1] convolution(p, k), window={}, dim_labels=bf_io->bf")
                  .typed().window->dimensions.empty());
}

TEST(HloAttributes, SlicesAndPaddingConfigs) {
  const Instruction s =
      root_of("ROOT s = f32[2,4,8,2] slice(p), slice={[0:2], [0:8:2], [0:8], [1:4:2]}");
  ASSERT_TRUE(s.typed().slice);
  EXPECT_EQ(*s.typed().slice, (std::vector<SliceDimension>{{0, 2, 1}, {0, 8, 2}, {0, 8, 1}, {1, 4, 2}}));
  EXPECT_EQ(root_of("ROOT s = f32[] slice(z), slice={}").typed().slice->size(), 0u);

  const Instruction pad = root_of("ROOT q = f32[2,17,12,4] pad(p, z), padding=0_0x1_1_1x-1_5x0_0");
  ASSERT_TRUE(pad.typed().padding);
  EXPECT_EQ(pad.typed().padding->dimensions,
            (std::vector<PaddingDimension>{{0, 0, 0}, {1, 1, 1}, {-1, 5, 0}, {0, 0, 0}}));
  EXPECT_EQ(
      root_of("ROOT q = f32[2,10,10,4] pad(p, z), padding=0_0x1_1x1_1x0_0").typed().padding->dimensions[1],
      (PaddingDimension{1, 1, 0}));
}

TEST(HloAttributes, IndexAndCalledComputationsAreTypedToo) {
  const Module m = parse_hlo(
      "HloModule m\nadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] "
      "add(a, b)\n}\n"
      "ENTRY e {\n  t = (f32[4], f32[]) parameter(0)\n  v = f32[4] get-tuple-element(t), index=0\n"
      "  i = f32[] get-tuple-element(t), index=1\n"
      "  ROOT r = f32[] reduce(v, i), dimensions={0}, to_apply=add\n}\n",
      "m.hlo");
  const Computation& e = m.entry_computation();
  EXPECT_EQ(e.instructions[1].tuple_index, 0);
  EXPECT_EQ(e.instructions[2].tuple_index, 1);
  EXPECT_EQ(e.instructions[3].called, std::vector<std::size_t>{0});
  EXPECT_EQ(e.instructions[3].typed().dimensions, Dims{0});
}

// Attributes that are not typed keep any value: only the named ones are read.
TEST(HloAttributes, OtherAttributesStayVerbatim) {
  const Instruction n = root_of(
      "ROOT n = f32[2,8,8,4] negate(p), some_window={size=?? pad=x}, index=banana, "
      "padding_type=PADDING_VALID");
  EXPECT_EQ(n.attribute("some_window")->value, "{size=?? pad=x}");
  EXPECT_EQ(n.attribute("index")->value, "banana");
  EXPECT_FALSE(n.typed().window);
  EXPECT_FALSE(n.typed().padding);
}

struct Malformed {
  const char* line;
  const char* at;  // the first occurrence of this text in `line` is where the error points
  const char* cause;
};

TEST(HloAttributesErrors, EachMalformedFormAtItsLineAndColumn) {
  const Malformed cases[] = {
      // dimensions and the dot's lists
      {"ROOT b = f32[2,4] broadcast(z), dimensions=1", "1",
       "malformed dimensions: expected '{' opening the list of dimensions, found '1'"},
      {"ROOT b = f32[2,4] broadcast(z), dimensions={0,-1}", "-1",
       "malformed dimensions: dimension -1 is negative"},
      {"ROOT b = f32[2,4] broadcast(z), dimensions={1,1}", "1}",
       "malformed dimensions: dimension 1 appears twice"},
      {"ROOT b = f32[2,4] broadcast(z), dimensions={0,x}", "x",
       "malformed dimensions: expected a dimension number, found 'x'"},
      {"ROOT b = f32[2,4] broadcast(z), dimensions={0 1}", "1}",
       "malformed dimensions: expected '}' closing the list of dimensions, found '1'"},
      {"ROOT b = f32[2,4] broadcast(z), dimensions={99999999999999999999}", "9",
       "malformed dimensions: a dimension number does not fit 64 bits"},
      {"ROOT b = f32[2,4] broadcast(z), dimensions={0}, dimensions={1}", "dimensions={1}",
       "malformed dimensions: a second dimensions= on 'b' (first at 7:35)"},
      {"ROOT b = f32[2,4] broadcast(z), dimensions={0}x", "x",
       "malformed dimensions: unexpected 'x' after the value"},
      {"ROOT d = f32[2,8] dot(p, k), lhs_contracting_dims={1}, rhs_contracting_dims={0,1}", "rhs_",
       "malformed rhs_contracting_dims: rhs_contracting_dims has 2 contracting dimensions, "
       "lhs_contracting_dims 1: lhs and "
       "rhs pair them one to one"},
      {"ROOT d = f32[2,8] dot(p, k), lhs_contracting_dims={1}", "lhs_",
       "malformed lhs_contracting_dims: rhs_contracting_dims has 0 contracting dimensions, "
       "lhs_contracting_dims 1: lhs and "
       "rhs pair them one to one"},
      {"ROOT d = f32[2,8] dot(p, k), lhs_batch_dims={0}, lhs_contracting_dims={1}, "
       "rhs_contracting_dims={0}",
       "lhs_b",
       "malformed lhs_batch_dims: rhs_batch_dims has 0 batch dimensions, lhs_batch_dims 1: lhs and "
       "rhs pair them one to "
       "one"},
      // dim_labels
      {"ROOT c = f32[1] convolution(p, k), dim_labels=b01f", "b01f",
       "malformed dim_labels: expected INPUT_KERNEL->OUTPUT labels such as b01f_01io->b01f"},
      {"ROOT c = f32[1] convolution(p, k), dim_labels=b01f_01io", "b01f",
       "malformed dim_labels: expected INPUT_KERNEL->OUTPUT labels such as b01f_01io->b01f"},
      {"ROOT c = f32[1] convolution(p, k), dim_labels=b01x_01io->b01f", "x",
       "malformed dim_labels: 'x' is not a label of the input (b, f, a spatial digit or ?)"},
      {"ROOT c = f32[1] convolution(p, k), dim_labels=b01f_01iq->b01f", "q",
       "malformed dim_labels: 'q' is not a label of the kernel (i, o, a spatial digit or ?)"},
      {"ROOT c = f32[1] convolution(p, k), dim_labels=b01b_01io->b01f", "b_",
       "malformed dim_labels: 'b' appears twice in the input labels 'b01b'"},
      {"ROOT c = f32[1] convolution(p, k), dim_labels=b01f_01io->b01", "b01\n",
       "malformed dim_labels: the output labels 'b01' have no 'f'"},
      {"ROOT c = f32[1] convolution(p, k), dim_labels=b02f_01io->b01f", "2",
       "malformed dim_labels: spatial dimension 2 in the input labels 'b02f' of 2 spatial "
       "dimensions"},
      {"ROOT c = f32[1] convolution(p, k), dim_labels=b00f_01io->b01f", "0f_",
       "malformed dim_labels: '0' appears twice in the input labels 'b00f'"},
      {"ROOT c = f32[1] convolution(p, k), dim_labels=b01f_0io->b01f", "0io",
       "malformed dim_labels: the kernel labels '0io' have 1 spatial dimension, the input labels "
       "'b01f' 2"},
      {"ROOT c = f32[1] convolution(p, k), window={size=3}, dim_labels=b01f_01io->b01f", "window",
       "malformed window: 1 dimension for the 2 spatial dimensions of dim_labels=b01f_01io->b01f"},
      {"ROOT c = f32[1] convolution(p, k), feature_group_count=0", "0",
       "malformed feature_group_count: feature_group_count 0 is not positive"},
      {"ROOT c = f32[1] convolution(p, k), batch_group_count=two", "two",
       "malformed batch_group_count: expected an integer for batch_group_count, found 't'"},
      // window
      {"ROOT c = f32[1] convolution(p, k), window=size=3", "size",
       "malformed window: expected '{' opening the window, found 's'"},
      {"ROOT c = f32[1] convolution(p, k), window={size=3x3 stride=2}", "stride",
       "malformed window: stride has 1 dimension, size has 2"},
      {"ROOT c = f32[1] convolution(p, k), window={stride=2x2}", "stride",
       "malformed window: stride has 2 dimensions, size has 0"},
      {"ROOT c = f32[1] convolution(p, k), window={size=3x3 pad=1_1}", "pad",
       "malformed window: pad has 1 dimension, size has 2"},
      {"ROOT c = f32[1] convolution(p, k), window={size=3x3 stride=2x0}", "0}",
       "malformed window: stride 0 is not positive"},
      {"ROOT c = f32[1] convolution(p, k), window={size=3x3 rhs_dilate=1x-1}", "-1",
       "malformed window: rhs_dilate -1 is not positive"},
      {"ROOT c = f32[1] convolution(p, k), window={size=-3}", "-3",
       "malformed window: window size -3 is negative"},
      {"ROOT c = f32[1] convolution(p, k), window={size=3x3 rhs_reversal=0x2}", "2}",
       "malformed window: rhs_reversal 2 is not 0 or 1"},
      {"ROOT c = f32[1] convolution(p, k), window={size=3x3 pad=1_1x1_1_1}", "_1}",
       "malformed window: a window's pad is LOW_HIGH per dimension (no interior padding)"},
      {"ROOT c = f32[1] convolution(p, k), window={size=3x3 pad=1x1}", "x1}",
       "malformed window: expected '_' between the low and high padding of pad, found 'x'"},
      {"ROOT c = f32[1] convolution(p, k), window={size=3x3 size=3x3}", "size=3x3}",
       "malformed window: a second size= in the window (first at 7:46)"},
      {"ROOT c = f32[1] convolution(p, k), window={size=3x3 strides=2x2}", "strides",
       "malformed window: unknown window field 'strides' (the fields are size, stride, pad, "
       "lhs_dilate, rhs_dilate, "
       "rhs_reversal)"},
      {"ROOT c = f32[1] convolution(p, k), window={size=3x3, stride=2x2}", ", stride",
       "malformed window: expected a window field (size, stride, pad, lhs_dilate, rhs_dilate, "
       "rhs_reversal) or '}', found "
       "','"},
      {"ROOT c = f32[1] convolution(p, k), window={size 3x3}", " 3x3",
       "malformed window: expected '=' after window field 'size', found ' '"},
      {"ROOT c = f32[1] convolution(p, k), window={size=3x}", "}",
       "malformed window: expected a number for size, found '}'"},
      // slice
      {"ROOT s = f32[2] slice(p), slice={[0:2:1:1], [0:8], [0:8], [0:4]}", ":1]",
       "malformed slice: expected ']' closing the slice range, found ':'"},
      {"ROOT s = f32[2] slice(p), slice={[0], [0:8], [0:8], [0:4]}", "]",
       "malformed slice: expected ':' after the slice start, found ']'"},
      {"ROOT s = f32[2] slice(p), slice={[-1:2], [0:8], [0:8], [0:4]}", "-1",
       "malformed slice: slice start -1 is negative"},
      {"ROOT s = f32[2] slice(p), slice={[0:2], [5:4], [0:8], [0:4]}", "4]",
       "malformed slice: slice limit 4 is below its start 5"},
      {"ROOT s = f32[2] slice(p), slice={[0:2], [0:8:0], [0:8], [0:4]}", "0]",
       "malformed slice: slice stride 0 is not positive"},
      {"ROOT s = f32[2,8,8] slice(p), slice={[0:2], [0:8]}", "{[",
       "malformed slice: 2 ranges for the rank-3 shape f32[2,8,8]"},
      {"ROOT s = f32[2] slice(p), slice=[0:2]", "[",
       "malformed slice: expected '{' opening the slice, found '['"},
      // padding
      {"ROOT q = f32[2,10,10,4] pad(p, z), padding=0_0x1_1x1_1", "0_0",
       "malformed padding: 3 dimensions for the rank-4 shape f32[2,10,10,4]"},
      {"ROOT q = f32[2,10,10,4] pad(p, z), padding=0_0x1_1_-1x1_1x0_0", "-1",
       "malformed padding: interior padding -1 is negative"},
      {"ROOT q = f32[2,10,10,4] pad(p, z), padding=0x1_1x1_1x0_0", "x",
       "malformed padding: expected '_' between the low and high padding, found 'x'"},
      {"ROOT q = f32[2,10,10,4] pad(p, z), padding=0_0x1_1x1_1x0_", "\n",
       "malformed padding: expected a high edge padding, found the end of the value"},
      {"ROOT q = f32[2,10,10,4] pad(p, z), padding=0_0x1_1x1_1x0_0y", "y",
       "malformed padding: unexpected 'y' after the value"},
  };
  for (const Malformed& c : cases) {
    const std::string line = c.line;
    // "at" may name the newline after the line: the end of the value.
    const std::string with_end = line + "\n";
    const std::size_t offset = with_end.find(c.at, line.find(", ") + 1);
    ASSERT_NE(offset, std::string::npos) << c.line;
    EXPECT_EQ(parse_error(line), fmt::format("m.hlo:{}:{}: {}", kLine, 3 + offset, c.cause))
        << c.line;
  }
}

TEST(HloAttributesErrors, PositionsInsideValuesSpreadOverLines) {
  // The error points at its token on the value's third line.
  const std::string line =
      "ROOT c = f32[1] convolution(p, k), window={\n    size=3x3\n      stride=1x0}";
  EXPECT_EQ(parse_error(line),
            fmt::format("m.hlo:{}:16: malformed window: stride 0 is not positive", kLine + 2));
  EXPECT_EQ(
      parse_error("ROOT s = f32[2] slice(z), slice={[0:1],\n  [3:2]}"),
      fmt::format("m.hlo:{}:6: malformed slice: slice limit 2 is below its start 3", kLine + 1));
}

// What XLA prints reads back to the same value, and prints the same again: the figures the
// executor uses (the dense layer's dot, the conv2d's window and labels) among them.
TEST(HloAttributes, PrintedFormsRoundTrip) {
  for (const char* window :
       {"size=3x3", "size=3x3 pad=1_1x1_1", "size=1x1 stride=2x2",
        "size=3x2 stride=2x1 pad=1_0x-1_2 lhs_dilate=1x3 rhs_dilate=2x1 rhs_reversal=0x1",
        "size=5 stride=3", ""}) {
    const std::string line =
        fmt::format("ROOT c = f32[1] convolution(p, k), window={{{}}}", window);
    const Window w = *root_of(line).typed().window;
    EXPECT_EQ(to_string(w), window);
    EXPECT_EQ(
        *root_of(fmt::format("ROOT c = f32[1] convolution(p, k), window={{{}}}", to_string(w)))
             .typed().window,
        w);
  }
  for (const char* labels : {"b01f_01io->b01f", "bf01_oi01->bf01", "b012f_012io->b012f",
                             "bf_io->bf", "f0b_i0o->b0f", "b?0f_0io->b?0f"}) {
    const ConvolutionDimensionNumbers n =
        *root_of(fmt::format("ROOT c = f32[1] convolution(p, k), dim_labels={}", labels)).typed().conv_dims;
    EXPECT_EQ(to_string(n), labels);
  }
  for (const char* dot : {"lhs_contracting_dims={1}, rhs_contracting_dims={0}",
                          "lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, "
                          "rhs_contracting_dims={1}",
                          "lhs_batch_dims={0,1}, lhs_contracting_dims={}, rhs_batch_dims={1,0}, "
                          "rhs_contracting_dims={}"}) {
    const DotDimensionNumbers n =
        *root_of(fmt::format("ROOT d = f32[1] dot(p, k), {}", dot)).typed().dot_dims;
    EXPECT_EQ(to_string(n), dot);
  }
  for (const char* padding : {"0_0x1_1x1_1x0_0", "0_0_0x1_1_1x-1_5_0x0_0_0"}) {
    const PaddingConfig p =
        *root_of(fmt::format("ROOT q = f32[1,1,1,1] pad(p, z), padding={}", padding)).typed().padding;
    EXPECT_EQ(to_string(p), padding);
  }
  for (const char* slice :
       {"{[0:2], [0:8], [0:8], [0:4]}", "{[0:2:1], [0:8:2], [1:8:3], [0:4:1]}"}) {
    const std::vector<SliceDimension> s =
        *root_of(fmt::format("ROOT s = f32[1,1,1,1] slice(p), slice={}", slice)).typed().slice;
    EXPECT_EQ(to_string(s), slice);
  }
  EXPECT_EQ(dimensions_to_string({3, 1, 2, 0}), "{3,1,2,0}");
  EXPECT_EQ(dimensions_to_string({}), "{}");
}

// The typed attributes leave every module the project ships readable.
TEST(HloAttributes, ShippedModulesStillRead) {
  const std::filesystem::path data = std::filesystem::path(TPUEMU_TEST_DATA_DIR);
  std::size_t read = 0, typed = 0;
  for (const std::filesystem::path& dir :
       {data / "hlo", data / "hlo" / "oom", data / ".." / ".." / "examples" / "hlo"}) {
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
      if (entry.path().extension() != ".hlo") continue;
      SCOPED_TRACE(entry.path().string());
      const Module m = read_hlo_file(entry.path());
      ++read;
      for (const Computation& c : m.computations)
        for (const Instruction& i : c.instructions)
          typed += i.typed().dimensions || i.typed().dot_dims || i.typed().slice ? 1 : 0;
    }
  }
  EXPECT_GT(read, 20u);
  EXPECT_GT(typed, 50u);
}

}  // namespace
}  // namespace tpuemu::hlo
