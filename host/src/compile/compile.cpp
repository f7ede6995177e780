// SPDX-License-Identifier: Apache-2.0
#include "tpuemu/compile/compile.h"

#include <algorithm>
#include <deque>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "tpuemu/base/error.h"
#include "gather_dma.h"
#include "vmem_placement.h"

namespace tpuemu {
namespace {

// Semaphores of the pipeline. Each names one hand-over; counts stay balanced.
enum Sem : std::uint8_t {
  kAReady = 0, kAFree, kBReady, kBFree, kAccReady, kAccFree, kOutReady, kOutFree,
  // A resident panel being prefetched signals its own semaphore: its DMAs interleave with the
  // current panel's, and a counting semaphore only pairs signals with waits in one order.
  kAReadyPanel1,
  kBiasReady,  // the bias rows are in VMEM (one DMA before the first step)
};

std::uint8_t a_ready_sem(bool resident, std::size_t panel_slot) {
  return resident && panel_slot == 1 ? kAReadyPanel1 : kAReady;
}

std::size_t ceil_div(std::size_t a, std::size_t b) { return (a + b - 1) / b; }
std::size_t round_up(std::size_t a, std::size_t b) { return ceil_div(a, b) * b; }

std::uint32_t u32(std::uint64_t v, const char* what) {
  if (v > 0xFFFF'FFFFull) throw Error(fmt::format("compile: {} {} does not fit 32 bits", what, v));
  return static_cast<std::uint32_t>(v);
}
std::uint16_t u16(std::uint64_t v, const char* what) {
  if (v == 0 || v > 0xFFFFull) {
    throw Error(fmt::format("compile: {} {} is not in [1, 65535] (a DMA field)", what, v));
  }
  return static_cast<std::uint16_t>(v);
}

// Emits instructions; an instruction that needs more than one wait gets NOP fences in front of it
// carrying the extra waits, and one that needs more than one signal gets NOP fences after it.
class Emitter {
 public:
  explicit Emitter(Program& program) : program_(program) {}

  void emit(Operation op, std::vector<std::uint8_t> waits, std::vector<std::uint8_t> signals) {
    Instruction probe{op, std::nullopt, std::nullopt};
    const Queue q = probe.queue();
    while (waits.size() > 1) {
      program_.push_back(Instruction{nop_for(q), Wait{waits.front(), 1}, std::nullopt});
      waits.erase(waits.begin());
    }
    Instruction inst{std::move(op), std::nullopt, std::nullopt};
    if (!waits.empty()) inst.wait = Wait{waits.front(), 1};
    if (!signals.empty()) inst.signal = signals.front();
    program_.push_back(std::move(inst));
    for (std::size_t i = 1; i < signals.size(); ++i) {
      program_.push_back(Instruction{nop_for(q), std::nullopt, signals[i]});
    }
  }

 private:
  static Operation nop_for(Queue q) {
    switch (q) {
      case Queue::Dma: return isa::DmaNop{};
      case Queue::Mxu: return isa::MxuNop{};
      case Queue::Vector: return isa::VecNop{};
      case Queue::Control: break;
    }
    throw Error("compile: no NOP for the control queue");
  }
  Program& program_;
};

std::vector<std::uint8_t> when(bool cond, std::uint8_t sem) {
  return cond ? std::vector<std::uint8_t>{sem} : std::vector<std::uint8_t>{};
}

struct Geometry {
  std::size_t dim, mp, kt, nt, bm, nts, m_blocks, n_blocks;
  bool a_resident;
  unsigned a_slots, b_slots, out_slots;
  std::uint32_t a_base, b_base, out_base, bias_base, a_slot_rows, b_slot_rows, out_slot_rows, vmem_rows_used;
};

Geometry plan_geometry(const Preset& p, const MatmulSpec& s, const CompileOptions& o, bool bias, VmemPlacer& vmem) {
  for (unsigned n : {o.buffers.a, o.buffers.b, o.buffers.out}) {
    if (n < 1 || n > 3) throw Error(fmt::format("compile: buffer count {} is not 1, 2 or 3", n));
  }
  Geometry g{};
  g.dim = p.dim;
  g.mp = round_up(s.m, 32);
  g.kt = ceil_div(s.k, p.dim);
  g.nt = ceil_div(s.n, p.dim);
  g.out_slots = o.buffers.out;
  g.b_slots = o.buffers.b;
  g.nts = std::min<std::size_t>(g.nt, 8);
  auto bm_for = [&](std::size_t nts) {
    return std::min(g.mp, (p.acc_rows / (g.out_slots * nts)) / 32 * 32);
  };
  while (g.nts > 1 && bm_for(g.nts) < 32) --g.nts;
  g.bm = bm_for(g.nts);
  if (g.bm < 32) {
    throw Error(fmt::format("compile: ACC of {} rows cannot hold {} block(s) of 32 rows", p.acc_rows,
                            g.out_slots));
  }
  for (;;) {
    const std::uint64_t b_rows = std::uint64_t{g.b_slots} * g.nts * g.dim;
    const std::uint64_t out_rows = s.requantize ? std::uint64_t{g.out_slots} * g.nts * g.bm : 0;
    const std::uint64_t panel_rows = std::uint64_t{g.kt} * g.bm;
    const unsigned panels = std::min(o.buffers.a, 2u);
    const std::uint64_t bias_rows = bias ? 4 * g.nt : 0;
    const std::uint64_t fixed = b_rows + out_rows + bias_rows;
    if (o.reuse_resident && fixed + panels * panel_rows <= p.vmem_rows) {
      g.a_resident = true;
      g.a_slots = panels;
      g.a_slot_rows = static_cast<std::uint32_t>(panel_rows);
    } else if (fixed + std::uint64_t{o.buffers.a} * g.bm <= p.vmem_rows) {
      g.a_resident = false;
      g.a_slots = o.buffers.a;
      g.a_slot_rows = static_cast<std::uint32_t>(g.bm);
    } else if (g.bm > 32) {
      g.bm = std::max<std::size_t>(32, g.bm / 2 / 32 * 32);
      continue;
    } else {
      throw Error(fmt::format("compile: {}x{}x{} does not fit VMEM of {} rows even with 32-row blocks",
                              s.m, s.k, s.n, p.vmem_rows));
    }
    g.b_slot_rows = static_cast<std::uint32_t>(g.nts * g.dim);
    g.out_slot_rows = static_cast<std::uint32_t>(g.nts * g.bm);
    static const std::string kNames[] = {"A", "B", "out", "bias"};
    const std::uint32_t rows[] = {g.a_slots * g.a_slot_rows, g.b_slots * g.b_slot_rows,
                                  s.requantize ? g.out_slots * g.out_slot_rows : 0,
                                  static_cast<std::uint32_t>(bias_rows)};
    std::vector<std::uint32_t> bases;
    if (!vmem.place(kNames, rows, bases)) {
      // A runtime policy can fail where the sum fits (rounding, fragmentation): smaller blocks.
      if (g.bm > 32) {
        g.bm = std::max<std::size_t>(32, g.bm / 2 / 32 * 32);
        continue;
      }
      throw Error(fmt::format("compile: {}x{}x{}: {}", s.m, s.k, s.n, vmem.failure()));
    }
    g.a_base = bases[0];
    g.b_base = bases[1];
    g.out_base = bases[2];
    g.bias_base = bases[3];
    g.vmem_rows_used = 0;
    for (std::size_t i = 0; i < 4; ++i) {
      if (rows[i] > 0) g.vmem_rows_used = std::max(g.vmem_rows_used, bases[i] + rows[i]);
    }
    break;
  }
  g.m_blocks = ceil_div(g.mp, g.bm);
  g.n_blocks = ceil_div(g.nt, g.nts);
  return g;
}

// One MXU step: a block of A rows times one k tile, against a block of weight tiles.
struct Step {
  std::size_t mb, nb, kt;
  std::size_t index;
};

}  // namespace

std::uint64_t minimum_hbm_bytes(const MatmulSpec& s) {
  return std::uint64_t{s.m} * s.k + std::uint64_t{s.k} * s.n +
         std::uint64_t{s.m} * s.n * (s.requantize ? 1 : 4);
}

std::uint64_t ideal_mxu_cycles(const MatmulSpec& s, std::uint32_t dim) {
  return std::uint64_t{s.m} * ceil_div(s.k, dim) * ceil_div(s.n, dim);
}

TiledLayout matmul_a_layout(const MatmulSpec& s, std::uint32_t dim, bool tiled) {
  return make_layout(tiled, static_cast<std::int64_t>(s.m), static_cast<std::int64_t>(s.k), 1, dim, "A");
}
TiledLayout matmul_b_layout(const MatmulSpec& s, std::uint32_t dim, bool tiled) {
  // Whole weight tiles: rows up to a multiple of dim so a LOADW never reads past B.
  return make_layout(tiled, static_cast<std::int64_t>(round_up(s.k, dim)),
                     static_cast<std::int64_t>(s.n), 1, dim, "B");
}
TiledLayout matmul_c_layout(const MatmulSpec& s, std::uint32_t dim, bool tiled) {
  return make_layout(tiled, static_cast<std::int64_t>(s.m), static_cast<std::int64_t>(s.n),
                     s.requantize ? 1 : 4, dim, "C");
}

MatmulPlan compile_matmul(const Preset& preset, const MatmulSpec& spec, const HbmTensor& a,
                          const HbmTensor& b, const HbmTensor& c, const CompileOptions& options,
                          Program& program) {
  return compile_matmul(preset, spec, MatmulOperands{a, b, c, std::nullopt, nullptr}, options, program);
}

MatmulPlan compile_matmul(const Preset& preset, const MatmulSpec& spec, const MatmulOperands& operands,
                          const CompileOptions& options, Program& program) {
  const HbmTensor& a = operands.a;
  const HbmTensor& b = operands.b;
  const HbmTensor& c = operands.c;
  const AGather* gather = operands.a_gather;
  if (spec.m == 0 || spec.k == 0 || spec.n == 0) {
    throw Error(fmt::format("compile: matmul {}x{}x{} has a zero dimension", spec.m, spec.k, spec.n));
  }
  if (operands.bias && !spec.requantize) throw Error("compile: a bias needs the requantised (int8) output");
  VmemPlacer vmem(preset, options.vmem_space);
  const Geometry g = plan_geometry(preset, spec, options, operands.bias.has_value(), vmem);
  const std::size_t dim = g.dim;
  if ((!gather && a.layout.tile_cols != dim) || b.layout.tile_cols != dim || c.layout.tile_cols != dim ||
      (!gather && a.layout.elem_bytes != 1) || b.layout.elem_bytes != 1 ||
      c.layout.elem_bytes != (spec.requantize ? 1u : 4u) || a.layout.cols != spec.k ||
      a.layout.rows != spec.m || b.layout.cols != spec.n || b.layout.padded_rows < g.kt * dim ||
      c.layout.rows != spec.m || c.layout.cols != spec.n) {
    throw Error("compile: tensor layouts do not match the matmul (use matmul_{a,b,c}_layout)");
  }
  if (!gather && a.layout.padded_rows < g.mp && a.layout.tiled()) {
    throw Error("compile: A is not padded to whole 32-row tiles");
  }

  const std::size_t first_instruction = program.size();
  Emitter em(program);
  MatmulPlan plan;
  plan.block_m = g.bm;
  plan.block_n_tiles = g.nts;
  plan.k_tiles = g.kt;
  plan.m_blocks = g.m_blocks;
  plan.n_blocks = g.n_blocks;
  plan.a_resident = g.a_resident;
  plan.a_slots = g.a_slots;
  plan.b_slots = g.b_slots;
  plan.out_slots = g.out_slots;
  plan.vmem_rows_used = g.vmem_rows_used;
  plan.vmem_placement = vmem.method();
  plan.vmem_regions.push_back({"A", g.a_base, g.a_slots * g.a_slot_rows});
  plan.vmem_regions.push_back({"B", g.b_base, g.b_slots * g.b_slot_rows});
  if (spec.requantize) plan.vmem_regions.push_back({"out", g.out_base, g.out_slots * g.out_slot_rows});
  if (operands.bias) plan.vmem_regions.push_back({"bias", g.bias_base, static_cast<std::uint32_t>(4 * g.nt)});
  plan.acc_rows_used = static_cast<std::uint32_t>(g.out_slots * g.nts * g.bm);

  std::vector<Step> steps;
  for (std::size_t mb = 0; mb < g.m_blocks; ++mb)
    for (std::size_t nb = 0; nb < g.n_blocks; ++nb)
      for (std::size_t kt = 0; kt < g.kt; ++kt) steps.push_back({mb, nb, kt, steps.size()});
  plan.steps = steps.size();
  const std::size_t total_steps = steps.size();
  const std::size_t total_blocks = g.m_blocks * g.n_blocks;

  auto rows_in_block = [&](std::size_t mb) { return std::min(g.bm, g.mp - mb * g.bm); };
  auto tiles_in_block = [&](std::size_t nb) { return std::min(g.nts, g.nt - nb * g.nts); };

  // ---- DMA builders (generic over tiled and untiled layouts: tile_rows is 1 when untiled)
  auto a_block_dmas = [&](std::size_t mb, std::size_t kt, std::uint32_t vmem_row) {
    const std::size_t m0 = mb * g.bm, rows = rows_in_block(mb);
    plan.bytes_a += rows * dim;
    if (gather) {
      std::vector<std::optional<std::uint64_t>> sources(rows);
      for (std::size_t r = 0; r < rows; ++r) {
        if (m0 + r < spec.m) sources[r] = gather->row_address(m0 + r, kt);
      }
      return gather_dmas(sources, GatherTarget{vmem_row, gather->zero_addr, kGatherZeroRows,
                                                static_cast<std::uint32_t>(dim), DmaPath::HbmToVmem});
    }
    const auto& L = a.layout;
    isa::Dma d;
    d.hbm_addr = u32(a.addr + L.tile_offset(m0 / L.tile_rows, kt), "A address");
    d.local_addr = vmem_row;
    d.len = u16(L.tile_rows, "A chunk");
    d.count = u16(rows / L.tile_rows, "A chunks");
    d.hbm_stride = u32(L.tiles_per_row() * L.tile_bytes(), "A stride");
    d.local_stride = static_cast<std::uint32_t>(L.tile_rows);
    d.path = DmaPath::HbmToVmem;
    return std::vector<isa::Dma>{d};
  };
  auto b_block_dmas = [&](std::size_t nb, std::size_t kt, std::uint32_t vmem_row) {
    const auto& L = b.layout;
    const std::size_t k0 = kt * dim, tiles = tiles_in_block(nb), t0 = nb * g.nts;
    std::vector<isa::Dma> out;
    if (L.tile_rows >= dim) {  // one weight tile lies inside one layout tile: one 2-D DMA
      isa::Dma d;
      d.hbm_addr = u32(b.addr + L.tile_offset(k0 / L.tile_rows, t0) + (k0 % L.tile_rows) * dim, "B address");
      d.local_addr = vmem_row;
      d.len = u16(dim, "B chunk");
      d.count = u16(tiles, "B chunks");
      d.hbm_stride = u32(L.tile_bytes(), "B stride");
      d.local_stride = static_cast<std::uint32_t>(dim);
      d.path = DmaPath::HbmToVmem;
      out.push_back(d);
    } else {  // a weight tile spans several layout tiles: one DMA per weight tile
      for (std::size_t t = 0; t < tiles; ++t) {
        isa::Dma d;
        d.hbm_addr = u32(b.addr + L.tile_offset(k0 / L.tile_rows, t0 + t), "B address");
        d.local_addr = static_cast<std::uint32_t>(vmem_row + t * dim);
        d.len = u16(L.tile_rows, "B chunk");
        d.count = u16(dim / L.tile_rows, "B chunks");
        d.hbm_stride = u32(L.tiles_per_row() * L.tile_bytes(), "B stride");
        d.local_stride = static_cast<std::uint32_t>(L.tile_rows);
        d.path = DmaPath::HbmToVmem;
        out.push_back(d);
      }
    }
    plan.bytes_b += tiles * dim * dim;
    return out;
  };
  auto c_tile_dma = [&](std::size_t mb, std::size_t tile, std::uint32_t local_row) {
    const auto& L = c.layout;
    const std::size_t m0 = mb * g.bm;
    const std::size_t rows = std::min(rows_in_block(mb), L.padded_rows - m0);
    isa::Dma d;
    d.hbm_addr = u32(c.addr + L.tile_offset(m0 / L.tile_rows, tile), "C address");
    d.local_addr = local_row;
    d.len = u16(L.tile_rows, "C chunk");
    d.count = u16(rows / L.tile_rows, "C chunks");
    d.hbm_stride = u32(L.tiles_per_row() * L.tile_bytes(), "C stride");
    d.local_stride = static_cast<std::uint32_t>(L.tile_rows);
    d.path = spec.requantize ? DmaPath::VmemToHbm : DmaPath::AccToHbm;
    plan.bytes_out += rows * dim * L.elem_bytes;
    return d;
  };

  // ---- loads: a load of several descriptors waits before its first and signals after its last
  // (the DMA queue completes in order)
  auto emit_dmas = [&](const std::vector<isa::Dma>& dmas, const std::vector<std::uint8_t>& waits,
                       const std::vector<std::uint8_t>& signals) {
    for (std::size_t i = 0; i < dmas.size(); ++i) {
      em.emit(dmas[i], i == 0 ? waits : std::vector<std::uint8_t>{},
              i + 1 == dmas.size() ? signals : std::vector<std::uint8_t>{});
    }
  };
  const unsigned la = g.a_resident ? 0 : g.a_slots - 1;  // A lookahead in steps (stream mode)
  const unsigned lb = g.b_slots - 1;
  auto emit_b_load = [&](std::size_t s) {
    const Step& st = steps[s];
    const auto slot_row = static_cast<std::uint32_t>(g.b_base + (s % g.b_slots) * g.b_slot_rows);
    emit_dmas(b_block_dmas(st.nb, st.kt, slot_row), when(s >= g.b_slots, kBFree), {kBReady});
  };
  auto a_slot_row = [&](const Step& st) -> std::uint32_t {
    if (g.a_resident) {
      return static_cast<std::uint32_t>(g.a_base + (st.mb % g.a_slots) * g.a_slot_rows + st.kt * g.bm);
    }
    return static_cast<std::uint32_t>(g.a_base + (st.index % g.a_slots) * g.a_slot_rows);
  };
  auto emit_a_stream_load = [&](std::size_t s) {
    const Step& st = steps[s];
    emit_dmas(a_block_dmas(st.mb, st.kt, a_slot_row(st)), when(s >= g.a_slots, kAFree), {kAReady});
  };
  auto emit_a_panel_load = [&](std::size_t mb, std::size_t kt) {
    Step st{mb, 0, kt, 0};
    emit_dmas(a_block_dmas(mb, kt, a_slot_row(st)), when(kt == 0 && mb >= g.a_slots, kAFree),
              {a_ready_sem(true, mb % g.a_slots)});
  };

  // ---- drains, emitted a little at a time so they never hold up the loads behind them
  struct Pending {
    Operation op;
    std::vector<std::uint8_t> waits, signals;
    std::size_t block;
  };
  std::deque<Pending> pending;
  auto queue_drain = [&](std::size_t block, std::size_t mb, std::size_t nb) {
    const std::size_t tiles = tiles_in_block(nb);
    const std::uint32_t acc_base = static_cast<std::uint32_t>((block % g.out_slots) * g.nts * g.bm);
    const bool acc_reused = block + g.out_slots < total_blocks;
    const std::size_t rows = rows_in_block(mb);
    if (!spec.requantize) {
      for (std::size_t t = 0; t < tiles; ++t) {
        pending.push_back({c_tile_dma(mb, nb * g.nts + t, static_cast<std::uint32_t>(acc_base + t * g.bm)),
                           when(t == 0, kAccReady), when(t + 1 == tiles && acc_reused, kAccFree),
                           block});
      }
      return;
    }
    const std::uint32_t out_base = static_cast<std::uint32_t>(g.out_base + (block % g.out_slots) * g.out_slot_rows);
    pending.push_back({isa::VecNop{}, {kAccReady}, {}, block});
    for (std::size_t t = 0; t < tiles; ++t) {
      isa::VQuant q;
      q.acc_row = static_cast<std::uint32_t>(acc_base + t * g.bm);
      q.vmem_row = static_cast<std::uint32_t>(out_base + t * g.bm);
      q.rows = static_cast<std::uint32_t>(rows);
      q.scale = spec.scale;
      q.shift = static_cast<std::uint8_t>(spec.shift);
      q.relu = spec.relu;
      if (operands.bias) {
        q.bias = true;
        q.bias_row = static_cast<std::uint32_t>(g.bias_base + 4 * (nb * g.nts + t));
      }
      std::vector<std::uint8_t> waits = when(t == 0 && block >= g.out_slots, kOutFree);
      if (operands.bias && block == 0 && t == 0) waits.push_back(kBiasReady);
      pending.push_back({q, waits, {kOutReady}, block});
    }
    if (acc_reused) pending.push_back({isa::VecNop{}, {}, {kAccFree}, block});
    for (std::size_t t = 0; t < tiles; ++t) {
      pending.push_back({c_tile_dma(mb, nb * g.nts + t, static_cast<std::uint32_t>(out_base + t * g.bm)),
                         {kOutReady}, when(t + 1 == tiles && block + g.out_slots < total_blocks, kOutFree),
                         block});
    }
  };
  constexpr std::size_t kNoBlock = static_cast<std::size_t>(-1);
  // Drains trickle out two instructions per step so that the loads behind them in the DMA queue
  // are not held up; a block's drain is complete in the program before the block that reuses its
  // accumulators starts, so every wait refers to an earlier instruction (no deadlock).
  auto emit_pending = [&](std::size_t budget, std::size_t up_to_block) {
    while (!pending.empty() &&
           (budget > 0 || (up_to_block != kNoBlock && pending.front().block <= up_to_block))) {
      em.emit(pending.front().op, pending.front().waits, pending.front().signals);
      pending.pop_front();
      if (budget > 0) --budget;
    }
  };


  // ---- prologue loads
  if (operands.bias) {
    isa::Dma d;
    d.hbm_addr = u32(operands.bias->addr, "bias address");
    d.local_addr = g.bias_base;
    d.len = u16(4 * g.nt, "bias rows");
    d.count = 1;
    d.hbm_stride = 0;
    d.local_stride = 0;
    d.path = DmaPath::HbmToVmem;
    plan.bytes_b += 4 * g.nt * dim;
    em.emit(d, {}, {kBiasReady});
  }
  if (g.a_resident && g.a_slots > 1) emit_a_panel_load(0, 0);
  for (std::size_t s = 0; s < std::min<std::size_t>(lb, total_steps); ++s) emit_b_load(s);
  if (!g.a_resident) {
    for (std::size_t s = 0; s < std::min<std::size_t>(la, total_steps); ++s) emit_a_stream_load(s);
  }
  std::size_t weight_tiles = 0;  // alternates the weight bank tile by tile

  // ---- steps
  for (const Step& st : steps) {
    const std::size_t s = st.index;
    const std::size_t tiles = tiles_in_block(st.nb);
    const std::size_t rows = rows_in_block(st.mb);
    const std::size_t block = st.mb * g.n_blocks + st.nb;
    const bool block_first = st.kt == 0;
    const bool block_last = st.kt + 1 == g.kt;

    // A loads due now
    bool a_fresh = false;
    if (g.a_resident) {
      // panel mb is loaded during m block (mb - slots + 1), one k tile per step of that block
      // Panel j is loaded one k tile per step during m block j - slots + 1 (just in time with
      // one slot); panel 0 with two slots is prefetched one k tile ahead.
      a_fresh = st.nb == 0;
      const std::size_t loading_for = st.mb + g.a_slots - 1;
      const std::size_t step_in_mblock = st.nb * g.kt + st.kt;
      if (st.mb == 0 && g.a_slots > 1 && st.nb == 0 && st.kt + 1 < g.kt) emit_a_panel_load(0, st.kt + 1);
      if (loading_for < g.m_blocks && step_in_mblock < g.kt) emit_a_panel_load(loading_for, step_in_mblock);
      if (!a_fresh) plan.bytes_a_reused += rows * dim;
    } else {
      a_fresh = true;
      if (s + la < total_steps) emit_a_stream_load(s + la);
    }
    if (s + lb < total_steps) emit_b_load(s + lb);

    if (block_first && block >= g.out_slots) emit_pending(0, block - g.out_slots);

    // MXU: per weight tile, LOADW into alternating banks, then MATMUL over the block's rows
    const bool a_free_now = g.a_resident
                                ? (block_last && st.nb + 1 == g.n_blocks && st.mb + g.a_slots < g.m_blocks)
                                : (s + g.a_slots < total_steps);
    for (std::size_t t = 0; t < tiles; ++t) {
      const std::uint8_t bank = static_cast<std::uint8_t>(weight_tiles++ & 1);
      isa::LoadW lw;
      lw.vmem_row = static_cast<std::uint32_t>(g.b_base + (s % g.b_slots) * g.b_slot_rows + t * dim);
      lw.bank = bank;
      em.emit(lw, when(t == 0, kBReady), when(t + 1 == tiles && s + g.b_slots < total_steps, kBFree));

      isa::Matmul mm;
      mm.vmem_row = a_slot_row(st);
      mm.acc_row = static_cast<std::uint32_t>((block % g.out_slots) * g.nts * g.bm + t * g.bm);
      mm.rows = static_cast<std::uint32_t>(rows);
      mm.bank = bank;
      mm.accumulate = !block_first;
      std::vector<std::uint8_t> waits;
      if (t == 0 && block_first && block >= g.out_slots) waits.push_back(kAccFree);
      if (t == 0 && a_fresh) waits.push_back(a_ready_sem(g.a_resident, st.mb % g.a_slots));
      std::vector<std::uint8_t> signals;
      if (t + 1 == tiles && block_last) signals.push_back(kAccReady);
      if (t + 1 == tiles && a_free_now) signals.push_back(kAFree);
      em.emit(mm, waits, signals);
    }
    if (block_last) queue_drain(block, st.mb, st.nb);
    else emit_pending(2, kNoBlock);
  }
  emit_pending(0, total_blocks);
  plan.instructions = program.size() - first_instruction;
  return plan;
}

}  // namespace tpuemu
