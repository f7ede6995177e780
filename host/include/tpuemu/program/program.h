// SPDX-License-Identifier: Apache-2.0
// The host layer `program`: the instruction set of docs/isa.md as C++ values, its 256-bit
// encoding, and a text assembler/disassembler.
//
// An Instruction is one of the operations below (a std::variant, so an operand that does not
// belong to the opcode cannot be set) plus the wait/signal fields common to all instructions:
//
//   Instruction{.op = isa::Matmul{.vmem_row = 0, .acc_row = 0, .rows = 128, .accumulate = true},
//               .wait = Wait{.sem = 1, .count = 1}, .signal = 2}
//
// Assembly text, one instruction per line, fields in any order, '#' starts a comment:
//   dma hbm=0x1000 local=0 len=4 count=8 hbm_stride=0x200 local_stride=4 path=hbm2vmem wait=s3>=1 signal=s4
//   loadw vmem=64 bank=1 wait=s0>=1
//   matmul vmem=0 acc=0 rows=128 bank=0 acc_mode=accumulate signal=s2
//   vquant acc=0 vmem=100 rows=8 scale=123 shift=9 relu
//   vquant acc=0 vmem=100 rows=8 params=smem:4 bias=vmem:96
//   vadd a=0 b=8 out=0 rows=8 relu
//   nop.dma wait=s1>=2        (also nop.mxu, nop.vec)
//   end
// Defaults when omitted: dma count=1 hbm_stride=0 local_stride=0; loadw/matmul bank=0;
// matmul acc_mode=overwrite; vquant shift=0, relu off, no bias; vadd relu off. Numbers are decimal or 0x-hex; only
// scale may be negative. The disassembler always prints every field.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "tpuemu/config/config.h"
#include "tpuemu/spec/contract.h"

namespace tpuemu {

// Opcodes, queues and DMA paths are the contract's (spec/tpuemu.json).
using Opcode = spec::Opcode;
// The queue an opcode is dispatched to (its high nibble).
using Queue = spec::Queue;
using DmaPath = spec::DmaPath;

namespace isa {

struct End {
  bool operator==(const End&) const = default;
};
struct DmaNop {
  bool operator==(const DmaNop&) const = default;
};
struct MxuNop {
  bool operator==(const MxuNop&) const = default;
};
struct VecNop {
  bool operator==(const VecNop&) const = default;
};

// Chunk i < count moves len local rows between HBM bytes [hbm_addr + i*hbm_stride, ...) and
// local rows local_addr + i*local_stride ... (rows of VMEM, SMEM or ACC depending on path).
struct Dma {
  std::uint32_t hbm_addr = 0;      // bytes, aligned to dim
  std::uint32_t local_addr = 0;    // rows
  std::uint16_t len = 0;           // rows per chunk
  std::uint16_t count = 1;         // chunks
  std::uint32_t hbm_stride = 0;    // bytes between chunk starts
  std::uint32_t local_stride = 0;  // rows between chunk starts, < 2^20
  DmaPath path = DmaPath::HbmToVmem;
  bool operator==(const Dma&) const = default;
};

// Weight rows vmem_row .. vmem_row+dim-1 into weight bank `bank` (0 or 1).
struct LoadW {
  std::uint32_t vmem_row = 0;
  std::uint8_t bank = 0;
  bool operator==(const LoadW&) const = default;
};

// ACC[acc_row+r] (= or +=) VMEM[vmem_row+r] . W[bank] for r < rows.
struct Matmul {
  std::uint32_t vmem_row = 0;
  std::uint32_t acc_row = 0;
  std::uint32_t rows = 0;
  std::uint8_t bank = 0;
  bool accumulate = false;
  bool operator==(const Matmul&) const = default;
};

// VMEM[vmem_row+r] = requantize(ACC[acc_row+r], bias, scale, shift, relu) for r < rows. With
// smem_params, scale = smem[*smem_params] and shift = smem[*smem_params+1][5:0] at run time, and
// the immediate scale/shift must be 0 (unused fields are zero in the encoding). With bias, lane n
// first adds the int32 bias[n] held little-endian in VMEM rows bias_row .. bias_row+3 (lane n in
// row n / (dim/4)); without it bias_row must be 0.
struct VQuant {
  std::uint32_t acc_row = 0;
  std::uint32_t vmem_row = 0;
  std::uint32_t rows = 0;
  std::int32_t scale = 0;
  std::uint8_t shift = 0;  // < 64
  bool relu = false;
  std::optional<std::uint32_t> smem_params;  // SMEM word index
  bool bias = false;
  std::uint32_t bias_row = 0;  // VMEM row, with bias
  bool operator==(const VQuant&) const = default;
};

// VMEM[out_row+r][n] = add_saturate(VMEM[a_row+r][n], VMEM[b_row+r][n], relu) for r < rows.
// out_row may equal a_row or b_row (in place); any other overlap of the output rows with an
// input's rows is undefined (check_program reports it).
struct VAdd {
  std::uint32_t a_row = 0;
  std::uint32_t b_row = 0;
  std::uint32_t out_row = 0;
  std::uint32_t rows = 0;
  bool relu = false;
  bool operator==(const VAdd&) const = default;
};

}  // namespace isa

using Operation = std::variant<isa::End, isa::Dma, isa::DmaNop, isa::LoadW, isa::Matmul,
                               isa::MxuNop, isa::VQuant, isa::VAdd, isa::VecNop>;

// Before starting, wait until sem[sem] >= count, then subtract count.
struct Wait {
  std::uint8_t sem = 0;    // < 32
  std::uint8_t count = 0;
  bool operator==(const Wait&) const = default;
};

struct Instruction {
  Operation op;
  std::optional<Wait> wait;             // wait_en
  std::optional<std::uint8_t> signal;   // sig_en: sem[*signal] += 1 on completion; < 32

