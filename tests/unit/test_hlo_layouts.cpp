// SPDX-License-Identifier: Apache-2.0
// The layout grammar as the reader checks it (minor_to_major a permutation of the dimensions,
// tiles of positive dimensions whose stored size fits 64 bits, L(n), E(n) and S(n) in their
// ranges, D(...), #(...), *(...), SC(...), P(...) and M(n) read into their fields, every item in
// XLA's order), each refusal at its token; a UTF-8 BOM before the module; the sniffing of HLO
// text; and the index tables of nested tuples (docs/hlo.md).
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
    (void)parse_hlo(std::string(text), "m.hlo");
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
}

// Every item XLA's printer writes (xla/layout.cc, Layout::Print), in its order, each read into
// its field; the text is kept whole as well.
TEST(HloLayouts, EveryItemXlaPrintsIsReadIntoItsField) {
  const Layout all =
      layout_of("f32[8,128]{1,0:D(D,C+~)T(8,128)L(2)#(u32)*(u16)E(32)S(1)SC(0:2)P(f32[8,128]{1,0})M(8)}");
  ASSERT_EQ(all.dim_levels.size(), 2u);
  EXPECT_EQ(all.dim_levels[0].type, DimLevelType::Dense);
  EXPECT_EQ(all.dim_levels[1].type, DimLevelType::Compressed);
  EXPECT_FALSE(all.dim_levels[1].unique);
  EXPECT_FALSE(all.dim_levels[1].ordered);
  EXPECT_TRUE(all.is_sparse());
  EXPECT_EQ(all.tiles, (std::vector<std::vector<std::int64_t>>{{8, 128}}));
  EXPECT_EQ(all.tail_padding_elements, 2);
  EXPECT_EQ(all.index_type, PrimitiveType::U32);
  EXPECT_EQ(all.pointer_type, PrimitiveType::U16);
  EXPECT_EQ(all.element_size_bits, 32);
  EXPECT_EQ(all.memory_space, 1);
  ASSERT_EQ(all.split_configs.size(), 1u);
  EXPECT_EQ(all.split_configs[0].dimension, 0);
  EXPECT_EQ(all.split_configs[0].split_indices, (std::vector<std::int64_t>{2}));
  ASSERT_TRUE(all.physical_shape);
  EXPECT_EQ(all.physical_shape->to_string(), "f32[8,128]{1,0}");
  EXPECT_EQ(all.dynamic_metadata_prefix_bytes, 8);
  EXPECT_EQ(all.text, "1,0:D(D,C+~)T(8,128)L(2)#(u32)*(u16)E(32)S(1)SC(0:2)P(f32[8,128]{1,0})M(8)");
  // None of them: the defaults, which XLA does not print.
  const Layout none = layout_of("f32[8,128]{1,0}");
  EXPECT_TRUE(none.dim_levels.empty());
  EXPECT_FALSE(none.is_sparse());
  EXPECT_FALSE(none.index_type || none.pointer_type || none.physical_shape);
  EXPECT_TRUE(none.split_configs.empty());
  EXPECT_EQ(none.dynamic_metadata_prefix_bytes, 0);
}

// XLA's parser reads the items in one order (xla/hlo/parser/hlo_parser.cc, ParseLayout): an item
// out of it is not a layout XLA wrote. An item of a name XLA has not printed so far stays text.
TEST(HloLayouts, ItemsComeInXlasOrder) {
  const std::string order = ": XLA writes the items in the order D T L # * E S SC P M";
  EXPECT_EQ(shape_error("f32[8]{0:S(1)E(32)}"), "m.hlo:3:25: malformed layout: E(...) after S(...)" + order);
  EXPECT_EQ(shape_error("f32[8,128]{1,0:T(8,128)D(D,D)}"),
            "m.hlo:3:35: malformed layout: D(...) after T(...)" + order);
  EXPECT_EQ(shape_error("f32[8]{0:SC(0:4)S(1)}"), "m.hlo:3:28: malformed layout: S(...) after SC(...)" + order);
  EXPECT_EQ(shape_error("f32[8]{0:M(8)P(f32[8]{0})}"), "m.hlo:3:25: malformed layout: P(...) after M(...)" + order);
  EXPECT_EQ(shape_error("f32[8]{0:#(u32)#(u32)}"), "m.hlo:3:27: malformed layout: a second #(...) item");
  const Layout unknown = layout_of("f32[8]{0:T(8)Q(1)(2)S(1)}");
  EXPECT_EQ(unknown.memory_space, 1);
  EXPECT_EQ(unknown.text, "0:T(8)Q(1)(2)S(1)");
}

