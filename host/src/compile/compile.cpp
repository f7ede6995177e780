// SPDX-License-Identifier: Apache-2.0
#include "tpuemu/compile/compile.h"

#include <algorithm>
#include <deque>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "gather_dma.h"
#include "tpuemu/base/error.h"
#include "vmem_placement.h"

namespace tpuemu {
namespace {

// Semaphores of the pipeline. Each names one hand-over; counts stay balanced.
enum Sem : std::uint8_t {
  kAReady = 0,
  kAFree,
  kBReady,
  kBFree,
  kAccReady,
  kAccFree,
  kOutReady,
  kOutFree,
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
      case Queue::Dma:
        return isa::DmaNop{};
      case Queue::Mxu:
        return isa::MxuNop{};
      case Queue::Vector:
        return isa::VecNop{};
      case Queue::Control:
        break;
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
  std::uint32_t a_base, b_base, out_base, bias_base, a_slot_rows, b_slot_rows, out_slot_rows,
      vmem_rows_used;
};

Geometry plan_geometry(const Preset& p, const MatmulSpec& s, const CompileOptions& o, bool bias,
                       VmemPlacer& vmem) {
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
    throw Error(fmt::format("compile: ACC of {} rows cannot hold {} block(s) of 32 rows",
                            p.acc_rows, g.out_slots));
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
      throw Error(
          fmt::format("compile: {}x{}x{} does not fit VMEM of {} rows even with 32-row blocks", s.m,
                      s.k, s.n, p.vmem_rows));
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

// An instruction of a finished block's drain, waiting in the queue until it is emitted.
struct Pending {
  Operation op;
  std::vector<std::uint8_t> waits, signals;
  std::size_t block;
};

// Rejects what no tiling can compile, before any VMEM is placed.
void check_spec(const MatmulSpec& spec, const MatmulOperands& operands) {
  if (spec.m == 0 || spec.k == 0 || spec.n == 0) {
    throw Error(
        fmt::format("compile: matmul {}x{}x{} has a zero dimension", spec.m, spec.k, spec.n));
  }
  if (operands.bias && !spec.requantize)
    throw Error("compile: a bias needs the requantised (int8) output");
}

// The compilation of one matmul, in named phases over the state they share (the geometry, the
// step list, the queue of pending drains, the plan being filled in):
//   construction  places the VMEM buffers (plan_geometry) and checks the operands' layouts;
//   compile()     records the plan, lists the steps, emits the prologue's loads, then each step
//                 (the loads due, LOADW and MATMUL per weight tile, a finished block's drain
//                 queued), and last the drains still pending.
// The DMA descriptors of a block (a_block_dmas, b_block_dmas, c_tile_dma) add the bytes they move
// to the plan's traffic as they are built.
class MatmulCompiler {
 public:
  MatmulCompiler(const Preset& preset, const MatmulSpec& spec, const MatmulOperands& operands,
                 const CompileOptions& options, Program& program)
      : spec_(spec),
        operands_(operands),
        program_(program),
        vmem_(preset, options.vmem_space),
        g_(plan_geometry(preset, spec, options, operands.bias.has_value(), vmem_)),
        dim_(g_.dim),
        em_(program),
        la_(g_.a_resident ? 0 : g_.a_slots - 1),
        lb_(g_.b_slots - 1) {
    check_layouts();
    first_instruction_ = program.size();
  }

  MatmulPlan compile() {
    describe_plan();
    list_steps();
    emit_prologue();
    for (const Step& st : steps_) emit_step(st);
    emit_pending(0, total_blocks());
    plan_.instructions = program_.size() - first_instruction_;
    return std::move(plan_);
  }

 private:
  static constexpr std::size_t kNoBlock = static_cast<std::size_t>(-1);

  // ---- phase: the operands against the geometry
  void check_layouts() const {
    const HbmTensor& a = operands_.a;
    const HbmTensor& b = operands_.b;
    const HbmTensor& c = operands_.c;
    const bool gather = operands_.a_gather != nullptr;
    if ((!gather && a.layout.tile_cols != dim_) || b.layout.tile_cols != dim_ ||
        c.layout.tile_cols != dim_ || (!gather && a.layout.elem_bytes != 1) ||
        b.layout.elem_bytes != 1 || c.layout.elem_bytes != (spec_.requantize ? 1u : 4u) ||
        a.layout.cols != spec_.k || a.layout.rows != spec_.m || b.layout.cols != spec_.n ||
        b.layout.padded_rows < g_.kt * dim_ || c.layout.rows != spec_.m ||
        c.layout.cols != spec_.n) {
      throw Error("compile: tensor layouts do not match the matmul (use matmul_{a,b,c}_layout)");
    }
    if (!gather && a.layout.padded_rows < g_.mp && a.layout.tiled()) {
      throw Error("compile: A is not padded to whole 32-row tiles");
    }
  }

  // ---- phase: what the compiler decided, for reports
  void describe_plan() {
    plan_.block_m = g_.bm;
    plan_.block_n_tiles = g_.nts;
    plan_.k_tiles = g_.kt;
    plan_.m_blocks = g_.m_blocks;
    plan_.n_blocks = g_.n_blocks;
    plan_.a_resident = g_.a_resident;
    plan_.a_slots = g_.a_slots;
    plan_.b_slots = g_.b_slots;
    plan_.out_slots = g_.out_slots;
    plan_.vmem_rows_used = g_.vmem_rows_used;
    plan_.vmem_placement = vmem_.method();
    plan_.vmem_regions.push_back({"A", g_.a_base, g_.a_slots * g_.a_slot_rows});
    plan_.vmem_regions.push_back({"B", g_.b_base, g_.b_slots * g_.b_slot_rows});
    if (spec_.requantize)
      plan_.vmem_regions.push_back({"out", g_.out_base, g_.out_slots * g_.out_slot_rows});
    if (operands_.bias) {
      plan_.vmem_regions.push_back({"bias", g_.bias_base, static_cast<std::uint32_t>(4 * g_.nt)});
    }
    plan_.acc_rows_used = static_cast<std::uint32_t>(g_.out_slots * g_.nts * g_.bm);
  }

  // ---- phase: the steps, m block by n block by k tile
  void list_steps() {
    for (std::size_t mb = 0; mb < g_.m_blocks; ++mb)
      for (std::size_t nb = 0; nb < g_.n_blocks; ++nb)
        for (std::size_t kt = 0; kt < g_.kt; ++kt) steps_.push_back({mb, nb, kt, steps_.size()});
    plan_.steps = steps_.size();
  }

  std::size_t total_steps() const { return steps_.size(); }
  std::size_t total_blocks() const { return g_.m_blocks * g_.n_blocks; }
  std::size_t rows_in_block(std::size_t mb) const { return std::min(g_.bm, g_.mp - mb * g_.bm); }
  std::size_t tiles_in_block(std::size_t nb) const { return std::min(g_.nts, g_.nt - nb * g_.nts); }

  // ---- DMA descriptors (generic over tiled and untiled layouts: tile_rows is 1 when untiled)
  std::vector<isa::Dma> a_block_dmas(std::size_t mb, std::size_t kt, std::uint32_t vmem_row) {
    const std::size_t m0 = mb * g_.bm, rows = rows_in_block(mb);
    plan_.bytes_a += rows * dim_;
    if (const AGather* gather = operands_.a_gather) {
      std::vector<std::optional<std::uint64_t>> sources(rows);
      for (std::size_t r = 0; r < rows; ++r) {
        if (m0 + r < spec_.m) sources[r] = gather->row_address(m0 + r, kt);
      }
      return gather_dmas(sources,
                         GatherTarget{vmem_row, gather->zero_addr, kGatherZeroRows,
                                      static_cast<std::uint32_t>(dim_), DmaPath::HbmToVmem});
    }
    const HbmTensor& a = operands_.a;
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
  }

  std::vector<isa::Dma> b_block_dmas(std::size_t nb, std::size_t kt, std::uint32_t vmem_row) {
    const HbmTensor& b = operands_.b;
    const auto& L = b.layout;
    const std::size_t k0 = kt * dim_, tiles = tiles_in_block(nb), t0 = nb * g_.nts;
    std::vector<isa::Dma> out;
    if (L.tile_rows >= dim_) {  // one weight tile lies inside one layout tile: one 2-D DMA
      isa::Dma d;
      d.hbm_addr = u32(b.addr + L.tile_offset(k0 / L.tile_rows, t0) + (k0 % L.tile_rows) * dim_,
                       "B address");
      d.local_addr = vmem_row;
      d.len = u16(dim_, "B chunk");
      d.count = u16(tiles, "B chunks");
      d.hbm_stride = u32(L.tile_bytes(), "B stride");
      d.local_stride = static_cast<std::uint32_t>(dim_);
      d.path = DmaPath::HbmToVmem;
      out.push_back(d);
    } else {  // a weight tile spans several layout tiles: one DMA per weight tile
      for (std::size_t t = 0; t < tiles; ++t) {
        isa::Dma d;
        d.hbm_addr = u32(b.addr + L.tile_offset(k0 / L.tile_rows, t0 + t), "B address");
        d.local_addr = static_cast<std::uint32_t>(vmem_row + t * dim_);
        d.len = u16(L.tile_rows, "B chunk");
        d.count = u16(dim_ / L.tile_rows, "B chunks");
        d.hbm_stride = u32(L.tiles_per_row() * L.tile_bytes(), "B stride");
        d.local_stride = static_cast<std::uint32_t>(L.tile_rows);
        d.path = DmaPath::HbmToVmem;
        out.push_back(d);
      }
    }
    plan_.bytes_b += tiles * dim_ * dim_;
    return out;
  }

  isa::Dma c_tile_dma(std::size_t mb, std::size_t tile, std::uint32_t local_row) {
    const HbmTensor& c = operands_.c;
    const auto& L = c.layout;
    const std::size_t m0 = mb * g_.bm;
    const std::size_t rows = std::min(rows_in_block(mb), L.padded_rows - m0);
    isa::Dma d;
    d.hbm_addr = u32(c.addr + L.tile_offset(m0 / L.tile_rows, tile), "C address");
    d.local_addr = local_row;
    d.len = u16(L.tile_rows, "C chunk");
    d.count = u16(rows / L.tile_rows, "C chunks");
    d.hbm_stride = u32(L.tiles_per_row() * L.tile_bytes(), "C stride");
    d.local_stride = static_cast<std::uint32_t>(L.tile_rows);
    d.path = spec_.requantize ? DmaPath::VmemToHbm : DmaPath::AccToHbm;
    plan_.bytes_out += rows * dim_ * L.elem_bytes;
    return d;
  }

  // ---- loads: a load of several descriptors waits before its first and signals after its last
  // (the DMA queue completes in order)
  void emit_dmas(const std::vector<isa::Dma>& dmas, const std::vector<std::uint8_t>& waits,
                 const std::vector<std::uint8_t>& signals) {
    for (std::size_t i = 0; i < dmas.size(); ++i) {
      em_.emit(dmas[i], i == 0 ? waits : std::vector<std::uint8_t>{},
               i + 1 == dmas.size() ? signals : std::vector<std::uint8_t>{});
    }
  }

  void emit_b_load(std::size_t s) {
    const Step& st = steps_[s];
    const auto slot_row = static_cast<std::uint32_t>(g_.b_base + (s % g_.b_slots) * g_.b_slot_rows);
    emit_dmas(b_block_dmas(st.nb, st.kt, slot_row), when(s >= g_.b_slots, kBFree), {kBReady});
  }

  std::uint32_t a_slot_row(const Step& st) const {
    if (g_.a_resident) {
      return static_cast<std::uint32_t>(g_.a_base + (st.mb % g_.a_slots) * g_.a_slot_rows +
                                        st.kt * g_.bm);
    }
    return static_cast<std::uint32_t>(g_.a_base + (st.index % g_.a_slots) * g_.a_slot_rows);
  }

  void emit_a_stream_load(std::size_t s) {
    const Step& st = steps_[s];
    emit_dmas(a_block_dmas(st.mb, st.kt, a_slot_row(st)), when(s >= g_.a_slots, kAFree), {kAReady});
  }

  void emit_a_panel_load(std::size_t mb, std::size_t kt) {
    Step st{mb, 0, kt, 0};
    emit_dmas(a_block_dmas(mb, kt, a_slot_row(st)), when(kt == 0 && mb >= g_.a_slots, kAFree),
              {a_ready_sem(true, mb % g_.a_slots)});
  }

  // ---- drains, emitted a little at a time so they never hold up the loads behind them
  void queue_drain(std::size_t block, std::size_t mb, std::size_t nb) {
    const std::size_t tiles = tiles_in_block(nb);
    const std::uint32_t acc_base =
        static_cast<std::uint32_t>((block % g_.out_slots) * g_.nts * g_.bm);
    const bool acc_reused = block + g_.out_slots < total_blocks();
    const std::size_t rows = rows_in_block(mb);
    if (!spec_.requantize) {
      for (std::size_t t = 0; t < tiles; ++t) {
        pending_.push_back(
            {c_tile_dma(mb, nb * g_.nts + t, static_cast<std::uint32_t>(acc_base + t * g_.bm)),
             when(t == 0, kAccReady), when(t + 1 == tiles && acc_reused, kAccFree), block});
      }
      return;
    }
    const std::uint32_t out_base =
        static_cast<std::uint32_t>(g_.out_base + (block % g_.out_slots) * g_.out_slot_rows);
    pending_.push_back({isa::VecNop{}, {kAccReady}, {}, block});
    for (std::size_t t = 0; t < tiles; ++t) {
      isa::VQuant q;
      q.acc_row = static_cast<std::uint32_t>(acc_base + t * g_.bm);
      q.vmem_row = static_cast<std::uint32_t>(out_base + t * g_.bm);
      q.rows = static_cast<std::uint32_t>(rows);
      q.scale = spec_.scale;
      q.shift = static_cast<std::uint8_t>(spec_.shift);
      q.relu = spec_.relu;
      if (operands_.bias) {
        q.bias = true;
        q.bias_row = static_cast<std::uint32_t>(g_.bias_base + 4 * (nb * g_.nts + t));
      }
      std::vector<std::uint8_t> waits = when(t == 0 && block >= g_.out_slots, kOutFree);
      if (operands_.bias && block == 0 && t == 0) waits.push_back(kBiasReady);
      pending_.push_back({q, waits, {kOutReady}, block});
    }
    if (acc_reused) pending_.push_back({isa::VecNop{}, {}, {kAccFree}, block});
    for (std::size_t t = 0; t < tiles; ++t) {
      pending_.push_back(
          {c_tile_dma(mb, nb * g_.nts + t, static_cast<std::uint32_t>(out_base + t * g_.bm)),
           {kOutReady},
           when(t + 1 == tiles && block + g_.out_slots < total_blocks(), kOutFree),
           block});
    }
  }

  // Drains trickle out two instructions per step so that the loads behind them in the DMA queue
  // are not held up; a block's drain is complete in the program before the block that reuses its
  // accumulators starts, so every wait refers to an earlier instruction (no deadlock).
  void emit_pending(std::size_t budget, std::size_t up_to_block) {
    while (!pending_.empty() &&
           (budget > 0 || (up_to_block != kNoBlock && pending_.front().block <= up_to_block))) {
      em_.emit(pending_.front().op, pending_.front().waits, pending_.front().signals);
      pending_.pop_front();
      if (budget > 0) --budget;
    }
  }

  // ---- phase: the loads before the first step (the bias rows, the first panel or blocks)
  void emit_prologue() {
    if (operands_.bias) {
      isa::Dma d;
      d.hbm_addr = u32(operands_.bias->addr, "bias address");
      d.local_addr = g_.bias_base;
      d.len = u16(4 * g_.nt, "bias rows");
      d.count = 1;
      d.hbm_stride = 0;
      d.local_stride = 0;
      d.path = DmaPath::HbmToVmem;
      plan_.bytes_b += 4 * g_.nt * dim_;
      em_.emit(d, {}, {kBiasReady});
    }
    if (g_.a_resident && g_.a_slots > 1) emit_a_panel_load(0, 0);
    for (std::size_t s = 0; s < std::min<std::size_t>(lb_, total_steps()); ++s) emit_b_load(s);
    if (!g_.a_resident) {
      for (std::size_t s = 0; s < std::min<std::size_t>(la_, total_steps()); ++s)
        emit_a_stream_load(s);
    }
  }

  // ---- phase: one step
  void emit_step(const Step& st) {
    const std::size_t s = st.index;
    const std::size_t tiles = tiles_in_block(st.nb);
    const std::size_t rows = rows_in_block(st.mb);
    const std::size_t block = st.mb * g_.n_blocks + st.nb;
    const bool block_first = st.kt == 0;
    const bool block_last = st.kt + 1 == g_.kt;

    // A loads due now
    bool a_fresh = false;
    if (g_.a_resident) {
      // Panel j is loaded one k tile per step during m block j - slots + 1 (just in time with
      // one slot); panel 0 with two slots is prefetched one k tile ahead.
      a_fresh = st.nb == 0;
      const std::size_t loading_for = st.mb + g_.a_slots - 1;
      const std::size_t step_in_mblock = st.nb * g_.kt + st.kt;
      if (st.mb == 0 && g_.a_slots > 1 && st.nb == 0 && st.kt + 1 < g_.kt)
        emit_a_panel_load(0, st.kt + 1);
      if (loading_for < g_.m_blocks && step_in_mblock < g_.kt)
        emit_a_panel_load(loading_for, step_in_mblock);
      if (!a_fresh) plan_.bytes_a_reused += rows * dim_;
    } else {
      a_fresh = true;
      if (s + la_ < total_steps()) emit_a_stream_load(s + la_);
    }
    if (s + lb_ < total_steps()) emit_b_load(s + lb_);

    if (block_first && block >= g_.out_slots) emit_pending(0, block - g_.out_slots);

    // MXU: per weight tile, LOADW into alternating banks, then MATMUL over the block's rows
    const bool a_free_now =
        g_.a_resident ? (block_last && st.nb + 1 == g_.n_blocks && st.mb + g_.a_slots < g_.m_blocks)
                      : (s + g_.a_slots < total_steps());
    for (std::size_t t = 0; t < tiles; ++t) {
      const std::uint8_t bank = static_cast<std::uint8_t>(weight_tiles_++ & 1);
      isa::LoadW lw;
      lw.vmem_row =
          static_cast<std::uint32_t>(g_.b_base + (s % g_.b_slots) * g_.b_slot_rows + t * dim_);
      lw.bank = bank;
      em_.emit(lw, when(t == 0, kBReady),
               when(t + 1 == tiles && s + g_.b_slots < total_steps(), kBFree));

      isa::Matmul mm;
      mm.vmem_row = a_slot_row(st);
      mm.acc_row = static_cast<std::uint32_t>((block % g_.out_slots) * g_.nts * g_.bm + t * g_.bm);
      mm.rows = static_cast<std::uint32_t>(rows);
      mm.bank = bank;
      mm.accumulate = !block_first;
      std::vector<std::uint8_t> waits;
      if (t == 0 && block_first && block >= g_.out_slots) waits.push_back(kAccFree);
      if (t == 0 && a_fresh) waits.push_back(a_ready_sem(g_.a_resident, st.mb % g_.a_slots));
      std::vector<std::uint8_t> signals;
      if (t + 1 == tiles && block_last) signals.push_back(kAccReady);
      if (t + 1 == tiles && a_free_now) signals.push_back(kAFree);
      em_.emit(mm, waits, signals);
    }
    if (block_last)
      queue_drain(block, st.mb, st.nb);
    else
      emit_pending(2, kNoBlock);
  }

  const MatmulSpec& spec_;
  const MatmulOperands& operands_;
  Program& program_;
  VmemPlacer vmem_;  // holds a runtime policy's VMEM buffers until the compile ends
  const Geometry g_;
  const std::size_t dim_;
  Emitter em_;
  const unsigned la_;  // A lookahead in steps (stream mode)
  const unsigned lb_;  // B lookahead in steps
  std::size_t first_instruction_ = 0;
  MatmulPlan plan_;
  std::vector<Step> steps_;
  std::deque<Pending> pending_;   // drains not yet emitted
  std::size_t weight_tiles_ = 0;  // alternates the weight bank tile by tile
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
  return make_layout(tiled, static_cast<std::int64_t>(s.m), static_cast<std::int64_t>(s.k), 1, dim,
                     "A");
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
  return compile_matmul(preset, spec, MatmulOperands{a, b, c, std::nullopt, nullptr}, options,
                        program);
}

MatmulPlan compile_matmul(const Preset& preset, const MatmulSpec& spec,
                          const MatmulOperands& operands, const CompileOptions& options,
                          Program& program) {
  check_spec(spec, operands);
  return MatmulCompiler(preset, spec, operands, options, program).compile();
}

}  // namespace tpuemu
