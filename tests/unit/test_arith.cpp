// SPDX-License-Identifier: Apache-2.0
// The core's element arithmetic (spec/include/tpuemu/spec/arith.h) against values computed by
// hand at the extremes, where a wrong width, an unwrapped add or a rounding towards zero shows.
// Built as C++17, the language of the SystemC targets that include the header; the static_asserts
// prove the functions are constant expressions there. The RTL itself is compared with the header
// in tests/rtl/test_core_arith.cpp.
#include "tpuemu/spec/arith.h"

#include <cstdint>
#include <limits>
#include <vector>

#include <gtest/gtest.h>

namespace tpuemu::spec::arith {
namespace {

constexpr std::int32_t kMin = std::numeric_limits<std::int32_t>::min();
constexpr std::int32_t kMax = std::numeric_limits<std::int32_t>::max();
constexpr std::int64_t kMin64 = std::numeric_limits<std::int64_t>::min();

static_assert(from_bits32(0xFFFF'FFFFu) == -1 && from_bits32(0x8000'0000u) == kMin);
static_assert(from_bits64(std::uint64_t{1} << 63) == kMin64);
// x = scale = INT32_MIN, shift 63: 2^62 + 2^62 wraps to -2^63, and -2^63 >>> 63 = -1.
static_assert(vquant(kMin, kMin, 63, false) == -1);
static_assert(vadd(127, 1, false) == 127 && mac(kMax, 1, 1) == kMin);

TEST(Arith, TwoComplementHelpers) {
  EXPECT_EQ(from_bits32(0x7FFF'FFFFu), kMax);
  EXPECT_EQ(from_bits32(0x8000'0001u), kMin + 1);
  EXPECT_EQ(from_bits64(0xFFFF'FFFF'FFFF'FFFFu), -1);
  EXPECT_EQ(add_wrap32(kMax, 1), kMin);
  EXPECT_EQ(add_wrap32(kMin, -1), kMax);
  EXPECT_EQ(add_wrap32(kMin, kMin), 0);
  EXPECT_EQ(add_wrap32(kMax, kMax), -2);
  // arithmetic shift rounds towards minus infinity
  EXPECT_EQ(shift_right_arith(-5, 1), -3);
  EXPECT_EQ(shift_right_arith(-1, 63), -1);
  EXPECT_EQ(shift_right_arith(kMin64, 63), -1);
  EXPECT_EQ(shift_right_arith(kMin64, 0), kMin64);
  EXPECT_EQ(shift_right_arith(std::numeric_limits<std::int64_t>::max(), 62), 1);
  EXPECT_EQ(shift_right_arith(5, 1), 2);
}

TEST(Arith, VquantAtTheExtremesOfAccScaleAndShift) {
  // The one rounding add that wraps: 2^62 + 2^62 = 2^63 -> -2^63 (a non-wrapping add gives +1).
  EXPECT_EQ(vquant(kMin, kMin, 63, false), -1);
  EXPECT_EQ(vquant(kMin, kMin, 63, true), 0);
  // 2^62 + 2^61 = 3 * 2^61, >>> 62 = 1
  EXPECT_EQ(vquant(kMin, kMin, 62, false), 1);
  // (2^31-1)^2 + 2^62 = 2^63 - 2^32 + 1: just below the wrap, >>> 63 = 0
  EXPECT_EQ(vquant(kMax, kMax, 63, false), 0);
  // -2^31 (2^31-1) + 2^62 = 2^31, >>> 63 = 0
  EXPECT_EQ(vquant(kMin, kMax, 63, false), 0);
  // 2^62 - 2^31 + 2^61 >= 2^62, >>> 62 = 1
  EXPECT_EQ(vquant(kMin, -kMax, 62, false), 1);
  // -2^62 + 2^31 + 2^61 < 0: >>> 62 = -1
  EXPECT_EQ(vquant(kMin, kMax, 62, false), -1);
  // shift 0: the product saturates
  EXPECT_EQ(vquant(kMax, kMax, 0, false), 127);
  EXPECT_EQ(vquant(kMax, -kMax, 0, false), -128);
  EXPECT_EQ(vquant(kMax, -kMax, 0, true), 0);
  EXPECT_EQ(vquant(kMin, kMin, 0, false), 127);
  EXPECT_EQ(vquant(kMin, kMax, 0, false), -128);
  // 2^31 - 1 = 2^31 * (1 - 2^-31): >>> 31 rounds to 1, >>> 32 to 0 (half up: 0.49999...)
  EXPECT_EQ(vquant(kMax, 1, 31, false), 1);
  EXPECT_EQ(vquant(kMax, 1, 32, false), 0);
  EXPECT_EQ(vquant(kMin, 1, 31, false), -1);
  EXPECT_EQ(vquant(kMin, 1, 32, false), 0);     // -0.5 rounds half up to 0
  EXPECT_EQ(vquant(kMin, 1, 33, false), 0);     // -0.25
  EXPECT_EQ(vquant(kMin, -1, 24, false), 127);  // 2^31 / 2^24 = 128, saturates
  EXPECT_EQ(vquant(kMin, 1, 24, false), -128);  // exactly -128
  EXPECT_EQ(vquant(kMin, 1, 24, true), 0);
}

TEST(Arith, VquantRoundsHalfUpAndSaturates) {
  EXPECT_EQ(vquant(5, 1, 1, false), 3);        // 2.5 -> 3
  EXPECT_EQ(vquant(-5, 1, 1, false), -2);      // -2.5 -> -2
  EXPECT_EQ(vquant(-3, 1, 2, false), -1);      // -0.75 -> -1
  EXPECT_EQ(vquant(-2, 1, 2, false), 0);       // -0.5 -> 0
  EXPECT_EQ(vquant(-1, 1, 1, false), 0);       // -0.5 -> 0
  EXPECT_EQ(vquant(255, 1, 1, false), 127);    // 128 saturates
  EXPECT_EQ(vquant(-256, 1, 1, false), -128);  // exactly -128
  EXPECT_EQ(vquant(-259, 1, 1, false), -128);  // -129 saturates
  EXPECT_EQ(vquant(100, 1, 0, true), 100);
  EXPECT_EQ(vquant(-100, 1, 0, true), 0);
  EXPECT_EQ(vquant(0, kMin, 63, false), 0);
  // only the 6 bits of the field count
  EXPECT_EQ(vquant(100, 3, 64 + 4, false), vquant(100, 3, 4, false));
  EXPECT_EQ(vquant(100, 3, 64 + 4, false), 19);  // 300 / 16 = 18.75 -> 19
}

TEST(Arith, VquantBiasWrapsInInt32First) {
  EXPECT_EQ(vquant_biased(kMax, 1, 1, 0, false), -128);  // INT32_MAX + 1 = INT32_MIN
  EXPECT_EQ(vquant_biased(kMin, -1, 1, 0, false), 127);  // INT32_MIN - 1 = INT32_MAX
  // INT32_MIN * -1 = 2^31; + 2^30 = 3 * 2^30, >>> 31 = 1 (without the wrap the sum 2^31 would
  // give -2^31 + 2^30 < 0 and -1)
  EXPECT_EQ(vquant_biased(kMax, 1, -1, 31, false), 1);
  EXPECT_EQ(vquant_biased(kMin, kMin, kMax, 5, false), 0);  // the sum wraps to 0
  EXPECT_EQ(vquant_biased(kMax, kMax, 1, 0, false), -2);    // wraps to -2
  EXPECT_EQ(vquant_biased(kMax, kMax, 1, 0, true), 0);
  EXPECT_EQ(vquant_biased(-7, 7, kMin, 63, false), 0);
}

TEST(Arith, VaddSaturatesThenRelu) {
  EXPECT_EQ(vadd(127, 1, false), 127);
  EXPECT_EQ(vadd(127, 127, false), 127);
  EXPECT_EQ(vadd(-128, -1, false), -128);
  EXPECT_EQ(vadd(-128, -128, false), -128);
  EXPECT_EQ(vadd(-128, -128, true), 0);
  EXPECT_EQ(vadd(-128, 127, false), -1);
  EXPECT_EQ(vadd(-128, 127, true), 0);
  EXPECT_EQ(vadd(100, -28, true), 72);
  EXPECT_EQ(vadd(0, 0, true), 0);
}

TEST(Arith, MxuMacLaneAndAccumulateWrapInInt32) {
  EXPECT_EQ(mac(0, -128, -128), 16384);
  EXPECT_EQ(mac(0, -128, 127), -16256);
  EXPECT_EQ(mac(kMin, -128, 1), kMax - 127);
  EXPECT_EQ(mac(kMax - 16383, -128, -128), kMin);
  // 2^17 products of 2^14 sum to 2^31: one column wraps to INT32_MIN
  const std::size_t k = std::size_t{1} << 17;
  const std::vector<std::int8_t> x(k, -128);
  const std::vector<std::int8_t> w(2 * k, -128);  // W[kk][n] at w[kk * 2 + n], two columns
  EXPECT_EQ(mxu_lane(x.data(), w.data(), k, 2), kMin);
  EXPECT_EQ(mxu_lane(x.data(), w.data() + 1, k - 1, 2), kMax - 16383);
  const std::int8_t x3[] = {1, -2, 3}, w3[] = {4, 0, 5, 0, -6, 0};
  EXPECT_EQ(mxu_lane(x3, w3, 3, 2), 1 * 4 - 2 * 5 - 3 * 6);
  EXPECT_EQ(mxu_lane(x3, w3 + 1, 3, 2), 0);
  EXPECT_EQ(mxu_lane(x3, w3, 0, 2), 0);
  EXPECT_EQ(acc_write(kMax, 1, true), kMin);
  EXPECT_EQ(acc_write(kMin, kMin, true), 0);
  EXPECT_EQ(acc_write(5, 7, false), 7);
  EXPECT_EQ(acc_write(5, 7, true), 12);
}

// Below shift 63 the rounding add cannot wrap, so the header is round half up of x*scale/2^shift,
// saturated: computed here in 128 bits with a floor division, at every shift.
TEST(Arith, VquantIsRoundHalfUpOfTheExactQuotientAtEveryShift) {
  const std::int32_t values[] = {kMin, kMin + 1, -65537, -256,     -1,  0,
                                 1,    255,      65537,  kMax - 1, kMax};
  const std::int32_t scales[] = {kMin, -kMax, -1, 1, 3, kMax};
  for (unsigned shift = 0; shift < 64; ++shift) {
    for (std::int32_t x : values) {
      for (std::int32_t scale : scales) {
        if (shift == 63 && x == kMin && scale == kMin) continue;  // the wrap, pinned above
        __int128 p = static_cast<__int128>(x) * scale;
        if (shift > 0) p += static_cast<__int128>(1) << (shift - 1);
        const __int128 d = static_cast<__int128>(1) << shift;
        __int128 q = p / d;
        if (p % d != 0 && p < 0) --q;  // floor
        const std::int64_t want = q > 127 ? 127 : (q < -128 ? -128 : static_cast<std::int64_t>(q));
        for (bool relu : {false, true}) {
          EXPECT_EQ(vquant(x, scale, shift, relu), relu && want < 0 ? 0 : want)
              << "x " << x << " scale " << scale << " shift " << shift << " relu " << relu;
        }
      }
    }
  }
}

}  // namespace
}  // namespace tpuemu::spec::arith
