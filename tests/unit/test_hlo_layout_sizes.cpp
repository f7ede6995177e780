// SPDX-License-Identifier: Apache-2.0
// The layout items that change an array's stored bytes (docs/hlo.md, "Sizes"): E(n), the bits
// stored per element, and L(n), the tail padding of a tiled array in elements, counted as XLA's
// ShapeUtil::ArraySize counts them; --untiled ignores both, as it ignores tiles.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "tpuemu/base/error.h"
#include "tpuemu/hlo/hlo_parser.h"
#include "tpuemu/hlo/liveness.h"

namespace tpuemu::hlo {
namespace {

constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;

ShapeBytes tiled(std::string_view shape) { return shape_bytes(parse_shape(shape, "s"), {}); }

ShapeBytes untiled(std::string_view shape) {
  SizeOptions options;
  options.tiled = false;
  return shape_bytes(parse_shape(shape, "s"), options);
}

std::string shape_error(std::string_view shape) {
  try {
    (void)parse_shape(shape, "s");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(HloLayoutSizes, ElementSizeAndTailPaddingAreRead) {
  const Shape s = parse_shape("pred[8,128]{1,0:T(8,128)L(2048)E(32)S(1)}", "s");
  EXPECT_EQ(s.layout->element_size_bits, 32);
  EXPECT_EQ(s.layout->tail_padding_elements, 2048);
  const Shape plain = parse_shape("pred[8,128]{1,0:T(8,128)}", "s");
  EXPECT_EQ(plain.layout->element_size_bits, 0);  // the element type's own width
  EXPECT_EQ(plain.layout->tail_padding_elements, 1);
}

// A public XLA:TPU out-of-memory report lists this buffer at 256.00M: TPU stores pred as 32 bits
// when its layout says E(32), four times the 64 MiB of a byte per element.
TEST(HloLayoutSizes, PredUnderE32IsFourBytesAnElement) {
  const ShapeBytes b = tiled("pred[64,512,2048]{2,1,0:T(8,128)E(32)}");
  EXPECT_EQ(b.padded, 256 * kMiB);
  EXPECT_EQ(b.padded, 268435456u);
  // The data is a byte an element; the other three are padding (the (8,128) tile adds none).
  EXPECT_EQ(b.unpadded, 64 * kMiB);
  EXPECT_EQ(b.layout, "{2,1,0:T(8,128)E(32)}");
  // Without T(...) the default tile is the stored width's: 32-bit elements take (8,128), and the
  // printed layout, read back, counts the same bytes.
  const ShapeBytes defaulted = tiled("pred[64,512,2048]{2,1,0:E(32)}");
  EXPECT_EQ(defaulted.padded, 256 * kMiB);
  EXPECT_EQ(defaulted.layout, "{2,1,0:T(8,128)E(32)}");
  // E(0) is the type's own width (pred: a byte).
  EXPECT_EQ(tiled("pred[64,512,2048]{2,1,0:T(8,128)E(0)}").padded, 64 * kMiB);
  EXPECT_EQ(tiled("pred[64,512,2048]{2,1,0:T(8,128)}").padded, 64 * kMiB);
}

TEST(HloLayoutSizes, ElementSizesBelowAByteAndOddWidthsRoundUpOnce) {
  // E(4) packs two elements a byte: 1024 tiled s8 elements in 512 bytes, 15 padded to 1024.
  EXPECT_EQ(tiled("s8[8,128]{1,0:T(8,128)E(4)}").padded, 512u);
  EXPECT_EQ(tiled("s8[3,5]{1,0:T(8,128)E(4)}").padded, 512u);
  // The data a narrower E(n) keeps is counted at its width: 15 elements of 4 bits.
  EXPECT_EQ(tiled("s8[3,5]{1,0:T(8,128)E(4)}").unpadded, 8u);
  EXPECT_EQ(tiled("s4[8,128]{1,0:T(8,128)E(8)}").unpadded, 512u);
  // E(8) widens a 4-bit type to a byte an element.
  EXPECT_EQ(tiled("s4[8,128]{1,0:T(8,128)}").padded, 512u);
  EXPECT_EQ(tiled("s4[8,128]{1,0:T(8,128)E(8)}").padded, 1024u);
  // The array's bits round up to a byte once, not per element: 3 x 12 bits in 5 bytes.
  EXPECT_EQ(tiled("f32[3]{0:T(3)E(12)}").padded, 5u);
  EXPECT_EQ(tiled("pred[3]{0:T(8)E(1)}").padded, 1u);
}

TEST(HloLayoutSizes, TailPaddingRoundsATiledArraysElements) {
  // 3x5 in one (8,128) tile is 1024 elements; L(2048) rounds them to 2048: 8 KiB of f32.
  EXPECT_EQ(tiled("f32[3,5]{1,0:T(8,128)L(2048)}").padded, 8192u);
  EXPECT_EQ(tiled("f32[3,5]{1,0:T(8,128)L(1024)}").padded, 4096u);  // already a multiple
  EXPECT_EQ(tiled("f32[5]{0:T(2)L(4)}").padded, 32u);               // 6 tiled, 8 tail-padded
  EXPECT_EQ(tiled("f32[3]{0:T(2)L(4)}").padded, 16u);
  // Tail padding counts before the element size: 6 -> 8 elements of 4 bits.
  EXPECT_EQ(tiled("s8[5]{0:T(2)L(4)E(4)}").padded, 4u);
  // With the default tiles: f32[5] takes T(256), 256 elements rounded to 300; the printed
  // layout says both and reads back to the same bytes.
  const ShapeBytes defaulted = tiled("f32[5]{0:L(300)}");
  EXPECT_EQ(defaulted.padded, 1200u);
  EXPECT_EQ(defaulted.layout, "{0:T(256)L(300)}");
  EXPECT_EQ(tiled("f32[5]" + defaulted.layout).padded, 1200u);
  EXPECT_EQ(tiled("f32[5]{0:L(1)}").padded, 1024u);
}

TEST(HloLayoutSizes, UntiledIgnoresTilesElementSizesAndTailPadding) {
  const ShapeBytes b = untiled("pred[64,512,2048]{2,1,0:T(8,128)E(32)}");
  EXPECT_EQ(b.padded, 64 * kMiB);
  EXPECT_EQ(b.unpadded, 64 * kMiB);
  EXPECT_EQ(b.layout, "{2,1,0}");
  EXPECT_EQ(untiled("f32[3,5]{1,0:T(8,128)L(2048)}").padded, 60u);
  EXPECT_EQ(untiled("s8[3,5]{1,0:E(4)}").padded, 15u);
  EXPECT_EQ(untiled("s4[3,5]{1,0:E(8)}").padded, 8u);  // sub-byte types packed
}

TEST(HloLayoutSizes, StoredSizeMustFit64Bits) {
  // 2^62 bytes of s8 fit; stored at 128 bits an element they do not.
  EXPECT_EQ(shape_error("s8[4611686018427387904]{0:E(128)}"),
            "s:1:27: malformed layout: shape s8[4611686018427387904]{0:E(128)}: its stored size "
            "overflows 64 bits");
  EXPECT_EQ(shape_error("f32[2]{0:T(2)L(4611686018427387904)}"),
            "s:1:10: malformed layout: shape f32[2]{0:T(2)L(4611686018427387904)}: its tiled size "
            "overflows 64 bits");
  // The largest tail padding that fits reads and counts exactly: 2^62 bytes of s8.
  EXPECT_EQ(tiled("s8[2]{0:T(2)L(4611686018427387904)}").padded, std::uint64_t{1} << 62);
}

}  // namespace
}  // namespace tpuemu::hlo
