// SPDX-License-Identifier: Apache-2.0
// The layout grammar as the reader checks it (minor_to_major a permutation of the dimensions,
// tiles of positive dimensions whose stored size fits 64 bits, L(n), E(n) and S(n) in their
// ranges), each refusal at its token; a UTF-8 BOM before the module; the sniffing of HLO text;
// and the index tables of nested tuples (docs/hlo.md).
#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "tpuemu/base/error.h"
#include "tpuemu/hlo/buffers.h"
#include "tpuemu/hlo/hlo_parser.h"
#include "tpuemu/hlo/liveness.h"

namespace tpuemu::hlo {
namespace {

// A module whose one instruction has `shape`: the shape starts on line 3, column 12.
std::string module_with(std::string_view shape) {
  return "HloModule m\nENTRY e {\n  ROOT p = " + std::string(shape) + " parameter(0)\n}\n";
}

std::string error_of(std::string_view text) {
  try {
    (void)parse_hlo(text, "m.hlo");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// The error of a module whose one shape is `shape`, or "" when it reads.
std::string shape_error(std::string_view shape) { return error_of(module_with(shape)); }

Layout layout_of(std::string_view shape) {
  const Module m = parse_hlo(module_with(shape), "m.hlo");
  return *m.entry_computation().instructions[0].shape.layout;
}

TEST(HloLayouts, MinorToMajorIsAPermutationOfTheDimensions) {
  // A dimension twice would lay out one dimension twice and another not at all.
  EXPECT_EQ(shape_error("f32[4,4]{0,0}"),
            "m.hlo:3:23: malformed layout: dimension 0 appears twice in minor_to_major (each of the "
            "shape's 2 dimensions once)");
  EXPECT_EQ(shape_error("f32[4,4,4]{2,0,2}"),
            "m.hlo:3:27: malformed layout: dimension 2 appears twice in minor_to_major (each of the "
            "shape's 3 dimensions once)");
  EXPECT_EQ(shape_error("f32[2]{1,0}"),
            "m.hlo:3:19: malformed layout: dimension 1 is not a dimension of a rank-1 shape");
  EXPECT_EQ(shape_error("f32[]{0}"), "m.hlo:3:18: malformed layout: dimension 0 is not a dimension of a rank-0 shape");
  EXPECT_EQ(shape_error("f32[2,3]{1}"),
            "m.hlo:3:22: malformed layout: minor_to_major orders 1 of the shape's 2 dimensions");
  EXPECT_EQ(shape_error("f32[2,3]{1,}"), "m.hlo:3:23: malformed layout: expected a dimension after ','");
  EXPECT_EQ(shape_error("f32[2,3]{1,0,}"), "m.hlo:3:25: malformed layout: expected a dimension after ','");
  EXPECT_EQ(shape_error("f32[2,3]{-1,0}"), "m.hlo:3:21: malformed layout: expected '}' closing the layout, found '-'");
  EXPECT_EQ(shape_error("f32[2]{99999999999999999999}"), "m.hlo:3:19: a layout dimension does not fit 64 bits");
  // Whitespace and comments between the tokens, every permutation, the empty order of a scalar.
  EXPECT_EQ(layout_of("f32[2,3,4]{ 0 , /* minor */ 2,1 }").minor_to_major, (std::vector<std::int64_t>{0, 2, 1}));
  EXPECT_TRUE(layout_of("f32[]{}").minor_to_major.empty());
}

TEST(HloLayouts, TileDimensionsArePositiveOrStar) {
  EXPECT_EQ(shape_error("f32[8,128]{1,0:T(-5,128)}"),
            "m.hlo:3:29: malformed layout: tile dimension -5 is not positive (a tile dimension is 1 or more, or '*')");
  EXPECT_EQ(shape_error("f32[8,128]{1,0:T(0,0)}"),
            "m.hlo:3:29: malformed layout: tile dimension 0 is not positive (a tile dimension is 1 or more, or '*')");
  EXPECT_EQ(shape_error("bf16[8,128]{1,0:T(8,128)(2,0)}"),
            "m.hlo:3:39: malformed layout: tile dimension 0 is not positive (a tile dimension is 1 or more, or '*')");
  EXPECT_EQ(shape_error("f32[8,128]{1,0:T}"), "m.hlo:3:28: malformed layout: expected '(' after T");
  EXPECT_EQ(shape_error("f32[8,128]{1,0:T()}"), "m.hlo:3:29: expected a tile dimension");
  EXPECT_EQ(shape_error("f32[8,128]{1,0:T(8,128)T(8,128)}"), "m.hlo:3:35: malformed layout: a second T(...) item");
  EXPECT_EQ(shape_error("f32[8]{0:T(99999999999999999999)}"), "m.hlo:3:23: a tile dimension does not fit 64 bits");
  const Layout star = layout_of("f32[8,128]{1,0:T(*,128)(2,1)}");
  EXPECT_EQ(star.tiles, (std::vector<std::vector<std::int64_t>>{{-1, 128}, {2, 1}}));
}

TEST(HloLayouts, TiledSizeMustFit64Bits) {
  // One tile of 2^62 x 128 elements: the array's stored bytes overflow although its data fits.
  EXPECT_EQ(shape_error("f32[8,128]{1,0:T(4611686018427387904,128)}"),
            "m.hlo:3:27: malformed layout: shape f32[8,128]{1,0:T(4611686018427387904,128)}: its tiled "
            "size overflows 64 bits");
  // 2^64 elements of a tile with more dimensions than the shape; 2^62 f32 elements, 2^64 bytes.
  EXPECT_EQ(shape_error("s8[2]{0:T(4611686018427387904,4)}"),
            "m.hlo:3:20: malformed layout: shape s8[2]{0:T(4611686018427387904,4)}: its tiled size "
            "overflows 64 bits");
  EXPECT_EQ(shape_error("f32[2]{0:T(4611686018427387904)}"),
            "m.hlo:3:21: malformed layout: shape f32[2]{0:T(4611686018427387904)}: its tiled size "
            "overflows 64 bits");
  // The largest tiled size that fits reads, and shape_bytes counts it exactly.
  const Module m = parse_hlo(module_with("s8[2]{0:T(4611686018427387904)}"), "m.hlo");
  EXPECT_EQ(shape_bytes(m.entry_computation().instructions[0].shape, {}).padded, std::uint64_t{1} << 62);
  // An overflowing element count is named before the tiles.
  EXPECT_EQ(shape_error("f32[4294967296,4294967296]{1,0:T(8,128)}"),
            "m.hlo:3:12: shape f32[4294967296,4294967296]{1,0:T(8,128)}: its element count overflows 64 bits");
}

TEST(HloLayouts, MemorySpaceElementSizeAndTailPaddingInRange) {
  EXPECT_EQ(shape_error("f32[2]{0:S(-1)}"), "m.hlo:3:23: malformed layout: memory space S(-1) is not in 0..255");
  EXPECT_EQ(shape_error("f32[2]{0:S(99999999999)}"),
            "m.hlo:3:23: malformed layout: memory space S(99999999999) is not in 0..255");
  EXPECT_EQ(shape_error("f32[2]{0:S(256)}"), "m.hlo:3:23: malformed layout: memory space S(256) is not in 0..255");
  EXPECT_EQ(shape_error("f32[2]{0:S(1)S(1)}"), "m.hlo:3:25: malformed layout: a second S(...) item");
  EXPECT_EQ(shape_error("f32[2]{0:S(x)}"), "m.hlo:3:23: expected a memory space");
  EXPECT_EQ(shape_error("f32[2]{0:S(1}"), "m.hlo:3:24: expected ')' closing S(, found '}'");
  EXPECT_EQ(shape_error("f32[2]{0:E(129)}"),
            "m.hlo:3:23: malformed layout: element size E(129) is not in 0..128 bits");
  EXPECT_EQ(shape_error("f32[2]{0:E(-4)}"), "m.hlo:3:23: malformed layout: element size E(-4) is not in 0..128 bits");
  EXPECT_EQ(shape_error("f32[2]{0:L(0)}"),
            "m.hlo:3:23: malformed layout: tail padding alignment L(0) is not positive");
  EXPECT_EQ(shape_error("f32[2]{0:?}"), "m.hlo:3:21: malformed layout: unexpected '?' in the layout");
  EXPECT_EQ(layout_of("f32[2]{0:S(255)}").memory_space, 255);
  EXPECT_EQ(layout_of("f32[2]{0:S(5)}").memory_space, 5);  // XLA's host memory space
  // The items XLA prints, each in range, in XLA's order; the ones not modelled kept as text.
  const Layout all = layout_of("f32[8,128]{1,0:D(D,D)T(8,128)L(2)#(s32)#(u32)E(32)S(1)SC(0:2)P(f32[8,128]{1,0})M(8)}");
  EXPECT_EQ(all.tiles, (std::vector<std::vector<std::int64_t>>{{8, 128}}));
  EXPECT_EQ(all.memory_space, 1);
  EXPECT_EQ(all.text, "1,0:D(D,D)T(8,128)L(2)#(s32)#(u32)E(32)S(1)SC(0:2)P(f32[8,128]{1,0})M(8)");
}

TEST(HloText, ByteOrderMarkBeforeTheModuleIsRead) {
  const std::string bom = "\xEF\xBB\xBF";
  const Module m = parse_hlo(bom + module_with("f32[2]{0}"), "m.hlo");
  EXPECT_EQ(m.name, "m");
  // Columns count from the first byte after the mark, as an editor shows them.
  EXPECT_EQ(error_of(bom + "HloModul m\n"), "m.hlo:1:1: expected 'HloModule' at the start of an HLO module");
  // Only at the start: anywhere else it is a character the grammar has no place for.
  EXPECT_EQ(error_of(bom + bom + "HloModule m\n"), "m.hlo:1:1: expected 'HloModule' at the start of an HLO module");
}

TEST(HloLayouts, ParseShapeReadsOneShapeWithTheReadersChecks) {
  const Shape s = parse_shape(" bf16[8,256]{1,0:T(8,128)(2,1)S(1)} /* a VMEM array */", "s");
  EXPECT_EQ(s.type, PrimitiveType::BF16);
  EXPECT_EQ(s.layout->tiles.size(), 2u);
  EXPECT_EQ(s.layout->memory_space, 1);
  EXPECT_EQ(parse_shape("(f32[2]{0}, s32[])", "s").elements.size(), 2u);
  const auto error = [](std::string_view text) {
    try {
      (void)parse_shape(text, "s");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_EQ(error("f32[4,4]{0,0}"),
            "s:1:12: malformed layout: dimension 0 appears twice in minor_to_major (each of the shape's 2 "
            "dimensions once)");
  EXPECT_EQ(error("f32[2]{0} x"), "s:1:11: unexpected 'x' after the shape");
  EXPECT_EQ(error("f32[2]{0"), "s:1:9: unexpected end of file: the module is truncated (expected '}' closing the layout)");
  EXPECT_EQ(error(""), "s:1:1: unexpected end of file: the module is truncated (expected a shape)");
  EXPECT_EQ(error("f32[2]\x01"), "s:1:7: byte 0x01 is not text: the file is binary, not HLO text");
}

// The one sniffing of HLO text: what the reader would take for a module's start.
TEST(HloText, LooksLikeHloTextSkipsWhatTheReaderSkips) {
  EXPECT_TRUE(looks_like_hlo_text("HloModule m\n"));
  EXPECT_TRUE(looks_like_hlo_text("HloModule"));
  EXPECT_TRUE(looks_like_hlo_text("\n\t  \r\nHloModule m"));
  EXPECT_TRUE(looks_like_hlo_text("// XLA dump of module jit_f\nHloModule jit_f"));
  EXPECT_TRUE(looks_like_hlo_text("/* a\n comment */ // and another\n/**/HloModule m"));
  EXPECT_TRUE(looks_like_hlo_text("\xEF\xBB\xBFHloModule m"));
  EXPECT_TRUE(looks_like_hlo_text("\xEF\xBB\xBF // c\nHloModule m"));
  EXPECT_FALSE(looks_like_hlo_text(""));
  EXPECT_FALSE(looks_like_hlo_text("{\"kind\": \"mlp\"}"));
  EXPECT_FALSE(looks_like_hlo_text("// HloModule m"));
  EXPECT_FALSE(looks_like_hlo_text("/* HloModule m"));
  EXPECT_FALSE(looks_like_hlo_text("/* unterminated */ /* HloModule m"));
  EXPECT_FALSE(looks_like_hlo_text("HloModuleX m"));
  EXPECT_FALSE(looks_like_hlo_text("hlomodule m"));
  EXPECT_FALSE(looks_like_hlo_text("# HloModule m"));
  EXPECT_FALSE(looks_like_hlo_text("\xEF\xBB\xBF\xEF\xBB\xBFHloModule m"));
  // Whatever it says, the reader agrees: text it takes for a module's start reads that far.
  for (const char* text : {"// c\nHloModule m\nENTRY e {\n  ROOT p = f32[2] parameter(0)\n}\n",
                           "\xEF\xBB\xBF/* c */HloModule m\nENTRY e {\n  ROOT p = f32[2] parameter(0)\n}\n"}) {
    EXPECT_TRUE(looks_like_hlo_text(text));
    EXPECT_EQ(error_of(text), "");
  }
}

// XLA's buffer assignment gives every tuple-shaped index of a value its own index table: a
// pointer per element, at every nesting level.
TEST(HloTupleTables, EveryNestingLevelHasItsTable) {
  const Module m = parse_hlo(module_with("(f32[2], (s32[], (s32[], s32[], s32[])))"), "m.hlo");
  EXPECT_EQ(shape_bytes(m.entry_computation().instructions[0].shape, {}).padded, (2u + 2u + 3u) * 8);
  std::string deep = "f32[]";
  for (int i = 0; i < 64; ++i) deep = "(" + deep + ")";
  const Module d = parse_hlo(module_with(deep), "m.hlo");
  EXPECT_EQ(shape_bytes(d.entry_computation().instructions[0].shape, {}).padded, 64u * 8);
  EXPECT_EQ(shape_bytes(d.entry_computation().instructions[0].shape, {}).unpadded, 0u);
}

const LiveBuffer* find_buffer(const BufferSet& set, const std::string& name) {
  for (const LiveBuffer& b : set.buffers)
    if (b.name == name) return &b;
  return nullptr;
}

TEST(HloTupleTables, ATupleInstructionDefinesOnlyItsOwnLevel) {
  const Module m = parse_hlo(R"(HloModule t
ENTRY main {
  p = (f32[8,128]{1,0}, (f32[8,128]{1,0}, s32[])) parameter(0)
  a = f32[8,128]{1,0} get-tuple-element(p), index=0
  n = f32[8,128]{1,0} negate(a)
  inner = (f32[8,128]{1,0}, f32[8,128]{1,0}) tuple(n, a)
  ROOT outer = ((f32[8,128]{1,0}, f32[8,128]{1,0}), f32[8,128]{1,0}) tuple(inner, n)
})",
                             "t.hlo");
  const BufferSet set = live_buffers(m, text_schedule(m), {});
  // The parameter defines every index of its shape: its own table and its element's.
  ASSERT_TRUE(find_buffer(set, "p (index table)"));
  EXPECT_EQ(find_buffer(set, "p (index table)")->bytes, 2u * 8 + 2u * 8);
  // A tuple instruction defines index {} only; its nested tuple's table is the operand's.
  ASSERT_TRUE(find_buffer(set, "inner (index table)") && find_buffer(set, "outer (index table)"));
  EXPECT_EQ(find_buffer(set, "inner (index table)")->bytes, 16u);
  EXPECT_EQ(find_buffer(set, "outer (index table)")->bytes, 16u);
}

}  // namespace
}  // namespace tpuemu::hlo