  Opcode opcode() const;
  Queue queue() const { return static_cast<Queue>(static_cast<std::uint8_t>(opcode()) >> 4); }
  bool operator==(const Instruction&) const = default;
};

inline constexpr std::size_t kInstructionWords = spec::kInstrWords;
inline constexpr std::size_t kInstructionBytes = 32;
using InstructionWords = std::array<std::uint32_t, kInstructionWords>;

// Throws Error if a field is out of its encodable range (sem >= 32, shift >= 64,
// local_stride >= 2^20, bank > 1, path > 4, VQuant immediates set together with smem_params,
// VQuant bias_row set without bias).
InstructionWords encode(const Instruction& instruction);
// Throws Error on an illegal opcode, an unknown DMA path, or any nonzero unused/reserved bit.
Instruction decode(std::span<const std::uint32_t, kInstructionWords> words);

std::string_view mnemonic(Opcode opcode);     // "dma", "nop.mxu", ...
std::string_view path_name(DmaPath path);     // "hbm2vmem", ...

struct Program {
  std::vector<Instruction> instructions;

  // Little-endian words, 32 bytes per instruction, as stored at PROG_BASE.
  std::vector<std::uint8_t> to_bytes() const;
  // Throws Error naming the instruction index and byte offset of a bad instruction, or if the
  // size is not a multiple of 32.
  static Program from_bytes(std::span<const std::uint8_t> bytes);

  std::size_t size() const { return instructions.size(); }
  bool empty() const { return instructions.empty(); }
  void push_back(Instruction i) { instructions.push_back(std::move(i)); }
  const Instruction& operator[](std::size_t i) const { return instructions[i]; }
  Instruction& operator[](std::size_t i) { return instructions[i]; }
  auto begin() const { return instructions.begin(); }
  auto end() const { return instructions.end(); }

  bool operator==(const Program&) const = default;
};

// Assembles the text format above. Errors are "source:line: message" quoting the offending
// token, e.g. "prog.s:3: dma: unknown field 'lenn'".
Program assemble(std::string_view text, std::string_view source_name = "<asm>");
Program assemble_file(const std::filesystem::path& path);

// A program assembled from text with the source line of each instruction, so that the checks
// below point into the .s file ("prog.s:7: instruction 3 (dma): ...").
struct SourceProgram {
  Program program;
  std::string source;               // the name errors use: the path as given, "standard input"
  std::vector<std::size_t> lines;   // lines[i]: the line of instruction i
};
SourceProgram assemble_source(std::string_view text, std::string_view source_name);
SourceProgram assemble_source_file(const std::filesystem::path& path);

// One line, no newline, in the assembler's format.
std::string disassemble(const Instruction& instruction);
// One line per instruction, each ending in '\n'; assemble(disassemble(p)) == p.
std::string disassemble(const Program& program);

// Static checks against a preset for what the hardware would fault on (error code 3, address out
// of range) or what is almost certainly a bug: misaligned HBM addresses, ranges beyond VMEM/ACC/
// SMEM/HBM, zero-length transfers, no END, a VADD whose output partially overlaps an input. Returns one message per problem
// ("instruction 4 (matmul): ..."); empty means the program is fine.
std::vector<std::string> check_program(const Program& program, const Preset& preset);
// The same problems placed at their source line: "prog.s:7: instruction 3 (dma): ...", and a
// missing end at the file ("prog.s: program has no end instruction ...").
std::vector<std::string> check_program(const SourceProgram& program, const Preset& preset);

}  // namespace tpuemu