// D(...): one dimension level type per dimension - D dense, C compressed, S singleton, H loose
// compressed - with '+' (not unique) and '~' (not ordered) after a sparse one.
TEST(HloLayouts, DimLevelTypesOnePerDimension) {
  const Layout singleton = layout_of("f32[8,128]{1,0:D(S+,H~)}");
  ASSERT_EQ(singleton.dim_levels.size(), 2u);
  EXPECT_EQ(singleton.dim_levels[0].type, DimLevelType::Singleton);
  EXPECT_FALSE(singleton.dim_levels[0].unique);
  EXPECT_TRUE(singleton.dim_levels[0].ordered);
  EXPECT_EQ(singleton.dim_levels[1].type, DimLevelType::LooseCompressed);
  EXPECT_TRUE(singleton.dim_levels[1].unique);
  EXPECT_FALSE(singleton.dim_levels[1].ordered);
  EXPECT_FALSE(layout_of("f32[8,128]{1,0:D(D,D)}").is_sparse());
  EXPECT_TRUE(layout_of("f32[8,128]{1,0:D()}").dim_levels.empty());
  EXPECT_EQ(shape_error("f32[8,128]{1,0:D(X,D)}"),
            "m.hlo:3:29: malformed layout: expected a dimension level type (D, C, S or H), found 'X'");
  EXPECT_EQ(shape_error("f32[8,128]{1,0:D(D+,D)}"),
            "m.hlo:3:29: malformed layout: a dense dimension holds every index once and in order: no '+' or '~' "
            "after D");
  EXPECT_EQ(shape_error("f32[8,128]{1,0:D(D)}"),
            "m.hlo:3:27: malformed layout: D(...) gives 1 dimension level types for the shape's 2 dimensions");
  EXPECT_EQ(shape_error("f32[8,128]{1,0:D}"), "m.hlo:3:28: malformed layout: expected '(' after D");
}

// #(type) and *(type): a sparse array's index and pointer types, unsigned integers.
TEST(HloLayouts, IndexAndPointerTypesAreUnsignedIntegers) {
  const Layout types = layout_of("f32[8]{0:#(u8)*(u64)}");
  EXPECT_EQ(types.index_type, PrimitiveType::U8);
  EXPECT_EQ(types.pointer_type, PrimitiveType::U64);
  EXPECT_EQ(shape_error("f32[8]{0:#(s32)}"),
            "m.hlo:3:23: malformed layout: index type #(s32) is not an unsigned integer type (u8, u16, u32, u64...)");
  EXPECT_EQ(shape_error("f32[8]{0:*(f32)}"),
            "m.hlo:3:23: malformed layout: pointer type *(f32) is not an unsigned integer type (u8, u16, u32, "
            "u64...)");
  EXPECT_EQ(shape_error("f32[8]{0:#u32}"), "m.hlo:3:22: malformed layout: expected '(' after #");
}

