// SPDX-License-Identifier: Apache-2.0
// The host layer `compile` (host/layers.txt): workloads to programs.
//
// compile_matmul tiles C = A . B (int8 x int8 -> int32, optionally requantised to int8 with ReLU)
// into VMEM-sized blocks and emits a software-pipelined program: DMA loads run `buffers` deep
// ahead of the MXU (like Pallas' pl.Buffered(n)), accumulators are double-buffered so that a
// finished block drains while the next one computes, and every hand-over between the DMA, MXU and
// vector queues is a semaphore wait/signal pair. Tiling and buffering choices are in docs/compiler.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "tpuemu/alloc/memory_space.h"
#include "tpuemu/config/config.h"
#include "tpuemu/layout/layout.h"
#include "tpuemu/program/program.h"

namespace tpuemu {

// Buffers per operand: A (activations), B (weights), out (accumulator regions and VMEM output
// slots). 1 serialises load and compute, 2 double-buffers, 3 triple-buffers.
struct BufferCounts {
  unsigned a = 2;
  unsigned b = 2;
  unsigned out = 2;
};

struct CompileOptions {
  BufferCounts buffers;
  // Keep a whole row panel of A (all of K) resident in VMEM across the N blocks that reuse it,
  // skipping its reloads, when it fits.
  bool reuse_resident = true;
  // VMEM buffers are packed by the offline planner (tpuemu/plan/planner.h). With a space, they are
  // allocated from it like a runtime without a static plan would, and freed when the matmul's
  // program ends (the layer fence makes the reuse safe); its metrics tell what the policy cost.
  alloc::MemorySpace* vmem_space = nullptr;
};

struct MatmulSpec {
  std::size_t m = 0, k = 0, n = 0;
  bool requantize = false;  // int8 output through the vector unit; otherwise int32 from ACC
  std::int32_t scale = 1;
  unsigned shift = 0;
  bool relu = false;
};

// A tensor in HBM: its layout and byte address.
struct HbmTensor {
  TiledLayout layout;
  std::uint64_t addr = 0;
};

// The rows of A gathered from HBM instead of read as one tiled matrix: a convolution's im2col view
// or a flattened image (docs/compiler.md, "Convolutions"). Row r of k tile kt (the dim columns
// [kt*dim, (kt+1)*dim) of the virtual A) is the dim bytes at row_address(r, kt), or zeros (the
// convolution's padding, and every row past m).
struct AGather {
  std::function<std::optional<std::uint64_t>(std::size_t row, std::size_t k_tile)> row_address;
  std::uint64_t zero_addr = 0;  // kGatherZeroRows * dim bytes of zeros in HBM
};
inline constexpr std::uint32_t kGatherZeroRows = 32;

// What a matmul reads and writes. With a_gather, `a` gives only the virtual A's shape.
struct MatmulOperands {
  HbmTensor a, b, c;
  // Requantised output only: int32 lanes added before the requantisation (VQUANT's bias), 4 * dim
  // bytes per weight tile, loaded into VMEM once for the whole matmul.
  std::optional<HbmTensor> bias;
  const AGather* a_gather = nullptr;
};

// What the compiler decided, for reports.
struct MatmulPlan {
  std::size_t block_m = 0;        // rows of A per block
  std::size_t block_n_tiles = 0;  // weight tiles (dim columns each) per block
  std::size_t k_tiles = 0;
  std::size_t m_blocks = 0, n_blocks = 0, steps = 0;
  bool a_resident = false;
  unsigned a_slots = 0, b_slots = 0, out_slots = 0;
  std::uint32_t vmem_rows_used = 0;  // static VMEM footprint in rows (highest row used + 1)
  // The VMEM buffers of this matmul ("A", "B", "out": all slots of an operand, contiguous), in
  // rows; they live from the first to the last instruction of the matmul.
  struct VmemRegion {
    std::string name;
    std::uint32_t base_row = 0, rows = 0;
  };
  std::vector<VmemRegion> vmem_regions;
  std::string vmem_placement;  // "planner" or the allocation policy
  std::uint32_t acc_rows_used = 0;
  std::uint64_t bytes_a = 0, bytes_b = 0, bytes_out = 0;  // planned HBM traffic
  std::uint64_t bytes_a_reused = 0;  // A reloads skipped because the panel stayed resident
  std::size_t instructions = 0;
};

// The smallest number of HBM bytes any schedule must move: each input read once, the output
// written once (logical, unpadded sizes).
std::uint64_t minimum_hbm_bytes(const MatmulSpec& spec);
// MXU cycles at 100% utilisation: one row per cycle per dim x dim weight tile.
std::uint64_t ideal_mxu_cycles(const MatmulSpec& spec, std::uint32_t dim);

// Layouts the compiler expects: A m x k int8, B k x n int8 with rows padded to whole weight tiles,
// C m x n int32 (or int8 when requantised). All tiled unless `tiled` is false.
TiledLayout matmul_a_layout(const MatmulSpec& spec, std::uint32_t dim, bool tiled = true);
TiledLayout matmul_b_layout(const MatmulSpec& spec, std::uint32_t dim, bool tiled = true);
TiledLayout matmul_c_layout(const MatmulSpec& spec, std::uint32_t dim, bool tiled = true);

// Appends the program for C = A . B to `program` (no END). The semaphores it uses are balanced:
// every signal is consumed, so programs can be concatenated. Throws Error when the shape cannot
// be tiled into this preset's VMEM and ACC.
MatmulPlan compile_matmul(const Preset& preset, const MatmulSpec& spec, const MatmulOperands& operands,
                          const CompileOptions& options, Program& program);
MatmulPlan compile_matmul(const Preset& preset, const MatmulSpec& spec, const HbmTensor& a,
                          const HbmTensor& b, const HbmTensor& c, const CompileOptions& options,
                          Program& program);

}  // namespace tpuemu
