// SPDX-License-Identifier: Apache-2.0
// The MXU's arithmetic in the core model: the array by its contract, not its PEs. A row x that
// enters with weight bank W leaves as out[n] = sum_k x[k] * W[k][n] (int8 operands, int32 sums
// that wrap like the RTL's adders). The weights are kept as int16 pairs (W[k][n], W[k+1][n]) per
// column, rebuilt after a load, so that each AVX2 multiply-add does 16 products. The element
// arithmetic is the contract's (tpuemu/spec/arith.h: arith::mac); this is its fast form.
//
// Public so that bench_tlm can measure the floor this arithmetic puts under any cycle model: a
// cycle with a row in the array costs at least one mxu_row_product (DIM^2 products).
// C++17.
#pragma once

#include <cstdint>

namespace tpuemu::tlm {

// weights: DIM rows of DIM int8, logical row k at physical row (top + k) mod DIM (the model's
// weight ring); pairs: DIM*DIM int16. dim is a power of two >= 8.
void mxu_weight_pairs(const std::int8_t* weights, std::uint32_t top, std::uint32_t dim, std::int16_t* pairs);

// out[n] = sum_k int8(input[k]) * W[k][n], with W given as mxu_weight_pairs built it. AVX2 on an
// x86 build whose CPU has it (checked at run time), otherwise mxu_row_product_portable; both give
// the same bits.
void mxu_row_product(const std::uint8_t* input, const std::int16_t* pairs, std::uint32_t dim, std::int32_t* out);
// The definition in plain C++ (every column a chain of arith::mac), what other architectures run.
void mxu_row_product_portable(const std::uint8_t* input, const std::int16_t* pairs, std::uint32_t dim,
                              std::int32_t* out);

}  // namespace tpuemu::tlm
