// SPDX-License-Identifier: Apache-2.0
// ISA encoding, program images, assembler and disassembler, static checks.
#include <gtest/gtest.h>

#include <unistd.h>

#include <fstream>
#include <random>

#include "tpuemu/base/error.h"
#include "tpuemu/program/program.h"

namespace tpuemu {
namespace {

std::string error_of(auto&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

InstructionWords words(std::initializer_list<std::uint32_t> w) {
  InstructionWords out{};
  std::copy(w.begin(), w.end(), out.begin());
  return out;
}

Instruction random_instruction(std::mt19937_64& rng) {
  auto u = [&](std::uint64_t limit) { return std::uniform_int_distribution<std::uint64_t>(0, limit - 1)(rng); };
  auto u32 = [&] { return static_cast<std::uint32_t>(u(std::uint64_t{1} << 32)); };
  Instruction in;
  switch (u(9)) {
    case 0: in.op = isa::End{}; break;
    case 1: in.op = isa::DmaNop{}; break;
    case 2: in.op = isa::MxuNop{}; break;
    case 3: in.op = isa::VecNop{}; break;
    case 4:
      in.op = isa::Dma{.hbm_addr = u32(),
                       .local_addr = u32(),
                       .len = static_cast<std::uint16_t>(u(65536)),
                       .count = static_cast<std::uint16_t>(u(65536)),
                       .hbm_stride = u32(),
                       .local_stride = static_cast<std::uint32_t>(u(1u << 20)),
                       .path = static_cast<DmaPath>(u(5))};
      break;
    case 5: in.op = isa::LoadW{.vmem_row = u32(), .bank = static_cast<std::uint8_t>(u(2))}; break;
    case 6:
      in.op = isa::Matmul{.vmem_row = u32(), .acc_row = u32(), .rows = u32(),
                          .bank = static_cast<std::uint8_t>(u(2)), .accumulate = u(2) == 1};
      break;
    case 7:
      in.op = isa::VAdd{.a_row = u32(), .b_row = u32(), .out_row = u32(), .rows = u32(), .relu = u(2) == 1};
      break;
    default: {
      isa::VQuant v{.acc_row = u32(), .vmem_row = u32(), .rows = u32(), .relu = u(2) == 1};
      if (u(3) == 0) {
        v.smem_params = u32();
      } else {
        v.scale = static_cast<std::int32_t>(u32());
        v.shift = static_cast<std::uint8_t>(u(64));
      }
      if (u(2) == 0) {
        v.bias = true;
        v.bias_row = u32();
      }
      in.op = v;
    }
  }
  if (u(2)) in.wait = Wait{.sem = static_cast<std::uint8_t>(u(32)), .count = static_cast<std::uint8_t>(u(256))};
  if (u(2)) in.signal = static_cast<std::uint8_t>(u(32));
  return in;
}

Program random_program(std::uint64_t seed, std::size_t n) {
  std::mt19937_64 rng(seed);
  Program p;
  for (std::size_t i = 0; i < n; ++i) p.push_back(random_instruction(rng));
  return p;
}

// ---- encoding -------------------------------------------------------------------------------

TEST(Encode, DmaWordsFollowTheContract) {
  const Instruction in{.op = isa::Dma{.hbm_addr = 0x1000, .local_addr = 7, .len = 4, .count = 8,
                                      .hbm_stride = 0x200, .local_stride = 4,
                                      .path = DmaPath::AccToHbm},
                       .wait = Wait{.sem = 3, .count = 1},
                       .signal = 4};
  const std::uint32_t w0 = 0x10 | 1u << 8 | 3u << 9 | 1u << 14 | 1u << 22 | 4u << 23;
  EXPECT_EQ(encode(in), words({w0, 0x1000, 7, 4 | 8u << 16, 0x200, 4 | 4u << 20, 0, 0}));
  EXPECT_EQ(in.opcode(), Opcode::Dma);
  EXPECT_EQ(in.queue(), Queue::Dma);
}

TEST(Encode, MxuAndVectorWords) {
  EXPECT_EQ(encode({.op = isa::LoadW{.vmem_row = 64, .bank = 1}}), words({0x20, 64, 1}));
  EXPECT_EQ(encode({.op = isa::Matmul{.vmem_row = 5, .acc_row = 6, .rows = 128, .bank = 1,
                                      .accumulate = true}}),
            words({0x21, 5, 6, 128, 3}));
  EXPECT_EQ(encode({.op = isa::VQuant{.acc_row = 1, .vmem_row = 100, .rows = 8, .scale = -2,
                                      .shift = 63, .relu = true}}),
            words({0x30, 1, 100, 8, 0xFFFFFFFE, 63 | 1u << 6}));
  EXPECT_EQ(encode({.op = isa::VQuant{.acc_row = 1, .vmem_row = 2, .rows = 3, .smem_params = 9}}),
            words({0x30, 1, 2, 3, 0, 1u << 7, 9}));
  EXPECT_EQ(encode({.op = isa::VQuant{.acc_row = 1, .vmem_row = 2, .rows = 3, .smem_params = 9,
                                      .bias = true, .bias_row = 0x12345}}),
            words({0x30, 1, 2, 3, 0, 1u << 7 | 1u << 8, 9, 0x12345}));
  EXPECT_EQ(encode({.op = isa::VAdd{.a_row = 4, .b_row = 5, .out_row = 6, .rows = 7, .relu = true}, .signal = 2}),
            words({0x31 | 1u << 22 | 2u << 23, 4, 5, 6, 7, 1}));
  EXPECT_EQ(Instruction{.op = isa::VAdd{}}.queue(), Queue::Vector);
  EXPECT_EQ(encode({.op = isa::End{}}), words({0}));
  EXPECT_EQ(encode({.op = isa::VecNop{}, .signal = 31}), words({0x3F | 1u << 22 | 31u << 23}));
  EXPECT_EQ(encode({.op = isa::MxuNop{}, .wait = Wait{31, 255}}),
            words({0x2F | 1u << 8 | 31u << 9 | 255u << 14}));
  EXPECT_EQ(Instruction{.op = isa::VQuant{}}.queue(), Queue::Vector);
  EXPECT_EQ(Instruction{.op = isa::End{}}.queue(), Queue::Control);
  EXPECT_EQ(Instruction{.op = isa::LoadW{}}.queue(), Queue::Mxu);
}

TEST(Encode, RejectsUnencodableFields) {
  EXPECT_NE(error_of([] { encode({.op = isa::End{}, .signal = 32}); }).find("signal semaphore 32"),
            std::string::npos);
  EXPECT_THROW(encode({.op = isa::End{}, .wait = Wait{32, 0}}), Error);
  EXPECT_THROW(encode({.op = isa::VQuant{.shift = 64}}), Error);
  EXPECT_THROW(encode({.op = isa::Dma{.local_stride = 1u << 20}}), Error);
  EXPECT_THROW(encode({.op = isa::Dma{.path = static_cast<DmaPath>(5)}}), Error);
  EXPECT_THROW(encode({.op = isa::LoadW{.bank = 2}}), Error);
  EXPECT_THROW(encode({.op = isa::Matmul{.bank = 2}}), Error);
  EXPECT_THROW(encode({.op = isa::VQuant{.scale = 1, .smem_params = 0}}), Error);
  EXPECT_NE(error_of([] { encode({.op = isa::VQuant{.bias_row = 4}}); }).find("bias_row"), std::string::npos);
}

TEST(Decode, RoundTripsRandomInstructions) {
  std::mt19937_64 rng(2024);
  for (int i = 0; i < 5000; ++i) {
    const Instruction in = random_instruction(rng);
    const auto w = encode(in);
    ASSERT_EQ(decode(w), in) << disassemble(in);
  }
}

TEST(Decode, RejectsIllegalOpcodesAndReservedBits) {
  EXPECT_NE(error_of([] { decode(words({0x11})); }).find("illegal opcode 0x11"), std::string::npos);
  EXPECT_THROW(decode(words({0x40})), Error);
  EXPECT_THROW(decode(words({0xFF})), Error);
  // w0[31:28] reserved.
  EXPECT_NE(error_of([] { decode(words({0x1F | 1u << 28})); }).find("w0"), std::string::npos);
  // wait_sem / wait_cnt / sig_sem set without their enable bit.
  EXPECT_THROW(decode(words({0x1F | 3u << 9})), Error);
  EXPECT_THROW(decode(words({0x1F | 1u << 14})), Error);
  EXPECT_THROW(decode(words({0x1F | 1u << 23})), Error);
  // Operands of an operand-less opcode.
  EXPECT_NE(error_of([] { decode(words({0x00, 0, 0, 0, 0, 0, 0, 1})); }).find("w7"), std::string::npos);
  // DMA: path 5, bits above the path, w6.
  EXPECT_NE(error_of([] { decode(words({0x10, 0, 0, 0, 0, 5u << 20})); }).find("path 5"),
            std::string::npos);
  EXPECT_THROW(decode(words({0x10, 0, 0, 0, 0, 1u << 24})), Error);
  EXPECT_THROW(decode(words({0x10, 0, 0, 0, 0, 0, 1})), Error);
  // LOADW: only w2[0].
  EXPECT_THROW(decode(words({0x20, 0, 2})), Error);
  // MATMUL: only w4[1:0].
  EXPECT_THROW(decode(words({0x21, 0, 0, 0, 4})), Error);
  // VQUANT: immediates must be zero with SMEM params; w6 must be zero without.
  EXPECT_THROW(decode(words({0x30, 0, 0, 0, 5, 1u << 7})), Error);
  EXPECT_THROW(decode(words({0x30, 0, 0, 0, 0, 1u << 7 | 3})), Error);
  EXPECT_THROW(decode(words({0x30, 0, 0, 0, 0, 0, 1})), Error);
  EXPECT_THROW(decode(words({0x30, 0, 0, 0, 0, 1u << 9})), Error);
  EXPECT_NO_THROW(decode(words({0x30, 0, 0, 0, 0, 1u << 7 | 1u << 6, 12})));
  // VQUANT bias: w5[8]; w7 is the bias row with it and must be zero without it.
  EXPECT_THROW(decode(words({0x30, 0, 0, 0, 0, 0, 0, 5})), Error);
  EXPECT_EQ(std::get<isa::VQuant>(decode(words({0x30, 0, 0, 0, 0, 1u << 8, 0, 5})).op).bias_row, 5u);
  // VADD: only w1..w4 and w5[0].
  EXPECT_THROW(decode(words({0x31, 0, 0, 0, 0, 2})), Error);
  EXPECT_THROW(decode(words({0x31, 0, 0, 0, 0, 0, 1})), Error);
  EXPECT_EQ(decode(words({0x31, 1, 2, 3, 4, 1})), (Instruction{.op = isa::VAdd{1, 2, 3, 4, true}}));
}

// ---- program images -------------------------------------------------------------------------

TEST(ProgramBytes, LittleEndian32BytesPerInstruction) {
  Program p;
  p.push_back({.op = isa::LoadW{.vmem_row = 0x04030201, .bank = 1}});
  p.push_back({.op = isa::End{}});
  const auto bytes = p.to_bytes();
  ASSERT_EQ(bytes.size(), 64u);
  EXPECT_EQ(bytes[0], 0x20);
  EXPECT_EQ(bytes[1], 0);
  EXPECT_EQ(bytes[4], 0x01);
  EXPECT_EQ(bytes[7], 0x04);
  EXPECT_EQ(bytes[8], 0x01);
  EXPECT_EQ(Program::from_bytes(bytes), p);
}

TEST(ProgramBytes, RandomRoundTrip) {
  const Program p = random_program(77, 2000);
  EXPECT_EQ(Program::from_bytes(p.to_bytes()), p);
}

TEST(ProgramBytes, ErrorsNameTheInstruction) {
  Program p;
  p.push_back({.op = isa::End{}});
  p.push_back({.op = isa::End{}});
  auto bytes = p.to_bytes();
  bytes[32] = 0x11;
  const std::string msg = error_of([&] { Program::from_bytes(bytes); });
  EXPECT_NE(msg.find("instruction 1 (byte 0x20)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("illegal opcode 0x11"), std::string::npos) << msg;
  bytes.pop_back();
  EXPECT_NE(error_of([&] { Program::from_bytes(bytes); }).find("multiple of 32"), std::string::npos);

  p.push_back({.op = isa::VQuant{.shift = 70}});
  EXPECT_NE(error_of([&] { p.to_bytes(); }).find("instruction 2"), std::string::npos);
}

// ---- assembler ------------------------------------------------------------------------------

TEST(Assembler, ParsesTheDocumentedExamples) {
  const std::string text = R"(# a comment line
dma hbm=0x1000 local=0 len=4 count=8 hbm_stride=0x200 local_stride=4 path=hbm2vmem wait=s3>=1 signal=s4
loadw vmem=64 bank=1 wait=s0>=1   # trailing comment

matmul vmem=0 acc=0 rows=128 bank=0 acc_mode=accumulate signal=s2
vquant acc=0 vmem=100 rows=8 scale=123 shift=9 relu
vquant acc=0 vmem=100 rows=8 params=smem:4
nop.dma wait=s1>=2
	nop.mxu
nop.vec signal=s31
end
vquant acc=0 vmem=100 rows=8 params=smem:4 bias=vmem:96
vadd a=0 b=8 out=0 rows=8 relu
vadd out=3 rows=2 b=0x10 a=1 signal=s5
)";
  const Program p = assemble(text, "ex.s");
  ASSERT_EQ(p.size(), 12u);
  EXPECT_EQ(p[9], (Instruction{.op = isa::VQuant{.acc_row = 0, .vmem_row = 100, .rows = 8,
                                                 .smem_params = 4, .bias = true, .bias_row = 96}}));
  EXPECT_EQ(p[10], (Instruction{.op = isa::VAdd{.a_row = 0, .b_row = 8, .out_row = 0, .rows = 8, .relu = true}}));
  EXPECT_EQ(p[11], (Instruction{.op = isa::VAdd{.a_row = 1, .b_row = 16, .out_row = 3, .rows = 2}, .signal = 5}));
  EXPECT_EQ(p[0], (Instruction{.op = isa::Dma{.hbm_addr = 0x1000, .local_addr = 0, .len = 4,
                                              .count = 8, .hbm_stride = 0x200, .local_stride = 4,
                                              .path = DmaPath::HbmToVmem},
                               .wait = Wait{3, 1},
                               .signal = 4}));
  EXPECT_EQ(p[1], (Instruction{.op = isa::LoadW{.vmem_row = 64, .bank = 1}, .wait = Wait{0, 1}}));
  EXPECT_EQ(p[2], (Instruction{.op = isa::Matmul{.vmem_row = 0, .acc_row = 0, .rows = 128,
                                                 .bank = 0, .accumulate = true},
                               .signal = 2}));
  EXPECT_EQ(p[3], (Instruction{.op = isa::VQuant{.acc_row = 0, .vmem_row = 100, .rows = 8,
                                                 .scale = 123, .shift = 9, .relu = true}}));
  EXPECT_EQ(p[4], (Instruction{.op = isa::VQuant{.acc_row = 0, .vmem_row = 100, .rows = 8,
                                                 .smem_params = 4}}));
  EXPECT_EQ(p[5], (Instruction{.op = isa::DmaNop{}, .wait = Wait{1, 2}}));
  EXPECT_EQ(p[6], Instruction{.op = isa::MxuNop{}});
  EXPECT_EQ(p[7], (Instruction{.op = isa::VecNop{}, .signal = 31}));
  EXPECT_EQ(p[8], Instruction{.op = isa::End{}});
}

TEST(Assembler, DefaultsAndNumberForms) {
  const Program p = assemble("dma hbm=4096 local=0x10 len=1 path=acc2hbm\n"
                             "matmul vmem=1 acc=2 rows=3\n"
                             "vquant acc=0 vmem=0 rows=1 scale=-0x80000000\n"
                             "vquant acc=0 vmem=0 rows=1 scale=2147483647 shift=0x3f\n");
  EXPECT_EQ(p[0], Instruction{.op = (isa::Dma{.hbm_addr = 4096, .local_addr = 16, .len = 1,
                                              .count = 1, .path = DmaPath::AccToHbm})});
  EXPECT_EQ(p[1], Instruction{.op = (isa::Matmul{.vmem_row = 1, .acc_row = 2, .rows = 3})});
  EXPECT_EQ(std::get<isa::VQuant>(p[2].op).scale, INT32_MIN);
  EXPECT_EQ(std::get<isa::VQuant>(p[3].op).scale, INT32_MAX);
  EXPECT_EQ(std::get<isa::VQuant>(p[3].op).shift, 63);
}

TEST(Disassembler, CanonicalText) {
  EXPECT_EQ(disassemble(Instruction{
                .op = isa::Dma{.hbm_addr = 0x1000, .local_addr = 0, .len = 4, .count = 8,
                               .hbm_stride = 0x200, .local_stride = 4, .path = DmaPath::HbmToVmem},
                .wait = Wait{3, 1},
                .signal = 4}),
            "dma hbm=0x1000 local=0 len=4 count=8 hbm_stride=0x200 local_stride=4 path=hbm2vmem "
            "wait=s3>=1 signal=s4");
  EXPECT_EQ(disassemble(Instruction{.op = isa::Matmul{.rows = 128, .accumulate = true}, .signal = 2}),
            "matmul vmem=0 acc=0 rows=128 bank=0 acc_mode=accumulate signal=s2");
  EXPECT_EQ(disassemble(Instruction{.op = isa::VQuant{.vmem_row = 100, .rows = 8, .scale = 123,
                                                      .shift = 9, .relu = true}}),
            "vquant acc=0 vmem=100 rows=8 scale=123 shift=9 relu");
  EXPECT_EQ(disassemble(Instruction{.op = isa::VQuant{.rows = 8, .smem_params = 4}}),
            "vquant acc=0 vmem=0 rows=8 params=smem:4");
  EXPECT_EQ(disassemble(Instruction{.op = isa::VQuant{.rows = 8, .scale = 3, .bias = true, .bias_row = 12}}),
            "vquant acc=0 vmem=0 rows=8 scale=3 shift=0 bias=vmem:12");
  EXPECT_EQ(disassemble(Instruction{.op = isa::VAdd{.a_row = 1, .b_row = 2, .out_row = 1, .rows = 9, .relu = true}}),
            "vadd a=1 b=2 out=1 rows=9 relu");
  EXPECT_EQ(disassemble(Instruction{.op = isa::DmaNop{}, .wait = Wait{1, 2}}), "nop.dma wait=s1>=2");
  EXPECT_EQ(disassemble(Instruction{.op = isa::LoadW{.vmem_row = 64, .bank = 1}, .wait = Wait{0, 1}}),
            "loadw vmem=64 bank=1 wait=s0>=1");
  Program p;
  p.push_back({.op = isa::MxuNop{}});
  p.push_back({.op = isa::End{}});
  EXPECT_EQ(disassemble(p), "nop.mxu\nend\n");
}

TEST(Disassembler, AssembleOfDisassembleIsIdentity) {
  for (std::uint64_t seed : {1u, 2u, 3u}) {
    const Program p = random_program(seed, 1500);
    const std::string text = disassemble(p);
    ASSERT_EQ(assemble(text, "roundtrip.s"), p) << "seed " << seed;
    EXPECT_EQ(disassemble(assemble(text)), text);
  }
}

// Each bad line sits on line 3 after two good ones, so the reported line number is checked.
void expect_asm_error(const std::string& bad_line, const std::string& fragment) {
  const std::string text = "nop.dma\n# comment\n" + bad_line + "\nend\n";
  const std::string msg = error_of([&] { assemble(text, "prog.s"); });
  EXPECT_EQ(msg.rfind("prog.s:3: ", 0), 0u) << bad_line << " -> " << msg;
  EXPECT_NE(msg.find(fragment), std::string::npos) << bad_line << " -> " << msg;
}

TEST(Assembler, ErrorsReportLineAndToken) {
  expect_asm_error("matmull vmem=0 acc=0 rows=1", "unknown mnemonic 'matmull'");
  expect_asm_error("dma hbm=0 local=0 lenn=4 path=hbm2vmem", "missing field 'len='");
  expect_asm_error("dma hbm=0 local=0 len=4 lenn=4 path=hbm2vmem", "unknown field 'lenn=4'");
  expect_asm_error("dma hbm=0 local=0 len=65536 path=hbm2vmem", "'len=65536'");
  expect_asm_error("dma hbm=0 local=0 len=1 count=70000 path=hbm2vmem", "'count=70000'");
  expect_asm_error("dma hbm=0 local=0 len=1 local_stride=0x100000 path=hbm2vmem", "'local_stride=0x100000'");
  expect_asm_error("dma hbm=0x100000000 local=0 len=1 path=hbm2vmem", "'hbm=0x100000000'");
  expect_asm_error("dma hbm=0 local=0 len=1 path=hbm2acc", "'path=hbm2acc'");
  expect_asm_error("dma hbm=0 local=0 len=1 path=hbm2vmem path=vmem2hbm", "duplicate field 'path=vmem2hbm'");
  expect_asm_error("dma hbm=12abc local=0 len=1 path=hbm2vmem", "'hbm=12abc'");
  expect_asm_error("dma hbm=-4 local=0 len=1 path=hbm2vmem", "'hbm=-4'");
  expect_asm_error("loadw vmem=0 bank=2", "'bank=2'");
  expect_asm_error("loadw vmem=", "'vmem=' needs a value");
  expect_asm_error("matmul vmem=0 acc=0 rows=1 acc_mode=add", "'acc_mode=add'");
  expect_asm_error("vquant acc=0 vmem=0 rows=1 scale=1 shift=64", "'shift=64'");
  expect_asm_error("vquant acc=0 vmem=0 rows=1 scale=2147483648", "'scale=2147483648'");
  expect_asm_error("vquant acc=0 vmem=0 rows=1 scale=-2147483649", "'scale=-2147483649'");
  expect_asm_error("vquant acc=0 vmem=0 rows=1 shift=3", "missing field 'scale='");
  expect_asm_error("vquant acc=0 vmem=0 rows=1 params=smem:4 scale=1", "cannot be combined");
  expect_asm_error("vquant acc=0 vmem=0 rows=1 params=vmem:4", "'params=vmem:4'");
  expect_asm_error("vquant acc=0 vmem=0 rows=1 scale=1 relu=1", "'relu=1' takes no value");
  expect_asm_error("vquant acc=0 vmem=0 rows=1 scale=1 bias=smem:4", "'bias=smem:4'");
  expect_asm_error("vquant acc=0 vmem=0 rows=1 scale=1 bias", "'bias' needs a value");
  expect_asm_error("vadd a=0 b=0 rows=1", "missing field 'out='");
  expect_asm_error("vadd a=0 b=0 out=0 rows=1 shift=2", "unknown field 'shift=2'");
  expect_asm_error("vadd a=0 b=0 out=0x100000000 rows=1", "'out=0x100000000'");
  expect_asm_error("nop.dma wait=s32>=1", "'wait=s32>=1'");
  expect_asm_error("nop.dma wait=s1>=256", "'wait=s1>=256'");
  expect_asm_error("nop.dma wait=s1>1", "'wait=s1>1'");
  expect_asm_error("nop.dma wait=x1>=1", "'wait=x1>=1'");
  expect_asm_error("nop.mxu signal=s32", "'signal=s32'");
  expect_asm_error("nop.vec len=3", "unknown field 'len=3'");
  expect_asm_error("end relu", "unknown field 'relu'");
}

TEST(Assembler, ReadsFiles) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("tpuemu_asm_" + std::to_string(::getpid()) + ".s");
  {
    std::ofstream(path) << "nop.vec\r\nend\r\n";  // CRLF line endings are accepted
  }
  const Program p = assemble_file(path);
  std::filesystem::remove(path);
  EXPECT_EQ(p.size(), 2u);
  EXPECT_NE(error_of([&] { assemble_file(path); }).find("cannot open"), std::string::npos);
}

// ---- static checks --------------------------------------------------------------------------

Preset small_preset() {
  Preset p;
  p.name = "t";
  p.dim = 8;
  p.vmem_rows = 1024;
  p.vmem_banks = 4;
  p.acc_rows = 256;
  p.smem_words = 64;  // 32 rows of 2 words
  p.queue_depth = 8;
  p.mem_outstanding = 4;
  p.clock_ghz = 1;
  p.hbm = {.model = "simple", .capacity_bytes = 1 << 20, .latency_cycles = 10, .bytes_per_cycle = 8};
  return p;
}

TEST(CheckProgram, AcceptsAValidProgram) {
  const Program p = assemble(R"(
dma hbm=0x0 local=0 len=8 path=hbm2vmem signal=s0
dma hbm=0x100 local=8 len=16 count=4 hbm_stride=0x80 local_stride=16 path=hbm2vmem signal=s1
loadw vmem=0 wait=s0>=1
matmul vmem=8 acc=0 rows=64 wait=s1>=1 signal=s2
vquant acc=0 vmem=512 rows=64 scale=3 shift=4 wait=s2>=1 signal=s3
dma hbm=0x8000 local=0 len=64 path=acc2hbm wait=s3>=1
dma hbm=0x0 local=0 len=32 path=hbm2smem
vquant acc=0 vmem=0 rows=1 params=smem:62
vquant acc=0 vmem=0 rows=1 params=smem:62 bias=vmem:1020
vadd a=0 b=8 out=0 rows=8
vadd a=0 b=8 out=8 rows=8 relu
vadd a=0 b=8 out=16 rows=8
vadd a=0 b=0 out=0 rows=1016
end
)");
  const auto problems = check_program(p, small_preset());
  EXPECT_TRUE(problems.empty()) << problems.front();
}

TEST(CheckProgram, FindsOutOfRangeAndMisalignedAccesses) {
  const auto check = [](const std::string& line) {
    const auto problems = check_program(assemble(line + "\nend\n"), small_preset());
    return problems.empty() ? std::string("(none)") : problems.front();
  };
  EXPECT_NE(check("dma hbm=0x4 local=0 len=1 path=hbm2vmem").find("not aligned"), std::string::npos);
  EXPECT_NE(check("dma hbm=0 local=0 len=1 count=2 hbm_stride=12 path=hbm2vmem").find("hbm_stride"),
            std::string::npos);
  EXPECT_NE(check("dma hbm=0 local=1020 len=1 count=2 local_stride=4 path=hbm2vmem").find("VMEM rows [1024, 1025)"),
            std::string::npos);
  EXPECT_NE(check("dma hbm=0 local=31 len=2 path=smem2hbm").find("SMEM"), std::string::npos);
  EXPECT_NE(check("dma hbm=0 local=250 len=7 path=acc2hbm").find("ACC"), std::string::npos);
  EXPECT_NE(check("dma hbm=0xFFFC8 local=0 len=2 path=acc2hbm").find("capacity"), std::string::npos);
  EXPECT_NE(check("dma hbm=0 local=0 len=0 path=hbm2vmem").find("moves nothing"), std::string::npos);
  EXPECT_NE(check("loadw vmem=1020").find("VMEM"), std::string::npos);
  EXPECT_NE(check("matmul vmem=0 acc=200 rows=57").find("ACC rows [200, 257)"), std::string::npos);
  EXPECT_NE(check("matmul vmem=0 acc=0 rows=0").find("rows=0"), std::string::npos);
  EXPECT_NE(check("vquant acc=0 vmem=1000 rows=25 scale=1").find("VMEM"), std::string::npos);
  EXPECT_NE(check("vquant acc=0 vmem=0 rows=1 params=smem:63").find("SMEM params"), std::string::npos);
  EXPECT_NE(check("vquant acc=0 vmem=0 rows=1 scale=1 bias=vmem:1021").find("VMEM bias rows [1021, 1025)"),
            std::string::npos);
  EXPECT_NE(check("vadd a=1000 b=0 out=0 rows=25").find("VMEM a rows"), std::string::npos);
  EXPECT_NE(check("vadd a=0 b=1000 out=0 rows=25").find("VMEM b rows"), std::string::npos);
  EXPECT_NE(check("vadd a=0 b=0 out=1000 rows=25").find("VMEM out rows"), std::string::npos);
  EXPECT_NE(check("vadd a=0 b=0 out=0 rows=0").find("rows=0"), std::string::npos);
  EXPECT_EQ(check("nop.dma").find("instruction"), std::string::npos);  // "(none)"
  EXPECT_NE(check("nop.dma\nmatmul vmem=0 acc=0 rows=0").find("instruction 1 (matmul)"),
            std::string::npos);
}

TEST(CheckProgram, VaddOutputMayOnlyOverlapAnInputExactly) {
  const auto problems = [](const std::string& line) { return check_program(assemble(line + "\nend\n"), small_preset()); };
  EXPECT_TRUE(problems("vadd a=10 b=20 out=10 rows=10").empty());  // a in place
  EXPECT_TRUE(problems("vadd a=10 b=20 out=20 rows=10").empty());  // b in place
  EXPECT_TRUE(problems("vadd a=10 b=20 out=30 rows=10").empty());  // adjacent: no overlap
  EXPECT_TRUE(problems("vadd a=10 b=20 out=0 rows=10").empty());
  for (const char* bad : {"vadd a=10 b=40 out=11 rows=10", "vadd a=10 b=40 out=1 rows=10",
                          "vadd a=40 b=10 out=19 rows=10", "vadd a=40 b=10 out=5 rows=6"}) {
    const auto p = problems(bad);
    ASSERT_EQ(p.size(), 1u) << bad;
    EXPECT_NE(p[0].find("partially overlap"), std::string::npos) << p[0];
  }
  // both inputs overlapped: two problems
  EXPECT_EQ(problems("vadd a=10 b=12 out=11 rows=4").size(), 2u);
}

TEST(CheckProgram, RequiresAnEnd) {
  const auto none = check_program(assemble("nop.dma\n"), small_preset());
  ASSERT_EQ(none.size(), 1u);
  EXPECT_NE(none[0].find("no end"), std::string::npos);
  const auto after = check_program(assemble("end\nnop.dma\n"), small_preset());
  ASSERT_EQ(after.size(), 1u);
  EXPECT_NE(after[0].find("never fetched"), std::string::npos);
}

// A program from a .s file: every problem names its line there (comments and blank lines count).
TEST(CheckProgram, ProblemsNameTheSourceLine) {
  const SourceProgram p = assemble_source("# header\n\nnop.dma\n  # note\ndma hbm=3 local=0 len=1 count=1 path=hbm2vmem\nend\nnop.dma\n",
                                          "prog.s");
  ASSERT_EQ(p.lines, (std::vector<std::size_t>{3, 5, 6, 7}));
  const auto problems = check_program(p, small_preset());
  ASSERT_EQ(problems.size(), 2u);
  EXPECT_EQ(problems[0].rfind("prog.s:5: instruction 1 (dma): hbm address 0x3 is not aligned", 0), 0u) << problems[0];
  EXPECT_EQ(problems[1], "prog.s:7: instructions after the end at 2 are never fetched");
  EXPECT_EQ(check_program(assemble_source("nop.dma\n", "x.s"), small_preset()).front(),
            "x.s: program has no end instruction: fetch would run past it");
}

}  // namespace
}  // namespace tpuemu
