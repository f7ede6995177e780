// SPDX-License-Identifier: Apache-2.0
// The core's element arithmetic, written once: what one lane of VQUANT and VADD and one
// processing element of the MXU compute, bit for bit as the RTL does (rtl/ctrl/vec_lanes.sv,
// rtl/mxu/mxu_pe.sv, rtl/mem/acc_mem.sv). Every C++ model of the core calls these functions: the
// reference model of the compile layer, the fake backend's functional core and the SystemC/TLM
// core model. The RTL is the arbiter; tests/rtl/test_core_arith.cpp compares it with this header
// at the extremes, tests/unit/test_arith.cpp pins hand-computed values.
//
// Header-only, C++17 (the TLM model's SystemC side is C++17) and free of the generated contract so
// that any target may include it. Every operation is defined behaviour in C++17 too: sums that
// wrap are done in unsigned arithmetic and turned back into two's complement by value, and the
// arithmetic right shift is built from shifts of non-negative values.
#pragma once

#include <cstddef>
#include <cstdint>

namespace tpuemu::spec::arith {

// The two's-complement value of a 32-bit / 64-bit pattern (what a cast does in C++20, spelled out
// so that C++17 gives the same without implementation-defined conversions).
constexpr std::int32_t from_bits32(std::uint32_t u) {
  return u <= 0x7FFF'FFFFu ? static_cast<std::int32_t>(u) : -static_cast<std::int32_t>(~u) - 1;
}
constexpr std::int64_t from_bits64(std::uint64_t u) {
  return u <= 0x7FFF'FFFF'FFFF'FFFFu ? static_cast<std::int64_t>(u)
                                     : -static_cast<std::int64_t>(~u) - 1;
}

// a + b modulo 2^32: the int32 adders of the MXU's processing elements, of ACC's accumulate and of
// VQUANT's bias.
constexpr std::int32_t add_wrap32(std::int32_t a, std::int32_t b) {
  return from_bits32(static_cast<std::uint32_t>(a) + static_cast<std::uint32_t>(b));
}

// v >>> s (SystemVerilog's arithmetic shift: rounds towards minus infinity), 0 <= s < 64. For a
// negative v, ~v = -v - 1 is non-negative, and ~(~v >> s) = floor(v / 2^s).
constexpr std::int64_t shift_right_arith(std::int64_t v, unsigned s) {
  return v < 0 ? ~(~v >> s) : v >> s;
}

// The end of both vector results (vec_lanes' to_int8): clamp to [-128, 127], then ReLU.
constexpr std::int8_t saturate_int8(std::int64_t v, bool relu) {
  const std::int64_t q = v > 127 ? 127 : (v < -128 ? -128 : v);
  return static_cast<std::int8_t>(relu && q < 0 ? 0 : q);
}

// The width of VQUANT's shift (the instruction field and the SMEM word's low bits): 0 ... 63.
inline constexpr unsigned kShiftBits = 6;
inline constexpr unsigned kShiftMask = (1u << kShiftBits) - 1;

// VQUANT of one lane (x already biased): p = x * scale, exact in 64 bits (|p| <= 2^62);
// p += 1 << (shift - 1) when shift > 0, wrapping in 64 bits like the RTL's adder (it wraps only
// for x = scale = INT32_MIN at shift 63, where p + 2^62 = 2^63 becomes -2^63); p >>>= shift; then
// saturate_int8. Only the low kShiftBits bits of shift count, as in the hardware.
constexpr std::int8_t vquant(std::int32_t x, std::int32_t scale, unsigned shift, bool relu) {
  shift &= kShiftMask;
  auto p = static_cast<std::uint64_t>(std::int64_t{x} * std::int64_t{scale});
  if (shift != 0) p += std::uint64_t{1} << (shift - 1);
  return saturate_int8(shift_right_arith(from_bits64(p), shift), relu);
}

// VQUANT with its bias flag: the accumulator plus the lane's int32 bias (wrapping), then vquant.
constexpr std::int8_t vquant_biased(std::int32_t acc, std::int32_t bias, std::int32_t scale,
                                    unsigned shift, bool relu) {
  return vquant(add_wrap32(acc, bias), scale, shift, relu);
}

// VADD of one lane: the exact sum of two int8 (9 bits in the RTL), then saturate_int8.
constexpr std::int8_t vadd(std::int8_t a, std::int8_t b, bool relu) {
  return saturate_int8(std::int64_t{a} + std::int64_t{b}, relu);
}

// One MXU processing element: the partial sum from above plus activation times weight. The
// product of two int8 is exact in int32 (|a * w| <= 2^14); the sum wraps.
constexpr std::int32_t mac(std::int32_t psum, std::int8_t act, std::int8_t weight) {
  return add_wrap32(psum, std::int32_t{act} * std::int32_t{weight});
}

// One output lane of a MATMUL row (a column of the array, top to bottom): sum over k < dim of
// x[k] * w[k * w_stride], starting from 0 like the array's top row. w points at W[0][n].
constexpr std::int32_t mxu_lane(const std::int8_t* x, const std::int8_t* w, std::size_t dim,
                                std::size_t w_stride) {
  std::int32_t psum = 0;
  for (std::size_t k = 0; k < dim; ++k) psum = mac(psum, x[k], w[k * w_stride]);
  return psum;
}

// What ACC's write-back stores for a result lane: the old value plus the result (wrapping) for an
// accumulating MATMUL, else the result.
constexpr std::int32_t acc_write(std::int32_t old, std::int32_t result, bool accumulate) {
  return accumulate ? add_wrap32(old, result) : result;
}

}  // namespace tpuemu::spec::arith
