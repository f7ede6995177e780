// ISA encoding and decoding (docs/isa.md, "Instruction word").
#include "tpuemu/program/program.h"
#include "tpuemu/base/overloaded.h"

#include <fmt/format.h>

#include "tpuemu/base/error.h"

namespace tpuemu {
namespace {

using detail::Overloaded;

constexpr std::uint32_t kSems = 32;
constexpr std::uint32_t kLocalStrideLimit = 1u << 20;
constexpr std::uint32_t kShiftLimit = 64;

std::uint32_t bits(std::uint32_t word, unsigned lo, unsigned width) {
  return (word >> lo) & ((width >= 32) ? 0xFFFFFFFFu : ((1u << width) - 1));
}

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
                        [](const isa::VecNop&) { return Opcode::VecNop; },
                    },
                    op);
}

InstructionWords encode(const Instruction& in) {
  InstructionWords w{};
  w[0] = static_cast<std::uint32_t>(in.opcode());
  if (in.wait) {
    check_range(in.wait->sem < kSems, fmt::format("wait semaphore {} >= 32", in.wait->sem));
    w[0] |= 1u << 8 | std::uint32_t{in.wait->sem} << 9 | std::uint32_t{in.wait->count} << 14;
  }
  if (in.signal) {
    check_range(*in.signal < kSems, fmt::format("signal semaphore {} >= 32", *in.signal));
    w[0] |= 1u << 22 | std::uint32_t{*in.signal} << 23;
  }
  std::visit(Overloaded{
                 [](const isa::End&) {},
                 [](const isa::DmaNop&) {},
                 [](const isa::MxuNop&) {},
                 [](const isa::VecNop&) {},
                 [&](const isa::Dma& d) {
                   check_range(d.local_stride < kLocalStrideLimit,
                               fmt::format("dma local_stride {} >= 2^20", d.local_stride));
                   const auto path = static_cast<std::uint32_t>(d.path);
                   check_range(path <= 4, fmt::format("dma path {} > 4", path));
                   w[1] = d.hbm_addr;
                   w[2] = d.local_addr;
                   w[3] = std::uint32_t{d.len} | std::uint32_t{d.count} << 16;
                   w[4] = d.hbm_stride;
                   w[5] = d.local_stride | path << 20;
                 },
                 [&](const isa::LoadW& l) {
                   check_range(l.bank < 2, fmt::format("loadw bank {} > 1", l.bank));
                   w[1] = l.vmem_row;
                   w[2] = l.bank;
                 },
                 [&](const isa::Matmul& m) {
                   check_range(m.bank < 2, fmt::format("matmul bank {} > 1", m.bank));
                   w[1] = m.vmem_row;
                   w[2] = m.acc_row;
                   w[3] = m.rows;
                   w[4] = std::uint32_t{m.bank} | std::uint32_t{m.accumulate} << 1;
                 },
                 [&](const isa::VQuant& v) {
                   check_range(v.shift < kShiftLimit, fmt::format("vquant shift {} >= 64", v.shift));
                   check_range(!v.smem_params || (v.scale == 0 && v.shift == 0),
                               "vquant with SMEM params must have immediate scale and shift 0");
                   w[1] = v.acc_row;
                   w[2] = v.vmem_row;
                   w[3] = v.rows;
                   w[4] = static_cast<std::uint32_t>(v.scale);
                   w[5] = std::uint32_t{v.shift} | std::uint32_t{v.relu} << 6 |
                          std::uint32_t{v.smem_params.has_value()} << 7;
                   w[6] = v.smem_params.value_or(0);
                 },
             },
             in.op);
  return w;
}

Instruction decode(std::span<const std::uint32_t, kInstructionWords> w) {
  Instruction in;
  const std::uint32_t opcode = bits(w[0], 0, 8);
  const bool wait_en = bits(w[0], 8, 1) != 0;
  const auto wait_sem = static_cast<std::uint8_t>(bits(w[0], 9, 5));
  const auto wait_cnt = static_cast<std::uint8_t>(bits(w[0], 14, 8));
  const bool sig_en = bits(w[0], 22, 1) != 0;
  const auto sig_sem = static_cast<std::uint8_t>(bits(w[0], 23, 5));

  // w0: the sem/count fields are unused (so must be zero) when their enable bit is clear.
  std::uint32_t w0_used = 0x00FFu | 1u << 8 | 1u << 22;
  if (wait_en) w0_used |= 0x1Fu << 9 | 0xFFu << 14;
  if (sig_en) w0_used |= 0x1Fu << 23;

  // Words w1..w7 each opcode uses, as bit masks.
  std::array<std::uint32_t, kInstructionWords> used{};
  std::string_view name = {};
  switch (static_cast<Opcode>(opcode)) {
    case Opcode::End: in.op = isa::End{}; break;
    case Opcode::DmaNop: in.op = isa::DmaNop{}; break;
    case Opcode::MxuNop: in.op = isa::MxuNop{}; break;
    case Opcode::VecNop: in.op = isa::VecNop{}; break;
    case Opcode::Dma: {
      used = {0, ~0u, ~0u, ~0u, ~0u, 0x00FFFFFFu, 0, 0};
      const std::uint32_t path = bits(w[5], 20, 4);
      if (path > 4) throw Error(fmt::format("dma: unknown path {} in w5[23:20]", path));
      in.op = isa::Dma{.hbm_addr = w[1],
                       .local_addr = w[2],
                       .len = static_cast<std::uint16_t>(bits(w[3], 0, 16)),
                       .count = static_cast<std::uint16_t>(bits(w[3], 16, 16)),
                       .hbm_stride = w[4],
                       .local_stride = bits(w[5], 0, 20),
                       .path = static_cast<DmaPath>(path)};
      break;
    }
    case Opcode::LoadW:
      used = {0, ~0u, 0x1u, 0, 0, 0, 0, 0};
      in.op = isa::LoadW{.vmem_row = w[1], .bank = static_cast<std::uint8_t>(w[2] & 1)};
      break;
    case Opcode::Matmul:
      used = {0, ~0u, ~0u, ~0u, 0x3u, 0, 0, 0};
      in.op = isa::Matmul{.vmem_row = w[1],
                          .acc_row = w[2],
                          .rows = w[3],
                          .bank = static_cast<std::uint8_t>(w[4] & 1),
                          .accumulate = (w[4] & 2) != 0};
      break;
    case Opcode::VQuant: {
      const bool from_smem = bits(w[5], 7, 1) != 0;
      // With SMEM params the immediate scale (w4) and shift (w5[5:0]) are unused; without
      // them the SMEM word index (w6) is.
      used = from_smem ? InstructionWords{0, ~0u, ~0u, ~0u, 0, 0xC0u, ~0u, 0}
                       : InstructionWords{0, ~0u, ~0u, ~0u, ~0u, 0x7Fu, 0, 0};
      isa::VQuant v{.acc_row = w[1],
                    .vmem_row = w[2],
                    .rows = w[3],
                    .scale = static_cast<std::int32_t>(w[4]),
                    .shift = static_cast<std::uint8_t>(bits(w[5], 0, 6)),
                    .relu = bits(w[5], 6, 1) != 0,
                    .smem_params = std::nullopt};
      if (from_smem) {
        v.scale = 0;
        v.shift = 0;
        v.smem_params = w[6];
      }
      in.op = v;
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
