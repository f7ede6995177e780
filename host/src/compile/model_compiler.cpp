// SPDX-License-Identifier: Apache-2.0
#include "tpuemu/compile/model_compiler.h"

#include <algorithm>

#include <fmt/format.h>

#include "tpuemu/alloc/allocator.h"
#include "tpuemu/base/error.h"
#include "vmem_placement.h"

namespace tpuemu {
namespace {

std::size_t ceil_div(std::size_t a, std::size_t b) { return (a + b - 1) / b; }

void push_le32(std::vector<std::uint8_t>& out, std::int32_t v) {
  const auto u = static_cast<std::uint32_t>(v);
  for (int b = 0; b < 4; ++b) out.push_back(static_cast<std::uint8_t>(u >> (8 * b)));
}

// Semaphores of the add pipeline (a fresh program: every count is balanced at its END).
enum AddSem : std::uint8_t { kInReady = 0, kSumReady, kSlotFree };

}  // namespace

ModelCompiler::ModelCompiler(const Preset& preset, const Model& model, std::size_t batch,
                             const CompileOptions& options, bool tiled,
                             const std::optional<std::string>& vmem_allocator)
    : preset_(preset), model_(model), batch_(batch), options_(options), tiled_(tiled) {
  if (vmem_allocator) {
    vmem_space_.emplace("VMEM", alloc::make_allocator(*vmem_allocator, {preset.vmem_bytes(), 256}));
    options_.vmem_space = &*vmem_space_;
  } else {
    options_.vmem_space = nullptr;
  }
  const std::uint32_t dim = preset.dim;
  for (std::size_t t = 0; t <= model.layers.size(); ++t) {
    const bool int32 = t > 0 && model.layers[t - 1].int32_output;
    tensors_.push_back(make_layout(tiled, static_cast<std::int64_t>(model.rows(t, batch)),
                                   static_cast<std::int64_t>(model.shape_of(t).channels), int32 ? 4 : 1, dim,
                                   model.tensor_name(t)));
  }
  for (std::size_t i = 0; i < model.layers.size(); ++i) {
    if (!has_weights(model.layers[i].kind)) {
      weights_.push_back({});
      continue;
    }
    weights_.push_back(matmul_b_layout(matmul_spec(i), dim, tiled));
  }
}

bool ModelCompiler::gathers(std::size_t layer) const {
  const ModelLayer& l = model_.layers[layer];
  return l.kind == LayerKind::Conv2d || (l.kind == LayerKind::Dense && l.flatten);
}

bool ModelCompiler::needs_zeros() const {
  for (std::size_t i = 0; i < model_.layers.size(); ++i) {
    if (gathers(i)) return true;
  }
  return false;
}

std::uint64_t ModelCompiler::zeros_bytes() const { return std::uint64_t{kGatherZeroRows} * preset_.dim; }

std::uint64_t ModelCompiler::bias_bytes(std::size_t layer) const {
  const ModelLayer& l = model_.layers[layer];
  if (!l.bias) return 0;
  return 4 * ceil_div(l.out.channels, preset_.dim) * preset_.dim;
}

MatmulSpec ModelCompiler::matmul_spec(std::size_t layer) const {
  const ModelLayer& l = model_.layers[layer];
  const std::size_t dim = preset_.dim;
  MatmulSpec s;
  s.m = batch_ * l.out.pixels();
  // A gathered k tile is one kernel position's channel tile: channels pad to whole tiles there.
  s.k = gathers(layer) ? l.kernel_h * l.kernel_w * ceil_div(l.in.channels, dim) * dim : l.in.channels;
  s.n = l.out.channels;
  s.requantize = !l.int32_output;
  s.scale = l.scale;
  s.shift = l.shift;
  s.relu = l.relu;
  return s;
}

std::optional<alloc::SpaceMetrics> ModelCompiler::vmem_metrics() const {
  if (!vmem_space_) return std::nullopt;
  return vmem_space_->metrics();
}

StepPlan ModelCompiler::compile_step(std::size_t layer, const StepAddresses& at, Program& program) {
  const ModelLayer& l = model_.layers[layer];
  StepPlan sp;
  if (l.kind == LayerKind::Gather) {
    throw Error(fmt::format("compile: layer '{}' is a gather, which the interconnect runs, not the core", l.name));
  }
  if (l.kind == LayerKind::Add) {
    sp = compile_add(layer, at, program);
  } else {
    const std::uint32_t dim = preset_.dim;
    sp.spec = matmul_spec(layer);
    const TiledLayout& in = tensors_[l.inputs[0]];
    MatmulOperands ops;
    ops.b = {weights_[layer], at.weights};
    ops.c = {tensors_[layer + 1], at.output};
    if (l.bias) ops.bias = HbmTensor{make_untiled_layout(1, static_cast<std::int64_t>(bias_bytes(layer)), 1, dim, "bias"), at.bias};
    AGather gather;
    if (gathers(layer)) {
      ops.a = {make_layout(tiled_, static_cast<std::int64_t>(sp.spec.m), static_cast<std::int64_t>(sp.spec.k), 1, dim, l.name), 0};
      const std::size_t ct = ceil_div(l.in.channels, dim);
      const std::size_t opix = l.out.pixels();
      const std::uint64_t base = at.inputs[0];
      gather.zero_addr = at.zeros;
      gather.row_address = [&l, &in, ct, opix, base, dim](std::size_t row, std::size_t kt) -> std::optional<std::uint64_t> {
        const std::size_t n = row / opix, p = row % opix;
        const std::size_t oy = p / l.out.width, ox = p % l.out.width;
        const std::size_t kpos = kt / ct, ctile = kt % ct;
        const std::size_t ky = kpos / l.kernel_w, kx = kpos % l.kernel_w;
        const std::int64_t iy = static_cast<std::int64_t>(oy * l.stride + ky) - static_cast<std::int64_t>(l.padding);
        const std::int64_t ix = static_cast<std::int64_t>(ox * l.stride + kx) - static_cast<std::int64_t>(l.padding);
        if (iy < 0 || ix < 0 || iy >= static_cast<std::int64_t>(l.in.height) || ix >= static_cast<std::int64_t>(l.in.width)) {
          return std::nullopt;
        }
        const std::size_t in_row = (n * l.in.height + static_cast<std::size_t>(iy)) * l.in.width + static_cast<std::size_t>(ix);
        return base + in.offset_of_element(in_row, ctile * dim);
      };
      ops.a_gather = &gather;
    } else {
      ops.a = {in, at.inputs[0]};
    }
    sp.plan = compile_matmul(preset_, sp.spec, ops, options_, program);
    sp.ideal_cycles = ideal_mxu_cycles(sp.spec, dim);
    sp.vmem_rows_used = sp.plan.vmem_rows_used;
    sp.acc_rows_used = sp.plan.acc_rows_used;
    sp.padding_bytes = weights_[layer].padding_bytes() + tensors_[layer + 1].padding_bytes();
    sp.min_hbm_bytes = in.logical_bytes() + weights_[layer].logical_bytes() + tensors_[layer + 1].logical_bytes() +
                       bias_bytes(layer);
  }
  program.push_back(Instruction{isa::End{}, std::nullopt, std::nullopt});
  return sp;
}

// out = add_saturate(x, y): blocks of rows x one channel tile stream through `slots` VMEM slot
// pairs; the sum is written in place over x's slot and stored from there.
StepPlan ModelCompiler::compile_add(std::size_t layer, const StepAddresses& at, Program& program) {
  const ModelLayer& l = model_.layers[layer];
  const TiledLayout& x = tensors_[l.inputs[0]];
  const TiledLayout& y = tensors_[l.inputs[1]];
  const TiledLayout& out = tensors_[layer + 1];
  auto same_shape = [](const TiledLayout& p, const TiledLayout& q) {
    return p.rows == q.rows && p.cols == q.cols && p.elem_bytes == q.elem_bytes && p.tile_rows == q.tile_rows &&
           p.padded_rows == q.padded_rows && p.padded_cols == q.padded_cols;
  };
  if (!same_shape(x, y) || !same_shape(x, out)) throw Error(fmt::format("compile: add '{}': operand layouts differ", l.name));
  const unsigned slots = options_.buffers.a;
  const std::size_t unit = x.tile_rows;  // rows per layout tile (1 untiled)
  // Block rows: as many whole tiles as fit 2 * slots blocks in a quarter of VMEM, at most 512.
  std::size_t block = std::min<std::size_t>(512, preset_.vmem_rows / (8 * slots));
  block = std::max<std::size_t>(unit, block / unit * unit);
  const std::size_t row_blocks = ceil_div(x.padded_rows, block);
  const std::size_t tiles = x.tiles_per_row();
  const std::size_t total = row_blocks * tiles;

  VmemPlacer vmem(preset_, options_.vmem_space);
  static const std::string kNames[] = {"add x", "add y"};
  const std::uint32_t rows[] = {static_cast<std::uint32_t>(slots * block), static_cast<std::uint32_t>(slots * block)};
  std::vector<std::uint32_t> bases;
  if (!vmem.place(kNames, rows, bases)) throw Error(fmt::format("compile: add '{}': {}", l.name, vmem.failure()));

  StepPlan sp;
  sp.vmem_rows_used = std::max(bases[0], bases[1]) + static_cast<std::uint32_t>(slots * block);
  sp.min_hbm_bytes = 2 * x.logical_bytes() + out.logical_bytes();
  sp.padding_bytes = out.padding_bytes();
  sp.plan.vmem_placement = vmem.method();
  sp.plan.vmem_regions = {{"add x", bases[0], rows[0]}, {"add y", bases[1], rows[1]}};
  sp.plan.vmem_rows_used = sp.vmem_rows_used;
  sp.plan.block_m = block;
  sp.plan.m_blocks = row_blocks;
  sp.plan.a_slots = slots;

  auto dma = [&](const TiledLayout& L, std::uint64_t addr, std::size_t r0, std::size_t rows_here, std::size_t tile,
                 std::uint32_t local, DmaPath path) {
    isa::Dma d;
    d.hbm_addr = static_cast<std::uint32_t>(addr + L.tile_offset(r0 / L.tile_rows, tile));
    d.local_addr = local;
    d.len = static_cast<std::uint16_t>(L.tile_rows);
    d.count = static_cast<std::uint16_t>(rows_here / L.tile_rows);
    d.hbm_stride = static_cast<std::uint32_t>(L.tiles_per_row() * L.tile_bytes());
    d.local_stride = static_cast<std::uint32_t>(L.tile_rows);
    d.path = path;
    return d;
  };
  auto block_rows = [&](std::size_t b) { return std::min(block, x.padded_rows - b * block); };
  auto load = [&](std::size_t i) {
    const std::size_t b = i / tiles, t = i % tiles;
    const auto slot = static_cast<std::uint32_t>((i % slots) * block);
    std::optional<Wait> wait;
    if (i >= slots) wait = Wait{kSlotFree, 1};
    program.push_back(Instruction{dma(x, at.inputs[0], b * block, block_rows(b), t, bases[0] + slot, DmaPath::HbmToVmem), wait, std::nullopt});
    program.push_back(Instruction{dma(y, at.inputs[1], b * block, block_rows(b), t, bases[1] + slot, DmaPath::HbmToVmem), std::nullopt, kInReady});
  };
  for (std::size_t i = 0; i < std::min<std::size_t>(slots, total); ++i) load(i);
  for (std::size_t i = 0; i < total; ++i) {
    const std::size_t b = i / tiles, t = i % tiles;
    const auto slot = static_cast<std::uint32_t>((i % slots) * block);
    isa::VAdd v;
    v.a_row = bases[0] + slot;
    v.b_row = bases[1] + slot;
    v.out_row = bases[0] + slot;
    v.rows = static_cast<std::uint32_t>(block_rows(b));
    v.relu = l.relu;
    program.push_back(Instruction{v, Wait{kInReady, 1}, kSumReady});
    const std::optional<std::uint8_t> freed = i + slots < total ? std::optional<std::uint8_t>(kSlotFree) : std::nullopt;
    program.push_back(Instruction{dma(out, at.output, b * block, block_rows(b), t, bases[0] + slot, DmaPath::VmemToHbm), Wait{kSumReady, 1}, freed});
    if (i + slots < total) load(i + slots);
  }
  return sp;
}

std::vector<std::uint8_t> ModelCompiler::weight_image(std::size_t layer, const LayerParams& p) const {
  const ModelLayer& l = model_.layers[layer];
  const TiledLayout& L = weights_[layer];
  const std::size_t cin = l.in.channels, cout = l.out.channels;
  std::vector<std::int8_t> b(L.rows * L.cols, 0);
  if (gathers(layer)) {
    const std::size_t cpad = ceil_div(cin, preset_.dim) * preset_.dim;
    for (std::size_t kpos = 0; kpos < l.kernel_h * l.kernel_w; ++kpos)
      for (std::size_t c = 0; c < cin; ++c)
        std::copy_n(&p.weights[(kpos * cin + c) * cout], cout, &b[(kpos * cpad + c) * cout]);
  } else {
    std::copy(p.weights.begin(), p.weights.end(), b.begin());
  }
  return pack(L, std::span<const std::int8_t>(b));
}

std::vector<std::uint8_t> ModelCompiler::bias_image(std::size_t layer, const LayerParams& p) const {
  std::vector<std::uint8_t> out;
  const std::size_t lanes = bias_bytes(layer) / 4;
  for (std::size_t n = 0; n < lanes; ++n) push_le32(out, n < p.bias.size() ? p.bias[n] : 0);
  return out;
}

std::vector<std::uint8_t> ModelCompiler::input_image(std::span<const std::int8_t> input) const {
  return pack(tensors_[0], input);
}

}  // namespace tpuemu
