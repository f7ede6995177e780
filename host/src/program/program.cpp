// SPDX-License-Identifier: Apache-2.0
// ISA encoding and decoding (docs/isa.md, "Instruction word").
#include "tpuemu/program/program.h"
#include "tpuemu/base/overloaded.h"

#include <fmt/format.h>

#include "tpuemu/base/error.h"
#include "tpuemu/spec/contract.h"

namespace tpuemu {
namespace {

using detail::Overloaded;

namespace hdr = spec::instr::header;

constexpr std::uint32_t kSems = spec::kNumSems;
constexpr std::uint32_t kLocalStrideLimit = 1u << spec::kLocalStrideBits;
constexpr std::uint32_t kShiftLimit = 1u << spec::instr::vquant::shift.bits.width;

// Throws unless the bits of `word` outside `used_mask` are zero.
void require_zero(std::uint32_t word, std::uint32_t used_mask, std::string_view what,
                  std::size_t index) {
  if ((word & ~used_mask) != 0) {
    throw Error(fmt::format("{}: nonzero reserved bits {:#010x} in w{}", what, word & ~used_mask,
                            index));
  }
}

void check_range(bool ok, std::string_view what) {
  if (!ok) throw Error(fmt::format("cannot encode: {}", what));
}

}  // namespace

std::string_view mnemonic(Opcode opcode) {
  switch (opcode) {
    case Opcode::End: return "end";
    case Opcode::Dma: return "dma";
    case Opcode::DmaNop: return "nop.dma";
    case Opcode::LoadW: return "loadw";
    case Opcode::Matmul: return "matmul";
    case Opcode::MxuNop: return "nop.mxu";
    case Opcode::VQuant: return "vquant";
    case Opcode::VAdd: return "vadd";
    case Opcode::VecNop: return "nop.vec";
  }
  return "?";
}

std::string_view path_name(DmaPath path) {
  switch (path) {
    case DmaPath::HbmToVmem: return "hbm2vmem";
    case DmaPath::VmemToHbm: return "vmem2hbm";
    case DmaPath::HbmToSmem: return "hbm2smem";
    case DmaPath::SmemToHbm: return "smem2hbm";
    case DmaPath::AccToHbm: return "acc2hbm";
  }
  return "?";
}

Opcode Instruction::opcode() const {
  return std::visit(Overloaded{
                        [](const isa::End&) { return Opcode::End; },
                        [](const isa::Dma&) { return Opcode::Dma; },
                        [](const isa::DmaNop&) { return Opcode::DmaNop; },
                        [](const isa::LoadW&) { return Opcode::LoadW; },
                        [](const isa::Matmul&) { return Opcode::Matmul; },
                        [](const isa::MxuNop&) { return Opcode::MxuNop; },
                        [](const isa::VQuant&) { return Opcode::VQuant; },
                        [](const isa::VAdd&) { return Opcode::VAdd; },
                        [](const isa::VecNop&) { return Opcode::VecNop; },
                    },
                    op);
}

InstructionWords encode(const Instruction& in) {
  InstructionWords w{};
  const auto put = [&](const spec::InstrField& f, std::uint32_t value) { f.put(w, value); };
  put(hdr::opcode, static_cast<std::uint32_t>(in.opcode()));
  if (in.wait) {
    check_range(in.wait->sem < kSems, fmt::format("wait semaphore {} >= {}", in.wait->sem, kSems));
    put(hdr::wait_en, 1);
    put(hdr::wait_sem, in.wait->sem);
    put(hdr::wait_cnt, in.wait->count);
  }
  if (in.signal) {
    check_range(*in.signal < kSems, fmt::format("signal semaphore {} >= {}", *in.signal, kSems));
    put(hdr::sig_en, 1);
    put(hdr::sig_sem, *in.signal);
  }
  std::visit(Overloaded{
                 [](const isa::End&) {},
                 [](const isa::DmaNop&) {},
                 [](const isa::MxuNop&) {},
                 [](const isa::VecNop&) {},
                 [&](const isa::Dma& d) {
                   namespace f = spec::instr::dma;
                   check_range(d.local_stride < kLocalStrideLimit,
                               fmt::format("dma local_stride {} >= 2^{}", d.local_stride, spec::kLocalStrideBits));
                   const auto path = static_cast<std::uint32_t>(d.path);
                   check_range(path < spec::kDmaPaths.size(), fmt::format("dma path {} > {}", path, spec::kDmaPaths.size() - 1));
                   put(f::hbm_addr, d.hbm_addr);
                   put(f::local_addr, d.local_addr);
                   put(f::len, d.len);
                   put(f::count, d.count);
                   put(f::hbm_stride, d.hbm_stride);
                   put(f::local_stride, d.local_stride);
                   put(f::path, path);
                 },
                 [&](const isa::LoadW& l) {
                   check_range(l.bank < spec::kWeightBanks, fmt::format("loadw bank {} > {}", l.bank, spec::kWeightBanks - 1));
                   put(spec::instr::loadw::vmem_row, l.vmem_row);
                   put(spec::instr::loadw::bank, l.bank);
                 },
                 [&](const isa::Matmul& m) {
                   namespace f = spec::instr::matmul;
                   check_range(m.bank < spec::kWeightBanks, fmt::format("matmul bank {} > {}", m.bank, spec::kWeightBanks - 1));
                   put(f::vmem_row, m.vmem_row);
                   put(f::acc_row, m.acc_row);
                   put(f::rows, m.rows);
                   put(f::bank, m.bank);
                   put(f::accumulate, m.accumulate);
                 },
                 [&](const isa::VQuant& v) {
                   namespace f = spec::instr::vquant;
                   check_range(v.shift < kShiftLimit, fmt::format("vquant shift {} >= {}", v.shift, kShiftLimit));
                   check_range(!v.smem_params || (v.scale == 0 && v.shift == 0),
                               "vquant with SMEM params must have immediate scale and shift 0");
                   check_range(v.bias || v.bias_row == 0, "vquant without bias must have bias_row 0");
                   put(f::acc_row, v.acc_row);
                   put(f::vmem_row, v.vmem_row);
                   put(f::rows, v.rows);
                   put(f::scale, static_cast<std::uint32_t>(v.scale));
                   put(f::shift, v.shift);
                   put(f::relu, v.relu);
                   put(f::smem_params, v.smem_params.has_value());
                   put(f::smem_word, v.smem_params.value_or(0));
                   put(f::bias, v.bias);
                   put(f::bias_row, v.bias_row);
                 },
                 [&](const isa::VAdd& a) {
                   namespace f = spec::instr::vadd;
                   put(f::a_row, a.a_row);
                   put(f::b_row, a.b_row);
                   put(f::out_row, a.out_row);
                   put(f::rows, a.rows);
                   put(f::relu, a.relu);
                 },
             },
             in.op);
  return w;
}

namespace {

// The bits of each word that the given fields occupy.
InstructionWords used_bits(std::initializer_list<spec::InstrField> fields) {
  InstructionWords used{};
  for (const spec::InstrField& f : fields) used[f.word] |= f.mask();
  return used;
}

}  // namespace

Instruction decode(std::span<const std::uint32_t, kInstructionWords> w) {
  Instruction in;
  const auto get = [&](const spec::InstrField& f) { return f.get(w); };
  const std::uint32_t opcode = get(hdr::opcode);
  const bool wait_en = get(hdr::wait_en) != 0;
  const auto wait_sem = static_cast<std::uint8_t>(get(hdr::wait_sem));
  const auto wait_cnt = static_cast<std::uint8_t>(get(hdr::wait_cnt));
  const bool sig_en = get(hdr::sig_en) != 0;
  const auto sig_sem = static_cast<std::uint8_t>(get(hdr::sig_sem));

  // w0: the sem/count fields are unused (so must be zero) when their enable bit is clear.
  std::uint32_t w0_used = hdr::opcode.mask() | hdr::wait_en.mask() | hdr::sig_en.mask();
  if (wait_en) w0_used |= hdr::wait_sem.mask() | hdr::wait_cnt.mask();
  if (sig_en) w0_used |= hdr::sig_sem.mask();

  // Words w1..w7 each opcode uses, as bit masks.
  InstructionWords used{};
  std::string_view name = {};
  switch (static_cast<Opcode>(opcode)) {
    case Opcode::End: in.op = isa::End{}; break;
    case Opcode::DmaNop: in.op = isa::DmaNop{}; break;
    case Opcode::MxuNop: in.op = isa::MxuNop{}; break;
    case Opcode::VecNop: in.op = isa::VecNop{}; break;
    case Opcode::Dma: {
      namespace f = spec::instr::dma;
      used = used_bits({f::hbm_addr, f::local_addr, f::len, f::count, f::hbm_stride, f::local_stride, f::path});
      const std::uint32_t path = get(f::path);
      if (path >= spec::kDmaPaths.size()) {
        throw Error(fmt::format("dma: unknown path {} in w{}[{}:{}]", path, f::path.word,
                                f::path.bits.lsb + f::path.bits.width - 1, f::path.bits.lsb));
      }
      in.op = isa::Dma{.hbm_addr = get(f::hbm_addr),
                       .local_addr = get(f::local_addr),
                       .len = static_cast<std::uint16_t>(get(f::len)),
                       .count = static_cast<std::uint16_t>(get(f::count)),
                       .hbm_stride = get(f::hbm_stride),
                       .local_stride = get(f::local_stride),
                       .path = static_cast<DmaPath>(path)};
      break;
    }
    case Opcode::LoadW: {
      namespace f = spec::instr::loadw;
      used = used_bits({f::vmem_row, f::bank});
      in.op = isa::LoadW{.vmem_row = get(f::vmem_row), .bank = static_cast<std::uint8_t>(get(f::bank))};
      break;
    }
    case Opcode::Matmul: {
      namespace f = spec::instr::matmul;
      used = used_bits({f::vmem_row, f::acc_row, f::rows, f::bank, f::accumulate});
      in.op = isa::Matmul{.vmem_row = get(f::vmem_row),
                          .acc_row = get(f::acc_row),
                          .rows = get(f::rows),
                          .bank = static_cast<std::uint8_t>(get(f::bank)),
                          .accumulate = get(f::accumulate) != 0};
      break;
    }
    case Opcode::VQuant: {
      namespace f = spec::instr::vquant;
      const bool from_smem = get(f::smem_params) != 0;
      const bool bias = get(f::bias) != 0;
      // With SMEM params the immediate scale and shift are unused; without them the SMEM word is;
      // without bias the bias row is.
      used = from_smem ? used_bits({f::acc_row, f::vmem_row, f::rows, f::relu, f::smem_params, f::smem_word, f::bias})
                       : used_bits({f::acc_row, f::vmem_row, f::rows, f::scale, f::shift, f::relu, f::smem_params, f::bias});
      if (bias) used[f::bias_row.word] |= f::bias_row.mask();
      isa::VQuant v{.acc_row = get(f::acc_row),
                    .vmem_row = get(f::vmem_row),
                    .rows = get(f::rows),
                    .scale = static_cast<std::int32_t>(get(f::scale)),
                    .shift = static_cast<std::uint8_t>(get(f::shift)),
                    .relu = get(f::relu) != 0,
                    .smem_params = std::nullopt,
                    .bias = bias,
                    .bias_row = bias ? get(f::bias_row) : 0};
      if (from_smem) {
        v.scale = 0;
        v.shift = 0;
        v.smem_params = get(f::smem_word);
      }
      in.op = v;
      break;
    }
    case Opcode::VAdd: {
      namespace f = spec::instr::vadd;
      used = used_bits({f::a_row, f::b_row, f::out_row, f::rows, f::relu});
      in.op = isa::VAdd{.a_row = get(f::a_row),
                        .b_row = get(f::b_row),
                        .out_row = get(f::out_row),
                        .rows = get(f::rows),
                        .relu = get(f::relu) != 0};
      break;
    }
    default:
      throw Error(fmt::format("illegal opcode {:#04x}", opcode));
  }
  name = mnemonic(static_cast<Opcode>(opcode));
  require_zero(w[0], w0_used, name, 0);
  for (std::size_t i = 1; i < kInstructionWords; ++i) require_zero(w[i], used[i], name, i);

  if (wait_en) in.wait = Wait{.sem = wait_sem, .count = wait_cnt};
  if (sig_en) in.signal = sig_sem;
  return in;
}

std::vector<std::uint8_t> Program::to_bytes() const {
  std::vector<std::uint8_t> out;
  out.reserve(instructions.size() * kInstructionBytes);
  for (std::size_t i = 0; i < instructions.size(); ++i) {
    InstructionWords w;
    try {
      w = encode(instructions[i]);
    } catch (const Error& e) {
      throw e.within(fmt::format("instruction {}", i));
    }
    for (std::uint32_t word : w) {
      for (unsigned b = 0; b < 4; ++b) out.push_back(static_cast<std::uint8_t>(word >> (8 * b)));
    }
  }
  return out;
}

Program Program::from_bytes(std::span<const std::uint8_t> bytes) {
  if (bytes.size() % kInstructionBytes != 0) {
    throw Error("program", fmt::format("size {} bytes is not a multiple of {}", bytes.size(),
                                       kInstructionBytes));
  }
  Program p;
  p.instructions.reserve(bytes.size() / kInstructionBytes);
  for (std::size_t off = 0; off < bytes.size(); off += kInstructionBytes) {
    InstructionWords w{};
    for (std::size_t i = 0; i < kInstructionWords; ++i) {
      for (unsigned b = 0; b < 4; ++b) w[i] |= std::uint32_t{bytes[off + 4 * i + b]} << (8 * b);
    }
    try {
      p.instructions.push_back(decode(w));
    } catch (const Error& e) {
      throw e.within(fmt::format("instruction {} (byte {:#x})", off / kInstructionBytes, off));
    }
  }
  return p;
}

}  // namespace tpuemu
