// SPDX-License-Identifier: Apache-2.0
// Reference model: matmul, requantize, MLP chain.
#include <gtest/gtest.h>

#include <random>

#include "tpuemu/base/error.h"
#include "tpuemu/compile/reference.h"

namespace tpuemu {
namespace {

std::vector<std::int8_t> random_int8(std::mt19937& rng, std::size_t n) {
  std::uniform_int_distribution<int> d(-128, 127);
  std::vector<std::int8_t> v(n);
  for (auto& x : v) x = static_cast<std::int8_t>(d(rng));
  return v;
}

TEST(ReferenceMatmul, HandComputed) {
  // A = [[1, 2, 3], [-4, 5, -6]], B = [[7, 8], [9, 10], [11, 12]].
  const std::vector<std::int8_t> a = {1, 2, 3, -4, 5, -6};
  const std::vector<std::int8_t> b = {7, 8, 9, 10, 11, 12};
  const auto c = matmul_int8(a, b, 2, 3, 2);
  EXPECT_EQ(c, (std::vector<std::int32_t>{58, 64, -49, -54}));
}

TEST(ReferenceMatmul, MatchesWideAccumulationOnRandomInputs) {
  std::mt19937 rng(1234);
  for (int trial = 0; trial < 20; ++trial) {
    std::uniform_int_distribution<std::size_t> dim(1, 40);
    const std::size_t m = dim(rng), k = dim(rng), n = dim(rng);
    const auto a = random_int8(rng, m * k);
    const auto b = random_int8(rng, k * n);
    const auto c = matmul_int8(a, b, m, k, n);
    ASSERT_EQ(c.size(), m * n);
    for (std::size_t i = 0; i < m; ++i) {
      for (std::size_t j = 0; j < n; ++j) {
        std::int64_t s = 0;
        for (std::size_t kk = 0; kk < k; ++kk) s += std::int64_t{a[i * k + kk]} * b[kk * n + j];
        ASSERT_EQ(c[i * n + j], s) << "trial " << trial << " at " << i << "," << j;
      }
    }
  }
}

TEST(ReferenceMatmul, EdgeValues) {
  const std::size_t k = 64;
  const std::vector<std::int8_t> neg(k, -128), pos(k, 127);
  EXPECT_EQ(matmul_int8(neg, neg, 1, k, 1)[0], 64 * 16384);
  EXPECT_EQ(matmul_int8(neg, pos, 1, k, 1)[0], 64 * -16256);
  EXPECT_EQ(matmul_int8(pos, pos, 1, k, 1)[0], 64 * 16129);
}

TEST(ReferenceMatmul, AccumulationWrapsAt32Bits) {
  // 2^17 products of (-128)^2 = 2^14 sum to 2^31, which wraps to INT32_MIN like the hardware.
  const std::size_t k = std::size_t{1} << 17;
  const std::vector<std::int8_t> v(k, -128);
  EXPECT_EQ(matmul_int8(v, v, 1, k, 1)[0], INT32_MIN);
  // One more positive product: INT32_MIN + 127*127.
  std::vector<std::int8_t> a = v, b = v;
  a.push_back(127);
  b.push_back(127);
  EXPECT_EQ(matmul_int8(a, b, 1, k + 1, 1)[0], INT32_MIN + 16129);
}

TEST(ReferenceMatmul, ShapeMismatchThrows) {
  const std::vector<std::int8_t> a(6), b(6);
  EXPECT_THROW(matmul_int8(a, b, 2, 3, 3), Error);
  EXPECT_THROW(matmul_int8(a, b, 3, 3, 2), Error);
}

TEST(ReferenceRequantize, HandComputed) {
  EXPECT_EQ(requantize(100, 3, 2, false), 75);   // (300 + 2) >> 2
  EXPECT_EQ(requantize(6, 1, 2, false), 2);      // 1.5 rounds up
  EXPECT_EQ(requantize(-6, 1, 2, false), -1);    // -1.5 rounds up (towards +inf)
  EXPECT_EQ(requantize(-7, 1, 2, false), -2);    // -1.75
  EXPECT_EQ(requantize(5, 1, 0, false), 5);      // shift 0: no rounding term
  EXPECT_EQ(requantize(-5, 1, 0, true), 0);      // relu
  EXPECT_EQ(requantize(1000, 1, 0, false), 127);  // clamp high
  EXPECT_EQ(requantize(-1000, 1, 0, false), -128);  // clamp low
  EXPECT_EQ(requantize(-1000, 1, 0, true), 0);
  EXPECT_EQ(requantize(127, 1, 0, false), 127);
  EXPECT_EQ(requantize(-128, 1, 0, false), -128);
  EXPECT_EQ(requantize(128, 1, 0, false), 127);
  EXPECT_EQ(requantize(-129, 1, 0, false), -128);
  EXPECT_EQ(requantize(1 << 20, -1, 13, false), -128);  // negative scale: -128 exactly
  EXPECT_EQ(requantize(INT32_MAX, INT32_MAX, 62, false), 1);  // (2^31-1)^2 / 2^62 ~ 0.99999
}

TEST(ReferenceRequantize, RoundingAddWrapsAt64Bits) {
  // INT32_MIN^2 = 2^62; + 2^62 overflows int64 to -2^63; >> 63 = -1.
  EXPECT_EQ(requantize(INT32_MIN, INT32_MIN, 63, false), -1);
  EXPECT_EQ(requantize(INT32_MIN, INT32_MIN, 63, true), 0);
  EXPECT_THROW(requantize(1, 1, 64, false), Error);
}

TEST(ReferenceRequantize, MatchesExactArithmeticOnRandomInputs) {
  std::mt19937_64 rng(99);
  std::uniform_int_distribution<std::int32_t> i32(INT32_MIN, INT32_MAX);
  std::uniform_int_distribution<std::int32_t> small(-100000, 100000);
  std::uniform_int_distribution<unsigned> sh(0, 63);
  for (int i = 0; i < 20000; ++i) {
    const std::int32_t x = (i % 2) ? i32(rng) : small(rng);
    const std::int32_t scale = (i % 3) ? small(rng) : i32(rng);
    const unsigned shift = sh(rng);
    const bool relu = (i % 5) == 0;
    // Round half up = floor((x*scale + 2^(shift-1)) / 2^shift), computed in 128 bits.
    __int128 p = static_cast<__int128>(x) * scale;
    if (shift > 0) p += static_cast<__int128>(1) << (shift - 1);
    __int128 q = p >> shift;  // arithmetic shift = floor division
    if (q > 127) q = 127;
    if (q < -128) q = -128;
    if (relu && q < 0) q = 0;
    ASSERT_EQ(requantize(x, scale, shift, relu), static_cast<int>(q))
        << "x=" << x << " scale=" << scale << " shift=" << shift << " relu=" << relu;
  }
}

TEST(ReferenceRequantize, BiasIsAddedFirstAndWraps) {
  EXPECT_EQ(requantize(100, 20, 3, 2, false), 90);          // (120*3 + 2) >> 2
  EXPECT_EQ(requantize(-100, 90, 1, 0, true), 0);           // -10, relu
  EXPECT_EQ(requantize(INT32_MAX, 1, 1, 31, false), -1);    // wraps to INT32_MIN: -2^31 / 2^31
  EXPECT_EQ(requantize(INT32_MIN, -1, -1, 31, false), -1);  // wraps to INT32_MAX, times -1
  EXPECT_EQ(requantize(7, 0, 5, 1, false), requantize(7, 5, 1, false));
  const std::vector<std::int32_t> x = {1, 2, 3, 10, 20, 30};
  const std::vector<std::int32_t> b = {100, -100, 0};
  EXPECT_EQ(requantize(x, b, 1, 0, false), (std::vector<std::int8_t>{101, -98, 3, 110, -80, 30}));
  EXPECT_THROW(requantize(std::span(x).first(5), b, 1, 0, false), Error);
}

TEST(ReferenceAddSaturate, ClampsBothWaysAndRelu) {
  EXPECT_EQ(add_saturate(100, 27, false), 127);
  EXPECT_EQ(add_saturate(100, 28, false), 127);
  EXPECT_EQ(add_saturate(127, 127, false), 127);
  EXPECT_EQ(add_saturate(-100, -28, false), -128);
  EXPECT_EQ(add_saturate(-100, -29, false), -128);
  EXPECT_EQ(add_saturate(-128, -128, false), -128);
  EXPECT_EQ(add_saturate(-128, 127, false), -1);
  EXPECT_EQ(add_saturate(-128, 127, true), 0);
  EXPECT_EQ(add_saturate(5, -3, true), 2);
  const std::vector<std::int8_t> a = {1, -128, 127, -5}, b = {2, -1, 1, 3};
  EXPECT_EQ(add_saturate(a, b, false), (std::vector<std::int8_t>{3, -128, 127, -2}));
  EXPECT_EQ(add_saturate(a, b, true), (std::vector<std::int8_t>{3, 0, 127, 0}));
  EXPECT_THROW(add_saturate(std::span(a).first(3), b, false), Error);
}

TEST(ReferenceRequantize, VectorOverloadAppliesPerLane) {
  const std::vector<std::int32_t> x = {-300, -2, 0, 3, 300};
  EXPECT_EQ(requantize(x, 1, 1, false), (std::vector<std::int8_t>{-128, -1, 0, 2, 127}));
  EXPECT_EQ(requantize(x, 1, 1, true), (std::vector<std::int8_t>{0, 0, 0, 2, 127}));
}

TEST(ReferenceMlp, TwoLayersMatchManualComposition) {
  std::mt19937 rng(7);
  const std::size_t batch = 5;
  std::vector<MlpLayer> layers(2);
  layers[0] = {.in_features = 12, .out_features = 9, .weights = random_int8(rng, 12 * 9),
               .scale = 3, .shift = 8, .relu = true};
  layers[1] = {.in_features = 9, .out_features = 4, .weights = random_int8(rng, 9 * 4),
               .scale = -5, .shift = 7, .relu = false};
  const auto x = random_int8(rng, batch * 12);

  const auto h = requantize(matmul_int8(x, layers[0].weights, batch, 12, 9), 3, 8, true);
  const auto acc = matmul_int8(h, layers[1].weights, batch, 9, 4);
  const auto want = requantize(acc, -5, 7, false);

  EXPECT_EQ(mlp_reference(x, batch, layers), want);
  EXPECT_EQ(mlp_reference_int32(x, batch, layers), acc);
  // The hidden activation really went through relu (else the test would prove little).
  EXPECT_TRUE(std::all_of(h.begin(), h.end(), [](std::int8_t v) { return v >= 0; }));
  EXPECT_TRUE(std::any_of(want.begin(), want.end(), [](std::int8_t v) { return v < 0; }));
}

TEST(ReferenceMlp, SingleLayerInt32IsPlainMatmul) {
  std::mt19937 rng(8);
  std::vector<MlpLayer> layers = {{.in_features = 6, .out_features = 3, .weights = random_int8(rng, 18)}};
  const auto x = random_int8(rng, 2 * 6);
  EXPECT_EQ(mlp_reference_int32(x, 2, layers), matmul_int8(x, layers[0].weights, 2, 6, 3));
}

TEST(ReferenceMlp, ShapeErrorsNameTheLayer) {
  std::vector<MlpLayer> layers(2);
  layers[0] = {.in_features = 4, .out_features = 3, .weights = std::vector<std::int8_t>(12)};
  layers[1] = {.in_features = 5, .out_features = 2, .weights = std::vector<std::int8_t>(10)};
  const std::vector<std::int8_t> x(8);
  try {
    mlp_reference(x, 2, layers);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("mlp layer 1"), std::string::npos) << e.what();
  }
  EXPECT_THROW(mlp_reference(x, 2, std::span<const MlpLayer>{}), Error);
  EXPECT_THROW(mlp_reference(std::vector<std::int8_t>(7), 2, std::span(layers).first(1)), Error);
}

}  // namespace
}  // namespace tpuemu
