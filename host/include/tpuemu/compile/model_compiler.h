// SPDX-License-Identifier: Apache-2.0
// A model's layers compiled into device programs, one per layer execution ("step"), against HBM
// addresses the runtime chose. Each activation tensor is a rows x channels matrix in the TPU
// tiled layout; dense layers are matmuls, conv2d layers matmuls over an im2col view their A loads
// gather by DMA (with a block of zeros in HBM as the padding), add layers a VADD pipeline
// (docs/compiler.md, "Models").
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "tpuemu/alloc/memory_space.h"
#include "tpuemu/compile/compile.h"
#include "tpuemu/compile/model.h"
#include "tpuemu/compile/model_reference.h"

namespace tpuemu {

// Where one step's operands are in HBM.
struct StepAddresses {
  std::vector<std::uint64_t> inputs;  // one per layer input
  std::uint64_t output = 0;
  std::uint64_t weights = 0, bias = 0;  // dense and conv2d
  std::uint64_t zeros = 0;              // conv2d and flattening dense: kGatherZeroRows rows of zeros
};

// What the compiler decided for one step, for reports.
struct StepPlan {
  MatmulSpec spec;       // dense and conv2d
  MatmulPlan plan;
  std::uint64_t ideal_cycles = 0;   // MXU at 100% (add: 0)
  std::uint64_t min_hbm_bytes = 0;  // every input, weight and output moved once (logical sizes)
  std::uint64_t padding_bytes = 0;  // layout padding of the weights and the output
  std::uint32_t vmem_rows_used = 0, acc_rows_used = 0;
};

class ModelCompiler {
 public:
  // `vmem_allocator`: VMEM buffers placed by this runtime policy instead of the offline planner.
  ModelCompiler(const Preset& preset, const Model& model, std::size_t batch, const CompileOptions& options,
                bool tiled, const std::optional<std::string>& vmem_allocator);

  const Model& model() const { return model_; }
  std::size_t batch() const { return batch_; }
  // Tensor t (0: the input, i + 1: layer i's output) for `batch` samples.
  const TiledLayout& layout(std::size_t tensor) const { return tensors_[tensor]; }
  // The layer's weight matrix as the MXU reads it (rows padded per kernel position to whole
  // dim-lane tiles), and its bias as int32 lanes (0 bytes without a bias).
  const TiledLayout& weight_layout(std::size_t layer) const { return weights_[layer]; }
  std::uint64_t bias_bytes(std::size_t layer) const;
  bool gathers(std::size_t layer) const;  // conv2d or flattening dense
  bool needs_zeros() const;
  std::uint64_t zeros_bytes() const;

  // Appends the program of one execution of `layer`, ending with END.
  StepPlan compile_step(std::size_t layer, const StepAddresses& at, Program& program);
  std::optional<alloc::SpaceMetrics> vmem_metrics() const;

  // Device images.
  std::vector<std::uint8_t> weight_image(std::size_t layer, const LayerParams& params) const;
  std::vector<std::uint8_t> bias_image(std::size_t layer, const LayerParams& params) const;
  std::vector<std::uint8_t> input_image(std::span<const std::int8_t> input) const;

 private:
  MatmulSpec matmul_spec(std::size_t layer) const;
  StepPlan compile_add(std::size_t layer, const StepAddresses& at, Program& program);

  const Preset& preset_;
  const Model& model_;
  std::size_t batch_;
  CompileOptions options_;
  bool tiled_;
  std::optional<alloc::MemorySpace> vmem_space_;
  std::vector<TiledLayout> tensors_;
  std::vector<TiledLayout> weights_;
};

}  // namespace tpuemu
