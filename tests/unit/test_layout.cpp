// SPDX-License-Identifier: Apache-2.0
// Tiled layout: shapes, padding, offsets, pack/unpack; the TPU's tiling rule (tpu_tiles.h) that
// the compiler's layouts and the HLO sizes share.
#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <random>
#include <vector>

#include "tpuemu/base/error.h"
#include "tpuemu/layout/layout.h"
#include "tpuemu/layout/tpu_tiles.h"

namespace tpuemu {
namespace {

template <typename T>
std::vector<T> random_values(std::mt19937& rng, std::size_t n) {
  std::uniform_int_distribution<std::int64_t> d(std::numeric_limits<T>::min(),
                                                std::numeric_limits<T>::max());
  std::vector<T> v(n);
  for (auto& x : v) x = static_cast<T>(d(rng));
  // Make sure the extremes appear.
  if (n >= 2) {
    v[0] = std::numeric_limits<T>::min();
    v[n - 1] = std::numeric_limits<T>::max();
  }
  return v;
}

std::string error_of(auto&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Layout, TileShapeFollowsElementWidthAndDim) {
  const auto l32 = make_tiled_layout(8, 128, 4, 128);
  EXPECT_EQ(l32.tile_rows, 8u);
  EXPECT_EQ(l32.tile_cols, 128u);
  const auto l16 = make_tiled_layout(8, 128, 2, 128);
  EXPECT_EQ(l16.tile_rows, 16u);
  const auto l8 = make_tiled_layout(8, 128, 1, 16);
  EXPECT_EQ(l8.tile_rows, 32u);
  EXPECT_EQ(l8.tile_cols, 16u);
  // Every tile holds 8 sublanes x dim lanes x 32 bits.
  EXPECT_EQ(l32.tile_bytes(), l16.tile_bytes());
  EXPECT_EQ(make_tiled_layout(1, 1, 1, 128).tile_bytes(), 4096u);
  EXPECT_TRUE(l8.tiled());
}

TEST(Layout, PaddedShapeAndPaddingBytes) {
  // int8 100x20 on dim 16: tiles 32x16 -> padded 128x32.
  const auto l = make_tiled_layout(100, 20, 1, 16, "x");
  EXPECT_EQ(l.padded_rows, 128u);
  EXPECT_EQ(l.padded_cols, 32u);
  EXPECT_EQ(l.bytes(), 128u * 32u);
  EXPECT_EQ(l.logical_bytes(), 2000u);
  EXPECT_EQ(l.padding_bytes(), 4096u - 2000u);
  EXPECT_EQ(l.tiles_per_row(), 2u);
  EXPECT_EQ(l.tiles_per_col(), 4u);
  EXPECT_EQ(l.tile_count(), 8u);

  // int32 9x17 on dim 8: tiles 8x8 -> padded 16x24, 4 bytes each.
  const auto w = make_tiled_layout(9, 17, 4, 8);
  EXPECT_EQ(w.bytes(), 16u * 24u * 4u);
  EXPECT_EQ(w.padding_bytes(), (16u * 24u - 9u * 17u) * 4u);

  // Exact multiples of the tile have no padding.
  EXPECT_EQ(make_tiled_layout(64, 32, 1, 16).padding_bytes(), 0u);
}

TEST(Layout, UntiledPadsOnlyColumns) {
  const auto l = make_untiled_layout(100, 20, 1, 16, "x");
  EXPECT_FALSE(l.tiled());
  EXPECT_EQ(l.tile_rows, 1u);
  EXPECT_EQ(l.padded_rows, 100u);
  EXPECT_EQ(l.padded_cols, 32u);
  EXPECT_EQ(l.padding_bytes(), 100u * 12u);
  // Plain row-major with a row pitch of padded_cols.
  EXPECT_EQ(l.offset_of_element(3, 5), 3u * 32u + 5u);
  EXPECT_EQ(l.offset_of_element(3, 17), 3u * 32u + 17u);
  const auto w = make_untiled_layout(3, 5, 4, 4);
  EXPECT_EQ(w.offset_of_element(2, 4), (2u * 8u + 4u) * 4u);
  EXPECT_EQ(make_layout(false, 3, 5, 4, 4), w);
  EXPECT_EQ(make_layout(true, 3, 5, 4, 4), make_tiled_layout(3, 5, 4, 4));
}

TEST(Layout, TilesAreRowMajorAndRowsContiguousWithinATile) {
  // int8 on dim 8: tiles 32x8 = 256 bytes.
  const auto l = make_tiled_layout(64, 16, 1, 8);
  EXPECT_EQ(l.tile_offset(0, 0), 0u);
  EXPECT_EQ(l.tile_offset(0, 1), 256u);
  EXPECT_EQ(l.tile_offset(1, 0), 512u);
  EXPECT_EQ(l.tile_offset(1, 1), 768u);
  EXPECT_EQ(l.offset_of_element(0, 7), 7u);
  EXPECT_EQ(l.offset_of_element(1, 0), 8u);   // next row of the same tile
  EXPECT_EQ(l.offset_of_element(0, 8), 256u);  // next tile to the right
  EXPECT_EQ(l.offset_of_element(33, 9), 768u + 1u * 8u + 1u);
}

// Independent oracle: walk tiles in order, rows in tile, columns in row, assigning consecutive
// offsets; every (padded) element must land where offset_of_element says, and cover all bytes.
TEST(Layout, OffsetsMatchEnumerationOrderAndAreABijection) {
  for (std::size_t eb : {1u, 2u, 4u}) {
    for (std::uint32_t dim : {4u, 8u, 16u}) {
      for (bool tiled : {true, false}) {
        const auto l = make_layout(tiled, 37, 13, eb, dim);
        std::size_t next = 0;
        std::map<std::size_t, int> seen;
        for (std::size_t tr = 0; tr < l.tiles_per_col(); ++tr) {
          for (std::size_t tc = 0; tc < l.tiles_per_row(); ++tc) {
            for (std::size_t r = 0; r < l.tile_rows; ++r) {
              for (std::size_t c = 0; c < l.tile_cols; ++c) {
                const std::size_t off = l.offset_of_element(tr * l.tile_rows + r, tc * l.tile_cols + c);
                ASSERT_EQ(off, next) << "eb=" << eb << " dim=" << dim << " tiled=" << tiled;
                ++seen[off];
                next += eb;
              }
            }
          }
        }
        EXPECT_EQ(next, l.bytes());
        EXPECT_EQ(seen.size(), l.padded_rows * l.padded_cols);
      }
    }
  }
}

template <typename T>
void round_trip(std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<std::int64_t> extent(1, 150);
  for (int trial = 0; trial < 30; ++trial) {
    const auto rows = extent(rng), cols = extent(rng);
    const std::uint32_t dim = 4u << (trial % 6);  // 4 .. 128
    const bool tiled = trial % 3 != 0;
    const auto l = make_layout(tiled, rows, cols, sizeof(T), dim, "t");
    const auto host = random_values<T>(rng, static_cast<std::size_t>(rows * cols));
    const auto dev = pack(l, std::span<const T>(host));
    ASSERT_EQ(dev.size(), l.bytes());

    // Every element sits at its offset, little-endian; everything else is zero padding.
    std::vector<bool> is_data(dev.size(), false);
    for (std::size_t r = 0; r < l.rows; ++r) {
      for (std::size_t c = 0; c < l.cols; ++c) {
        const std::size_t off = l.offset_of_element(r, c);
        std::uint64_t v = 0;
        for (std::size_t b = 0; b < sizeof(T); ++b) {
          v |= std::uint64_t{dev[off + b]} << (8 * b);
          is_data[off + b] = true;
        }
        ASSERT_EQ(static_cast<T>(v), host[r * l.cols + c]) << r << "," << c;
      }
    }
    std::size_t pad = 0;
    for (std::size_t i = 0; i < dev.size(); ++i) {
      if (!is_data[i]) {
        ++pad;
        ASSERT_EQ(dev[i], 0) << "padding byte " << i;
      }
    }
    EXPECT_EQ(pad, l.padding_bytes());
    EXPECT_EQ(unpack<T>(l, dev), host);
  }
}

TEST(Layout, PackUnpackRoundTripInt8) { round_trip<std::int8_t>(11); }
TEST(Layout, PackUnpackRoundTripInt16) { round_trip<std::int16_t>(12); }
TEST(Layout, PackUnpackRoundTripInt32) { round_trip<std::int32_t>(13); }

TEST(Layout, UnpackIgnoresPadding) {
  const auto l = make_tiled_layout(3, 5, 1, 8);
  const std::vector<std::int8_t> host = {1, 2, 3, 4, 5, -1, -2, -3, -4, -5, 127, -128, 0, 7, 9};
  auto dev = pack(l, host);
  dev[l.offset_of_element(10, 6)] = 0x55;  // scribble in the padding
  EXPECT_EQ(unpack<std::int8_t>(l, dev), host);
}

TEST(Layout, ShapeErrorsNameTheTensor) {
  EXPECT_NE(error_of([] { make_tiled_layout(0, 4, 1, 8, "weights"); }).find("tensor 'weights'"),
            std::string::npos);
  EXPECT_NE(error_of([] { make_tiled_layout(4, -3, 1, 8, "acts"); }).find("'acts'"), std::string::npos);
  EXPECT_NE(error_of([] { make_tiled_layout(4, 4, 3, 8, "w"); }).find("1, 2 or 4"), std::string::npos);
  EXPECT_NE(error_of([] { make_tiled_layout(4, 4, 1, 12, "w"); }).find("power of two"), std::string::npos);
  EXPECT_NE(error_of([] { make_tiled_layout(4, 4, 1, 512, "w"); }).find("power of two"), std::string::npos);
  EXPECT_NE(error_of([] { make_tiled_layout(1 << 16, (1 << 15) + 1, 1, 8, "big"); }).find("2^31"),
            std::string::npos);
  EXPECT_NE(error_of([] { make_tiled_layout(INT64_MAX, INT64_MAX, 1, 8, "huge"); }).find("'huge'"),
            std::string::npos);
  // 2^31 int32 elements are allowed by count but need 8 GiB.
  EXPECT_NE(error_of([] { make_tiled_layout(1 << 16, 1 << 15, 4, 8, "wide"); }).find("4 GiB"),
            std::string::npos);
  EXPECT_NO_THROW(make_tiled_layout(1 << 16, 1 << 15, 1, 8, "ok"));
}

TEST(Layout, PackErrors) {
  const auto l = make_tiled_layout(3, 5, 1, 8, "x");
  const std::vector<std::int8_t> short_data(14);
  EXPECT_NE(error_of([&] { pack(l, short_data); }).find("tensor 'x'"), std::string::npos);
  const std::vector<std::int32_t> wide(15);
  EXPECT_NE(error_of([&] { pack(l, wide); }).find("1-byte"), std::string::npos);
  const std::vector<std::uint8_t> dev(l.bytes() - 1);
  EXPECT_THROW(unpack<std::int8_t>(l, dev), Error);
  EXPECT_THROW(unpack<std::int32_t>(l, std::vector<std::uint8_t>(l.bytes())), Error);
}

TEST(TpuTiles, RowsPackIntoThirtyTwoBitSublanes) {
  EXPECT_EQ(tpu_tile_rows(32), 8);
  EXPECT_EQ(tpu_tile_rows(64), 8);   // wide types: one element a word's place
  EXPECT_EQ(tpu_tile_rows(128), 8);
  EXPECT_EQ(tpu_tile_rows(16), 16);
  EXPECT_EQ(tpu_tile_rows(8), 32);
  EXPECT_EQ(tpu_tile_rows(4), 64);
  EXPECT_EQ(tpu_tile_rows(2), 128);
  EXPECT_EQ(error_of([] { (void)tpu_tile_rows(0); }), "tiled layout: an element width of 0 bits");
}

TEST(TpuTiles, DefaultTilesInXlasElementTerms) {
  using Tiles = std::vector<Tile>;
  EXPECT_EQ(tpu_default_tiles(32, 2, 128), (Tiles{{8, 128}}));
  EXPECT_EQ(tpu_default_tiles(16, 3, 128), (Tiles{{16, 128}, {2, 1}}));
  EXPECT_EQ(tpu_default_tiles(8, 2, 128), (Tiles{{32, 128}, {4, 1}}));
  EXPECT_EQ(tpu_default_tiles(4, 2, 8), (Tiles{{64, 8}, {8, 1}}));
  // Rank 0 and 1: granules of 8*lanes bytes, T(256) for f32 and T(1024) for s8 at 128 lanes.
  EXPECT_EQ(tpu_default_tiles(32, 1, 128), (Tiles{{256}}));
  EXPECT_EQ(tpu_default_tiles(16, 0, 128), (Tiles{{512}}));
  EXPECT_EQ(tpu_default_tiles(8, 1, 128), (Tiles{{1024}}));
  EXPECT_EQ(tpu_default_tiles(128, 1, 1), (Tiles{{1}}));  // never an empty tile
}

TEST(TpuTiles, TiledElementCountIsXlasAlgebra) {
  EXPECT_EQ(tiled_element_count({3, 5}, {{8, 128}}), 1024u);
  EXPECT_EQ(tiled_element_count({3, 5}, {}), 15u);
  // The minor (2,1) tile applies to the tiled shape: rows of the (16,128) tile are already even.
  EXPECT_EQ(tiled_element_count({17, 5}, {{16, 128}, {2, 1}}), 2u * 16 * 128);
  // A tile of more dims than the shape sees leading 1s; '*' keeps a dim whole.
  EXPECT_EQ(tiled_element_count({5}, {{8, 128}}), 8u * 128);
  EXPECT_EQ(tiled_element_count({3, 5}, {{kWholeDimension, 128}}), 3u * 128);
  EXPECT_EQ(tiled_element_count({0, 5}, {{8, 128}}), 0u);
  EXPECT_EQ(tiled_element_count({std::uint64_t{1} << 62, 8}, {{8, 128}}), std::nullopt);
  EXPECT_EQ(error_of([] { (void)tiled_element_count({3, 5}, {{0, 128}}); }), "tiled layout: a tile dimension of 0");
}

// The one rule: the compiler's 2-D layout pads exactly as the HLO algebra does under the default
// tiles of the same element width and lane count (fixed seed).
TEST(TpuTiles, CompilerLayoutsAndTheHloAlgebraAgree) {
  std::mt19937 rng(2024);
  std::uniform_int_distribution<std::int64_t> extent(1, 700);
  for (const std::size_t elem_bytes : {1u, 2u, 4u}) {
    for (const std::uint32_t dim : {8u, 16u, 128u}) {
      for (int i = 0; i < 50; ++i) {
        const std::int64_t rows = extent(rng), cols = extent(rng);
        const TiledLayout l = make_tiled_layout(rows, cols, elem_bytes, dim);
        const auto bits = static_cast<unsigned>(elem_bytes * 8);
        const std::vector<Tile> tiles = tpu_default_tiles(bits, 2, dim);
        EXPECT_EQ(static_cast<std::int64_t>(l.tile_rows), tiles[0][0]);
        EXPECT_EQ(static_cast<std::int64_t>(l.tile_cols), tiles[0][1]);
        const auto elements =
            tiled_element_count({static_cast<std::uint64_t>(rows), static_cast<std::uint64_t>(cols)}, tiles);
        ASSERT_TRUE(elements);
        EXPECT_EQ(l.bytes(), *elements * elem_bytes) << rows << "x" << cols << " of " << elem_bytes << " bytes";
      }
    }
  }
}

}  // namespace
}  // namespace tpuemu
