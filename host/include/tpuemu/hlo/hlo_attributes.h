// SPDX-License-Identifier: Apache-2.0
// Layer hlo: the instruction attributes whose values have a structure, read into types once, when
// the module is read: dimension lists, dot and convolution dimension numbers, windows, slices,
// padding configs and group counts. The types follow XLA's messages of the same names
// (xla/xla_data.proto); the text forms are the ones XLA prints and reads (docs/hlo.md, "What is
// read"). Nothing after the reader parses attribute text: an analysis or the executor reads
// these fields of hlo::Instruction.
#pragma once

#include <cstdint>
#include <string>
#include <optional>
#include <vector>

namespace tpuemu::hlo {

// lhs_batch_dims={0} lhs_contracting_dims={2} rhs_batch_dims={0} rhs_contracting_dims={1}: four
// separate attributes of a dot; an absent one is an empty list, as in XLA.
struct DotDimensionNumbers {
  std::vector<std::int64_t> lhs_batch_dimensions;
  std::vector<std::int64_t> rhs_batch_dimensions;
  std::vector<std::int64_t> lhs_contracting_dimensions;
  std::vector<std::int64_t> rhs_contracting_dimensions;

  bool operator==(const DotDimensionNumbers&) const = default;
};

// dim_labels=b01f_01io->b01f: which dimension of the input (lhs), the kernel (rhs) and the output
// is the batch, the feature and each spatial dimension. Spatial dimension k is the position of
// digit k in its labels; '?' marks a dimension none of them names.
struct ConvolutionDimensionNumbers {
  std::int64_t input_batch_dimension = 0;
  std::int64_t input_feature_dimension = 0;
  std::vector<std::int64_t> input_spatial_dimensions;
  std::int64_t kernel_input_feature_dimension = 0;
  std::int64_t kernel_output_feature_dimension = 0;
  std::vector<std::int64_t> kernel_spatial_dimensions;
  std::int64_t output_batch_dimension = 0;
  std::int64_t output_feature_dimension = 0;
  std::vector<std::int64_t> output_spatial_dimensions;

  bool operator==(const ConvolutionDimensionNumbers&) const = default;
};

// One dimension of window={size=3x3 stride=2x2 pad=1_1x1_1 lhs_dilate=1x1 rhs_dilate=2x2
// rhs_reversal=0x1}; a field the text leaves out has XLA's default.
struct WindowDimension {
  std::int64_t size = 0;
  std::int64_t stride = 1;
  std::int64_t padding_low = 0;  // pad=LOW_HIGH; either may be negative
  std::int64_t padding_high = 0;
  std::int64_t base_dilation = 1;    // lhs_dilate
  std::int64_t window_dilation = 1;  // rhs_dilate
  bool window_reversal = false;      // rhs_reversal

  bool operator==(const WindowDimension&) const = default;
};

struct Window {
  std::vector<WindowDimension> dimensions;

  bool operator==(const Window&) const = default;
};

// One dimension of padding=0_0x1_1_2 (a pad instruction's LOW_HIGH or LOW_HIGH_INTERIOR per
// dimension, joined by 'x'). The edges may be negative (they cut), the interior may not.
struct PaddingDimension {
  std::int64_t edge_padding_low = 0;
  std::int64_t edge_padding_high = 0;
  std::int64_t interior_padding = 0;

  bool operator==(const PaddingDimension&) const = default;
};

struct PaddingConfig {
  std::vector<PaddingDimension> dimensions;

  bool operator==(const PaddingConfig&) const = default;
};

// One range of slice={[0:4], [0:128:2]}: [start:limit] or [start:limit:stride].
struct SliceDimension {
  std::int64_t start = 0;
  std::int64_t limit = 0;
  std::int64_t stride = 1;

  bool operator==(const SliceDimension&) const = default;
};

// The typed attributes of one instruction. nullopt: the attribute is absent.
struct TypedAttributes {
  std::optional<std::vector<std::int64_t>> dimensions;  // dimensions={1,0}
  std::optional<DotDimensionNumbers> dot_dims;          // any of lhs_/rhs_ batch/contracting_dims
  std::optional<ConvolutionDimensionNumbers> conv_dims;  // dim_labels=b01f_01io->b01f
  std::optional<Window> window;                         // window={size=3x3 stride=2x2 pad=1_1x1_1}
  std::optional<std::vector<SliceDimension>> slice;     // slice={[0:4], [0:128:2]}
  std::optional<PaddingConfig> padding;                 // padding=0_0x1_1_2
  std::int64_t feature_group_count = 1;                 // absent: 1, as in XLA
  std::int64_t batch_group_count = 1;
};

// The values as XLA prints them, for messages and reports; reading the text back gives the same
// value.
std::string dimensions_to_string(const std::vector<std::int64_t>& dimensions);  // "{1,0}"
// "lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}":
// the four attributes, the batch ones only when not empty.
std::string to_string(const DotDimensionNumbers& numbers);
std::string to_string(const ConvolutionDimensionNumbers& numbers);  // "b01f_01io->b01f"
// "size=3x3 stride=2x2 pad=1_1x1_1" (inside window={...}): the fields that differ from their
// default, size always.
std::string to_string(const Window& window);
// "0_0x1_1": LOW_HIGH per dimension, with _INTERIOR on each when any dimension has one.
std::string to_string(const PaddingConfig& padding);
// "{[0:4], [0:128]}", "{[0:4:1], [0:128:2]}": the strides on every range when any is not 1.
std::string to_string(const std::vector<SliceDimension>& slice);

}  // namespace tpuemu::hlo
