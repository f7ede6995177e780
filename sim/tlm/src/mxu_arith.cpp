// SPDX-License-Identifier: Apache-2.0
// The MXU's arithmetic in the core model (mxu_arith.h).
#include "tpuemu/tlm/mxu_arith.h"

#include <cstddef>

// The vector path is x86's (AVX2); other architectures build the portable one alone.
#if defined(__x86_64__) || defined(__i386__)
#define TPUEMU_MXU_AVX2 1
#include <immintrin.h>
#endif

#include "tpuemu/spec/arith.h"

namespace tpuemu::tlm {
namespace {

namespace arith = spec::arith;  // the element arithmetic every model of the core shares

#ifdef TPUEMU_MXU_AVX2
// out[n] = sum_k in[k] * W[k][n] over the weights as int16 pairs (W[k][n], W[k+1][n]) per column n.
// With AVX2 (checked at run time) each multiply-add of pairs does 16 products on 8 columns. A block
// of up to 64 columns keeps its Accs accumulators in registers across all k, so each input pair is
// broadcast once per block rather than once per 8 columns.
template <std::size_t Accs>
__attribute__((target("avx2"))) void column_block_avx2(const std::uint8_t* input, const std::int16_t* pairs,
                                                        std::uint32_t dim, std::size_t n0, std::int32_t* out) {
  __m256i acc[Accs];
  for (std::size_t j = 0; j < Accs; ++j) acc[j] = _mm256_setzero_si256();
  for (std::size_t k = 0; k < dim; k += 2) {
    const auto a0 = static_cast<std::uint16_t>(static_cast<std::int16_t>(static_cast<std::int8_t>(input[k])));
    const auto a1 = static_cast<std::uint16_t>(static_cast<std::int16_t>(static_cast<std::int8_t>(input[k + 1])));
    const __m256i a = _mm256_set1_epi32(static_cast<int>(a0 | (std::uint32_t{a1} << 16)));
    const std::int16_t* row = pairs + k * dim + 2 * n0;
    for (std::size_t j = 0; j < Accs; ++j) {
      const __m256i w = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(row + 16 * j));
      acc[j] = _mm256_add_epi32(acc[j], _mm256_madd_epi16(w, a));
    }
  }
  for (std::size_t j = 0; j < Accs; ++j) _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + n0 + 8 * j), acc[j]);
}

__attribute__((target("avx2"))) void row_times_weights_avx2(const std::uint8_t* input, const std::int16_t* pairs,
                                                             std::uint32_t dim, std::int32_t* out) {
  // dim is a power of two >= 8 (the constructor's check)
  switch (dim) {
    case 8: column_block_avx2<1>(input, pairs, dim, 0, out); return;
    case 16: column_block_avx2<2>(input, pairs, dim, 0, out); return;
    case 32: column_block_avx2<4>(input, pairs, dim, 0, out); return;
    default:
      for (std::size_t n0 = 0; n0 < dim; n0 += 64) column_block_avx2<8>(input, pairs, dim, n0, out);
  }
}

#endif  // TPUEMU_MXU_AVX2

// The definition: every column is a chain of processing elements (arith::mac), as in the array.
// The AVX2 path computes the same sums in another order, which wrapping int32 addition allows;
// tests/unit/test_mxu_arith.cpp checks both paths against arith::mac.
void row_times_weights(const std::uint8_t* input, const std::int16_t* pairs, std::uint32_t dim, std::int32_t* out) {
  for (std::size_t n = 0; n < dim; ++n) out[n] = 0;
  for (std::size_t k = 0; k < dim; k += 2) {
    const auto a0 = static_cast<std::int8_t>(input[k]);
    const auto a1 = static_cast<std::int8_t>(input[k + 1]);
    const std::int16_t* p = pairs + k * dim;
    for (std::size_t n = 0; n < dim; ++n) {
      out[n] = arith::mac(arith::mac(out[n], a0, static_cast<std::int8_t>(p[2 * n])), a1,
                          static_cast<std::int8_t>(p[2 * n + 1]));
    }
  }
}

}  // namespace

void mxu_row_product(const std::uint8_t* input, const std::int16_t* pairs, std::uint32_t dim, std::int32_t* out) {
#ifdef TPUEMU_MXU_AVX2
  static const bool avx2 = __builtin_cpu_supports("avx2");
  if (avx2) {
    row_times_weights_avx2(input, pairs, dim, out);
    return;
  }
#endif
  row_times_weights(input, pairs, dim, out);
}

void mxu_row_product_portable(const std::uint8_t* input, const std::int16_t* pairs, std::uint32_t dim,
                              std::int32_t* out) {
  row_times_weights(input, pairs, dim, out);
}

void mxu_weight_pairs(const std::int8_t* weights, std::uint32_t top, std::uint32_t dim, std::int16_t* pairs) {
  for (std::uint32_t k = 0; k < dim; k += 2) {
    const std::int8_t* r0 = weights + std::size_t{(top + k) & (dim - 1)} * dim;
    const std::int8_t* r1 = weights + std::size_t{(top + k + 1) & (dim - 1)} * dim;
    for (std::uint32_t n = 0; n < dim; ++n) {
      pairs[std::size_t{k} * dim + 2 * n] = r0[n];
      pairs[std::size_t{k} * dim + 2 * n + 1] = r1[n];
    }
  }
}

}  // namespace tpuemu::tlm
