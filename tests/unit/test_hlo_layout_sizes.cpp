// SPDX-License-Identifier: Apache-2.0
// What each layout item does to an array's stored bytes (docs/hlo.md, "Sizes"), one test a
// field: minor_to_major and T(...) place and pad the dims, the TPU's default tiles stand in for a
// missing T, E(n) the bits stored per element, L(n) the tail padding of a tiled array, SC(...)
// the largest part of a split array, each counted as XLA's ShapeUtil::ArraySize counts them, and
// --untiled ignores them all; D(...), #, *, P(...), M(n) and S(n) keep the bytes. Figures from
// public XLA:TPU out-of-memory reports are cited where one lists the layout.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "tpuemu/base/error.h"
#include "tpuemu/hlo/buffers.h"
#include "tpuemu/hlo/hlo_parser.h"
#include "tpuemu/hlo/liveness.h"

namespace tpuemu::hlo {
namespace {

constexpr std::uint64_t kKiB = std::uint64_t{1} << 10;
constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;
constexpr std::uint64_t kGiB = std::uint64_t{1} << 30;

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

// Public XLA:TPU out-of-memory reports list each buffer's size, shape with its layout and
// unpadded size; these are their figures (the report prints M for MiB, G for GiB).
TEST(HloLayoutSizes, MinorToMajorPutsTheDimsTheTilesPad) {
  // An AlphaFold run on a Colab TPU: Size 64.00M, Unpadded size 61.25M. Dim 1 (245) is minor,
  // padded to 256; dim 2 (64) takes the tile's 8 rows whole.
  const ShapeBytes b = tiled("f32[1024,245,64]{1,2,0:T(8,128)}");
  EXPECT_EQ(b.padded, 64 * kMiB);
  EXPECT_EQ(b.unpadded, 61 * kMiB + kMiB / 4);
  // The default order would put 64 minor, half of each 128 lanes empty: 124 MiB.
  EXPECT_EQ(tiled("f32[1024,245,64]{2,1,0:T(8,128)}").padded, 1024u * 248 * 128 * 4);
}

TEST(HloLayoutSizes, TilesPadEachDimToTheTile) {
  // A TensorFlow mesh N-body code: s32[8388608,8,4] at 32.00G, unpadded 1.00G (32x): 4 lanes of
  // 128 used.
  const ShapeBytes particles = tiled("s32[8388608,8,4]{2,1,0:T(8,128)}");
  EXPECT_EQ(particles.padded, 32 * kGiB);
  EXPECT_EQ(particles.unpadded, kGiB);
  // PyTorch/XLA: u32[12582912,1] at 6.00G, unpadded 48.00M (128x).
  const ShapeBytes column = tiled("u32[12582912,1]{1,0:T(8,128)}");
  EXPECT_EQ(column.padded, 6 * kGiB);
  EXPECT_EQ(column.unpadded, 48 * kMiB);
  // PyTorch/XLA with T(2,128) tiles: a dim of 1 pads to 2 rows, 570.00M for 285.00M; a dim of 2
  // fills the tile, 570.00M unpadded too.
  EXPECT_EQ(tiled("f32[29184,1,2560]{2,1,0:T(2,128)}").padded, 570 * kMiB);
  EXPECT_EQ(tiled("f32[29184,1,2560]{2,1,0:T(2,128)}").unpadded, 285 * kMiB);
  EXPECT_EQ(tiled("f32[29184,2,2560]{2,1,0:T(2,128)}").padded, 570 * kMiB);
  EXPECT_EQ(tiled("f32[29184,2,2560]{2,1,0:T(2,128)}").unpadded, 570 * kMiB);
}

TEST(HloLayoutSizes, DefaultTilesStandInForAMissingT) {
  // A report printing layouts without tiles: f32[256,512,128,2]{3,2,1,0} at 8.00G, unpadded
  // 128.00M (64x): the TPU's (8,128) tile pads the minor 2 to 128 lanes.
  const ShapeBytes b = tiled("f32[256,512,128,2]{3,2,1,0}");
  EXPECT_EQ(b.padded, 8 * kGiB);
  EXPECT_EQ(b.unpadded, 128 * kMiB);
  EXPECT_EQ(b.layout, "{3,2,1,0:T(8,128)}");
  // A VMEM out-of-memory report: f32[128,3]{1,0} at 64.0K, unpadded 1.5K.
  EXPECT_EQ(tiled("f32[128,3]{1,0}").padded, 64 * kKiB);
  EXPECT_EQ(tiled("f32[128,3]{1,0}").unpadded, 1536u);
}

// XLA's ArraySize counts a split dimension at its largest part (LayoutUtil::MaxSplitSize): each
// part is in its own memory, the buffer holds one. SC's dimension is physical, 0 the major-most.
TEST(HloLayoutSizes, SplitConfigsCountTheLargestPart) {
  // 64 rows split at 16: parts of 16 and 48 rows, the buffer holds 48.
  const ShapeBytes rows = tiled("f32[64,128]{1,0:T(8,128)SC(0:16)}");
  EXPECT_EQ(rows.padded, 48u * 128 * 4);
  EXPECT_EQ(rows.unpadded, 48u * 128 * 4);
  EXPECT_EQ(tiled("f32[64,128]{1,0:T(8,128)SC(0:8,40)}").padded, 32u * 128 * 4);  // 8, 32, 24
  EXPECT_EQ(tiled("f32[64,128]{1,0:T(8,128)SC(0:)}").padded, 64u * 128 * 4);      // no split
  // Physical, not logical: under {0,1} physical 0 is logical dim 1 (64), split into 8 and 56.
  EXPECT_EQ(tiled("f32[128,64]{0,1:T(8,128)SC(0:8)}").padded, 56u * 128 * 4);
  // The part is tiled as the whole would be: 100 of 300 lanes pad to 128, 100 rows to 112.
  const ShapeBytes lanes = tiled("bf16[100,300]{1,0:T(16,128)(2,1)SC(1:100,200)}");
  EXPECT_EQ(lanes.padded, 112u * 128 * 2);
  EXPECT_EQ(lanes.unpadded, 100u * 100 * 2);
  // With the default tiles the printed layout keeps the split and reads back to the same bytes.
  const ShapeBytes defaulted = tiled("f32[64,128]{1,0:SC(0:16)}");
  EXPECT_EQ(defaulted.padded, 48u * 128 * 4);
  EXPECT_EQ(defaulted.layout, "{1,0:T(8,128)SC(0:16)}");
  EXPECT_EQ(tiled("f32[64,128]" + defaulted.layout).padded, 48u * 128 * 4);
  // --untiled counts the whole array, as XLA counts an untiled one.
  EXPECT_EQ(untiled("f32[64,128]{1,0:T(8,128)SC(0:16)}").padded, 64u * 128 * 4);
}

// *Decision* (docs/hlo.md): a sparse array's stored bytes depend on how many nonzeros it holds,
// which the text does not say; it is counted dense, an upper bound, with its D(...) printed.
TEST(HloLayoutSizes, SparseArraysAreCountedDense) {
  const ShapeBytes sparse = tiled("f32[1000,1000]{1,0:D(D,C)T(8,128)}");
  EXPECT_EQ(sparse.padded, tiled("f32[1000,1000]{1,0:T(8,128)}").padded);
  EXPECT_EQ(sparse.padded, 1000u * 1024 * 4);
  const ShapeBytes defaulted = tiled("f32[1000,1000]{1,0:D(D,C+~)}");
  EXPECT_EQ(defaulted.padded, 1000u * 1024 * 4);
  EXPECT_EQ(defaulted.layout, "{1,0:D(D,C+~)T(8,128)}");
}

// The index and pointer types, the physical shape and the dynamic metadata prefix change no
// byte XLA's ArraySize counts; they are kept, and printed where tpuemu prints the layout.
TEST(HloLayoutSizes, IndexPointerPhysicalShapeAndMetadataKeepTheBytes) {
  const std::string items = "D(D,C)#(u32)*(u16)P((u32[1001]{0}, f32[5000]{0}))M(64)";
  const ShapeBytes b = tiled("f32[1000,1000]{1,0:" + items + "}");
  EXPECT_EQ(b.padded, 1000u * 1024 * 4);
  EXPECT_EQ(b.unpadded, 1000u * 1000 * 4);
  EXPECT_EQ(b.layout, "{1,0:D(D,C)T(8,128)#(u32)*(u16)P((u32[1001]{0}, f32[5000]{0}))M(64)}");
  EXPECT_EQ(tiled("f32[1000,1000]" + b.layout).padded, b.padded);
  EXPECT_EQ(tiled("f32[<=100]{0:T(256)M(8)}").padded, tiled("f32[<=100]{0:T(256)}").padded);
}

// S(n) keeps the bytes and picks the heap: a buffer in S(1), the TPU's VMEM, is a VMEM buffer.
TEST(HloLayoutSizes, MemorySpaceKeepsTheBytesAndNamesTheMemory) {
  EXPECT_EQ(tiled("f32[8,128]{1,0:T(8,128)S(1)}").padded, 4096u);
  EXPECT_EQ(tiled("f32[8,128]{1,0:S(1)}").layout, "{1,0:T(8,128)S(1)}");
  const Module m = parse_hlo(R"(HloModule s
ENTRY main {
  p = f32[8,128]{1,0:T(8,128)S(1)} parameter(0)
  ROOT n = f32[8,128]{1,0:T(8,128)} negate(p)
})",
                             "s.hlo");
  const BufferSet set = live_buffers(m, text_schedule(m), {});
  ASSERT_EQ(set.buffers.size(), 2u);
  for (const LiveBuffer& b : set.buffers) {
    EXPECT_EQ(b.bytes, 4096u);
    EXPECT_EQ(b.memory_space, b.name == "p" ? 1 : 0) << b.name;
  }
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
