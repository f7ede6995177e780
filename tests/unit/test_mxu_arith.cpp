// SPDX-License-Identifier: Apache-2.0
// The core model's MXU arithmetic (sim/tlm mxu_arith.h: AVX2 where the CPU has it, and the
// portable path on its own) against the array's contract computed the plain way, column by column
// through the contract's processing element (tpuemu/spec/arith.h: arith::mac), over every DIM the
// model accepts and every rotation of the weight ring it keeps.
#include <cstdint>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "tpuemu/spec/arith.h"
#include "tpuemu/tlm/mxu_arith.h"

namespace tpuemu::tlm {
namespace {

std::vector<std::int32_t> reference(const std::vector<std::uint8_t>& x, const std::vector<std::int8_t>& ring,
                                    std::uint32_t top, std::uint32_t dim) {
  std::vector<std::int32_t> out(dim, 0);
  for (std::uint32_t k = 0; k < dim; ++k) {
    const std::int8_t* row = ring.data() + std::size_t{(top + k) % dim} * dim;
    for (std::uint32_t n = 0; n < dim; ++n) out[n] = spec::arith::mac(out[n], static_cast<std::int8_t>(x[k]), row[n]);
  }
  return out;
}

TEST(MxuArith, RowProductMatchesTheContractAtEveryDimAndRingRotation) {
  std::mt19937 rng(13);
  std::uniform_int_distribution<int> byte(0, 255);
  for (std::uint32_t dim : {8u, 16u, 32u, 64u, 128u, 256u}) {
    std::vector<std::int8_t> ring(std::size_t{dim} * dim);
    std::vector<std::int16_t> pairs(ring.size());
    std::vector<std::uint8_t> x(dim);
    std::vector<std::int32_t> out(dim);
    for (std::uint32_t top : {0u, 1u, dim / 2 + 1, dim - 1}) {
      for (auto& w : ring) w = static_cast<std::int8_t>(byte(rng));
      for (auto& v : x) v = static_cast<std::uint8_t>(byte(rng));
      mxu_weight_pairs(ring.data(), top, dim, pairs.data());
      mxu_row_product(x.data(), pairs.data(), dim, out.data());
      EXPECT_EQ(out, reference(x, ring, top, dim)) << "dim " << dim << " top " << top;
      // The portable path on its own: what a machine without AVX2 (or another architecture) runs.
      mxu_row_product_portable(x.data(), pairs.data(), dim, out.data());
      EXPECT_EQ(out, reference(x, ring, top, dim)) << "portable, dim " << dim << " top " << top;
    }
  }
}

TEST(MxuArith, ExtremeOperandsGiveTheExactSums) {
  // -128 * -128 summed over DIM 256 is 4194304: every lane at its largest magnitude.
  const std::uint32_t dim = 256;
  std::vector<std::int8_t> ring(std::size_t{dim} * dim, -128);
  std::vector<std::int16_t> pairs(ring.size());
  std::vector<std::uint8_t> x(dim, 0x80);
  std::vector<std::int32_t> out(dim);
  mxu_weight_pairs(ring.data(), 0, dim, pairs.data());
  mxu_row_product(x.data(), pairs.data(), dim, out.data());
  for (std::int32_t v : out) ASSERT_EQ(v, 128 * 128 * 256);
  mxu_row_product_portable(x.data(), pairs.data(), dim, out.data());
  for (std::int32_t v : out) ASSERT_EQ(v, 128 * 128 * 256);
}

}  // namespace
}  // namespace tpuemu::tlm