// SC(d:i,...): a physical dimension (0 the major-most) split at ascending indices inside it.
TEST(HloLayouts, SplitConfigsAscendInsideAPhysicalDimension) {
  const Layout split = layout_of("f32[8,128]{1,0:SC(0:4)(1:32,96)}");
  ASSERT_EQ(split.split_configs.size(), 2u);
  EXPECT_EQ(split.split_configs[1].dimension, 1);
  EXPECT_EQ(split.split_configs[1].split_indices, (std::vector<std::int64_t>{32, 96}));
  EXPECT_TRUE(layout_of("f32[8,128]{1,0:SC(0:)}").split_configs[0].split_indices.empty());
  // Physical dimension 0 of {0,1} is logical dimension 1, of 128: index 100 is inside it.
  EXPECT_EQ(layout_of("f32[8,128]{0,1:SC(0:100)}").split_configs[0].split_indices[0], 100);
  EXPECT_EQ(shape_error("f32[8,128]{1,0:SC(2:4)}"),
            "m.hlo:3:30: malformed layout: split dimension 2 is not a physical dimension of a rank-2 shape (0 is "
            "the major-most)");
  EXPECT_EQ(shape_error("f32[8,128]{1,0:SC(0:4)(0:2)}"),
            "m.hlo:3:35: malformed layout: physical dimension 0 is split twice");
  EXPECT_EQ(shape_error("f32[8,128]{1,0:SC(0:0)}"),
            "m.hlo:3:32: malformed layout: split index 0 is not in 1..7: each index above the one before it and "
            "inside physical dimension 0 of size 8");
  EXPECT_EQ(shape_error("f32[8,128]{1,0:SC(0:4,2)}"),
            "m.hlo:3:34: malformed layout: split index 2 is not in 5..7: each index above the one before it and "
            "inside physical dimension 0 of size 8");
  EXPECT_EQ(shape_error("f32[8,128]{1,0:SC(0:8)}"),
            "m.hlo:3:32: malformed layout: split index 8 is not in 1..7: each index above the one before it and "
            "inside physical dimension 0 of size 8");
  EXPECT_EQ(shape_error("f32[?]{0:SC(0:4,4)}"),
            "m.hlo:3:28: malformed layout: split index 4 is not above 4: each index above the one before it, and "
            "above 0");
  EXPECT_EQ(shape_error("f32[8,128]{1,0:SC(0)}"), "m.hlo:3:31: expected ':' after the split dimension, found ')'");
  EXPECT_EQ(shape_error("f32[8,128]{1,0:SC}"), "m.hlo:3:29: malformed layout: expected '(' after SC");
}

// P(shape): a shape read with every check of a shape, nested to the depth tuples may be.
TEST(HloLayouts, PhysicalShapeIsAShapeWithItsChecks) {
  const Layout physical = layout_of("f32[8]{0:D(C)#(u32)P((u32[9]{0}, f32[8]{0:T(256)}))}");
  ASSERT_TRUE(physical.physical_shape);
  EXPECT_TRUE(physical.physical_shape->is_tuple());
  EXPECT_EQ(physical.physical_shape->elements[1].layout->tiles, (std::vector<std::vector<std::int64_t>>{{256}}));
  EXPECT_EQ(shape_error("f32[8]{0:P(f32[2]{0,0})}"),
            "m.hlo:3:32: malformed layout: dimension 0 appears twice in minor_to_major (each of the shape's 1 "
            "dimensions once)");
  EXPECT_EQ(shape_error("f32[8]{0:P(f32[8]{0}}"), "m.hlo:3:32: expected ')' closing P(, found '}'");
  std::string nested = "f32[1]";
  for (int i = 0; i < 64; ++i) nested = "f32[1]{0:P(" + nested + ")}";
  EXPECT_EQ(shape_error(nested), "");
  EXPECT_NE(shape_error("f32[1]{0:P(" + nested + ")}")
                .find("malformed layout: physical shapes and tuples nested more than 64 deep"),
            std::string::npos);
}

// M(n): the bytes of a dynamic shape's metadata before its data, 0 or more.
TEST(HloLayouts, DynamicShapeMetadataPrefixIsNotNegative) {
  EXPECT_EQ(layout_of("f32[<=8]{0:M(16)}").dynamic_metadata_prefix_bytes, 16);
  EXPECT_EQ(shape_error("f32[8]{0:M(-1)}"),
            "m.hlo:3:23: malformed layout: dynamic shape metadata prefix M(-1) is negative");
  EXPECT_EQ(shape_error("f32[8]{0:M(8)M(8)}"), "m.hlo:3:25: malformed layout: a second M(...) item");
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
