// SPDX-License-Identifier: Apache-2.0
// The HLO text reader (tpuemu/hlo/hlo_parser.h): every construct into its fields, every error at
// its line and column, on the hand-written modules of tests/data/hlo.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "tpuemu/base/error.h"
#include "tpuemu/hlo/hlo_module.h"
#include "tpuemu/hlo/hlo_parser.h"

namespace tpuemu::hlo {
namespace {

const std::filesystem::path kData = std::filesystem::path(TPUEMU_TEST_DATA_DIR) / "hlo";

Module load(const std::string& name) { return read_hlo_file(kData / name); }

const Instruction& find(const Computation& c, std::string_view name) {
  for (const Instruction& i : c.instructions)
    if (i.name == name) return i;
  throw std::runtime_error("no instruction " + std::string(name));
}

// The error's message for a file of tests/data/hlo/bad, or "" when it reads.
std::string error_of(const std::filesystem::path& path) {
  try {
    (void)read_hlo_file(path);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

std::string parse_error(std::string_view text) {
  try {
    (void)parse_hlo(std::string(text), "m.hlo");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(HloOpcodes, TableKnowsXlaNamesAndArities) {
  ASSERT_TRUE(opcode_from_name("all-gather-start"));
  EXPECT_EQ(*opcode_from_name("all-gather-start"), Opcode::AllGatherStart);
  EXPECT_EQ(opcode_arity(Opcode::Dot), 2);
  EXPECT_EQ(opcode_arity(Opcode::Tuple), -1);
  EXPECT_EQ(opcode_arity(Opcode::Parameter), 0);
  EXPECT_EQ(opcode_arity(Opcode::While), 1);
  EXPECT_EQ(opcode_arity(Opcode::BatchNormGrad), 5);
  EXPECT_EQ(opcode_name(Opcode::Exponential), "exponential");
  EXPECT_EQ(opcode_name(Opcode::CountLeadingZeros), "count-leading-zeros");
  EXPECT_FALSE(opcode_from_name("exp"));
  // Every name maps back to its own opcode.
  for (std::size_t i = 0; i <= static_cast<std::size_t>(Opcode::Xor); ++i)
    EXPECT_EQ(static_cast<std::size_t>(*opcode_from_name(opcode_name(static_cast<Opcode>(i)))), i);
}

TEST(HloTypes, NamesAndWidths) {
  EXPECT_EQ(bit_width(*type_from_name("pred")), 8u);
  EXPECT_EQ(bit_width(*type_from_name("s4")), 4u);
  EXPECT_EQ(bit_width(*type_from_name("c128")), 128u);
  EXPECT_EQ(bit_width(*type_from_name("f8e4m3fn")), 8u);
  EXPECT_EQ(bit_width(PrimitiveType::Token), 0u);
  EXPECT_FALSE(type_from_name("tuple"));
  EXPECT_FALSE(type_from_name("f31"));
}

TEST(HloParser, StraightLineModuleWithPercentNamesAndLongOperands) {
  const Module m = load("straight_line_a.hlo");
  EXPECT_EQ(m.name, "straight_line_a");
  EXPECT_EQ(m.source, (kData / "straight_line_a.hlo").string());
  ASSERT_EQ(m.computations.size(), 1u);
  const Computation& e = m.entry_computation();
  EXPECT_TRUE(e.is_entry);
  EXPECT_EQ(e.name, "main");
  ASSERT_EQ(e.instructions.size(), 7u);
  EXPECT_EQ(e.root, 6u);
  EXPECT_TRUE(e.instructions[6].is_root);
  ASSERT_EQ(e.parameters.size(), 2u);
  EXPECT_EQ(e.parameters[1], 1u);
  const Instruction& mul = find(e, "multiply.3");
  EXPECT_EQ(mul.opcode, Opcode::Multiply);
  EXPECT_EQ(mul.operands, (std::vector<std::size_t>{2, 3}));
  EXPECT_EQ(mul.pos.line, 18u);
  EXPECT_EQ(mul.pos.col, 3u);
  EXPECT_EQ(mul.shape.to_string(), "f32[8,128]{1,0}");
  EXPECT_EQ(m.entry_computation_layout, "{(f32[8,128]{1,0}, f32[8,128]{1,0})->f32[8,128]{1,0}}");
}

TEST(HloParser, NamesWithoutPercentConstantsBroadcastsBitcast) {
  const Module m = load("straight_line_b.hlo");
  const Computation& e = m.entry_computation();
  EXPECT_EQ(e.name, "main");
  const Instruction& zero = find(e, "zero");
  EXPECT_EQ(zero.opcode, Opcode::Constant);
  EXPECT_EQ(m.literal(zero), "0");
  EXPECT_TRUE(zero.operands.empty());
  const Instruction& bias = find(e, "bias");
  ASSERT_NE(bias.attribute("dimensions"), nullptr);
  EXPECT_EQ(bias.attribute("dimensions")->value, "{1}");
  EXPECT_EQ(find(e, "zeros").attribute("dimensions")->value, "{}");
  EXPECT_EQ(find(e, "bc.7").opcode, Opcode::Bitcast);
  EXPECT_EQ(find(e, "neg.9").is_root, true);
}

TEST(HloParser, TuplesAndGetTupleElement) {
  const Module m = load("tuple_gte.hlo");
  const Computation& e = m.entry_computation();
  const Instruction& arg = find(e, "arg");
  ASSERT_TRUE(arg.shape.is_tuple());
  ASSERT_EQ(arg.shape.elements.size(), 2u);
  EXPECT_TRUE(arg.shape.elements[1].is_tuple());
  EXPECT_EQ(arg.shape.elements[1].elements[1].type, PrimitiveType::Pred);
  EXPECT_EQ(arg.shape.to_string(), "(f32[4]{0}, (s32[], pred[2]{0}))");
  EXPECT_EQ(arg.parameter_number, 0);
  EXPECT_EQ(find(e, "get-tuple-element.1").tuple_index, 0);
  EXPECT_EQ(find(e, "inner").tuple_index, 1);
  EXPECT_EQ(find(e, "count").operands, (std::vector<std::size_t>{3}));
  const Instruction& root = e.instructions[e.root];
  EXPECT_EQ(root.name, "result");
  EXPECT_EQ(root.opcode, Opcode::Tuple);
  EXPECT_EQ(root.operands.size(), 2u);
}

TEST(HloParser, WhileWithConditionAndBody) {
  const Module m = load("while_loop.hlo");
  ASSERT_EQ(m.computations.size(), 3u);
  EXPECT_EQ(m.entry, 2u);
  const Instruction& loop = find(m.entry_computation(), "loop");
  EXPECT_EQ(loop.opcode, Opcode::While);
  ASSERT_TRUE(loop.condition && loop.body);
  EXPECT_EQ(m.computations[*loop.condition].name, "cond");
  EXPECT_EQ(m.computations[*loop.body].name, "body");
  EXPECT_EQ(loop.called, (std::vector<std::size_t>{1, 0}));  // order of appearance
  EXPECT_EQ(loop.attribute("backend_config")->value, R"({"known_trip_count":{"n":"10"}})");
  const Computation& body = m.computations[0];
  EXPECT_FALSE(body.is_entry);
  EXPECT_EQ(body.instructions[body.root].name, "next");
  EXPECT_EQ(body.parameters, (std::vector<std::size_t>{0}));
  EXPECT_EQ(find(m.computations[1], "lt").attribute("direction")->value, "LT");
}

TEST(HloParser, ConditionalBranchesAndCallDefinedAfterUse) {
  const Module c = load("conditional.hlo");
  const Instruction& cond = c.entry_computation().instructions.back();
  EXPECT_EQ(cond.opcode, Opcode::Conditional);
  ASSERT_EQ(cond.branches.size(), 2u);
  EXPECT_EQ(c.computations[cond.branches[0]].name, "branch_neg");
  EXPECT_EQ(c.computations[cond.branches[1]].name, "branch_sq");
  EXPECT_EQ(cond.operands.size(), 3u);

  const Module k = load("call.hlo");
  EXPECT_EQ(k.entry, 0u);  // ENTRY first, its callee after it
  const Instruction& call = find(k.entry_computation(), "y");
  ASSERT_EQ(call.called.size(), 1u);
  EXPECT_EQ(k.computations[call.called[0]].name, "square_plus_one");
  EXPECT_EQ(k.find_computation("square_plus_one"), std::optional<std::size_t>(1));
}

TEST(HloParser, FusionsTiledLayoutsAndBackendConfigString) {
  const Module m = load("fusion.hlo");
  EXPECT_TRUE(m.is_scheduled);
  const Instruction& f = find(m.entry_computation(), "fusion.1");
  EXPECT_EQ(f.opcode, Opcode::Fusion);
  EXPECT_EQ(f.attribute("kind")->value, "kLoop");
  EXPECT_EQ(m.computations[f.called.at(0)].name, "fused_computation");
  EXPECT_EQ(f.attribute("backend_config")->value, R"("{\"flops\":\"65536\"}")");
  const Instruction& reduce = find(m.computations[2], "reduce");
  EXPECT_EQ(m.computations[reduce.called.at(0)].name, "add.r");
  ASSERT_TRUE(f.shape.layout);
  EXPECT_EQ(f.shape.layout->minor_to_major, (std::vector<std::int64_t>{1, 0}));
  EXPECT_EQ(f.shape.layout->tiles, (std::vector<std::vector<std::int64_t>>{{8, 128}}));
  EXPECT_EQ(m.instruction_count(), 12u);
}

TEST(HloParser, TiledLayoutsMemorySpacesDynamicDims) {
  const Module m = load("tiled_layouts.hlo");
  const Computation& e = m.entry_computation();
  const Layout& b = *find(e, "b").shape.layout;
  EXPECT_EQ(b.tiles, (std::vector<std::vector<std::int64_t>>{{8, 128}, {2, 1}}));
  EXPECT_EQ(b.memory_space, 0);
  EXPECT_EQ(b.text, "1,0:T(8,128)(2,1)");
  const Layout& vmem = *find(e, "b.vmem").shape.layout;
  EXPECT_EQ(vmem.memory_space, 1);
  EXPECT_EQ(vmem.tiles.size(), 2u);
  EXPECT_EQ(find(e, "c").shape.layout->tiles[1], (std::vector<std::int64_t>{4, 1}));
  const Layout& mask = *find(e, "mask").shape.layout;
  EXPECT_EQ(mask.text, "1,0:T(8,128)(4,1)E(32)");  // E(..) kept verbatim
  const Layout& scalar = *find(e, "n").shape.layout;
  EXPECT_TRUE(scalar.minor_to_major.empty());
  EXPECT_EQ(scalar.tiles, (std::vector<std::vector<std::int64_t>>{{128}}));
  const Shape& dyn = find(e, "dyn").shape;
  EXPECT_EQ(dyn.dims, (std::vector<std::int64_t>{8, -1}));
  EXPECT_EQ(dyn.dynamic, (std::vector<bool>{true, true}));
  EXPECT_EQ(dyn.to_string(), "f32[<=8,?]{1,0}");
  // Only dims up to the last dynamic one are flagged: a static shape carries no flags at all.
  EXPECT_EQ(parse_shape("f32[<=8,4]", "t").dynamic, (std::vector<bool>{true}));
  EXPECT_EQ(parse_shape("f32[8,<=4]", "t").dynamic, (std::vector<bool>{false, true}));
  EXPECT_TRUE(parse_shape("f32[8,4]", "t").dynamic.empty());
  EXPECT_EQ(parse_shape("f32[<=8,4]", "t").to_string(), "f32[<=8,4]");
  EXPECT_EQ(dyn.element_count(), 0u);
  EXPECT_EQ(find(e, "dyn").attribute("custom_call_target")->value, "\"PadToStatic\"");
}

TEST(HloParser, EveryPrimitiveTypeAndToken) {
  const Module m = load("all_types.hlo");
  const Computation& e = m.entry_computation();
  ASSERT_EQ(e.parameters.size(), 28u);
  for (std::size_t n = 0; n < 28; ++n)
    EXPECT_EQ(static_cast<std::size_t>(e.instructions[e.parameters[n]].shape.type), n) << n;
  EXPECT_EQ(find(e, "tok").shape.type, PrimitiveType::Token);
  EXPECT_FALSE(find(e, "tok").shape.is_array());
  EXPECT_EQ(find(e, "tok").shape.to_string(), "token[]");
}

TEST(HloParser, HeaderAttributesAliasesAndDonation) {
  const Module m = load("io_alias.hlo");
  EXPECT_EQ(m.name, "jit_train_step");
  ASSERT_EQ(m.input_output_alias.size(), 2u);
  EXPECT_EQ(m.input_output_alias[1].output_index, (std::vector<std::int64_t>{1}));
  EXPECT_EQ(m.input_output_alias[1].parameter_number, 1);
  EXPECT_TRUE(m.input_output_alias[1].parameter_index.empty());
  EXPECT_EQ(m.input_output_alias[1].kind, "may-alias");
  ASSERT_EQ(m.attributes.size(), 2u);
  EXPECT_EQ(m.attributes[0].name, "input_output_alias");
  EXPECT_EQ(m.attributes[0].value, "{ {0}: (0, {}, may-alias), {1}: (1, {}, may-alias) }");
  EXPECT_FALSE(m.is_scheduled);
  const Instruction& grad = find(m.entry_computation(), "grad");
  EXPECT_EQ(m.metadata_of(grad).op_name, "jit(train_step)/jit(main)/transpose(jvp(dot_general))");
  EXPECT_EQ(m.metadata_of(grad).source_file, "train.py");
  EXPECT_EQ(m.metadata_of(grad).source_line, 21);
  EXPECT_EQ(grad.attribute("lhs_contracting_dims")->value, "{0}");
  EXPECT_EQ(m.literal(find(m.entry_computation(), "decay")), "0.9");
}

TEST(HloParser, MultiLineInstructionsCommentsUnknownAttributesKept) {
  const Module m = load("metadata_multiline.hlo");
  ASSERT_EQ(m.attributes.size(), 3u);
  EXPECT_EQ(m.attributes[2].name, "some_future_attribute");
  EXPECT_EQ(m.attributes[2].value, "{a=1, b={2,3}}");
  EXPECT_EQ(m.attributes[2].pos.line, 7u);
  EXPECT_EQ(m.attributes[2].pos.col, 3u);
  const Computation& e = m.entry_computation();
  EXPECT_EQ(e.name, "main.9");
  ASSERT_EQ(e.instructions.size(), 3u);
  const Instruction& x = e.instructions[0];
  EXPECT_EQ(x.pos.line, 10u);
  EXPECT_EQ(x.pos.col, 19u);
  EXPECT_EQ(x.attribute("sharding")->value, "{replicated}");
  const Instruction& y = e.instructions[1];
  EXPECT_EQ(y.opcode, Opcode::Sine);
  EXPECT_EQ(y.operands, (std::vector<std::size_t>{0}));
  EXPECT_EQ(m.metadata_of(y).op_name, "jit(g)/jit(main)/sin");
  EXPECT_EQ(m.metadata_of(y).source_file, "/tmp/g.py");
  EXPECT_EQ(m.metadata_of(y).source_line, 4);
  EXPECT_EQ(y.attribute("frontend_attributes")->value, R"({_xla_stream_annotation="1",_scheduling_group_id="0"})");
  // Reports get one line, whitespace collapsed.
  EXPECT_EQ(m.instruction_text(y).find('\n'), std::string::npos);
  EXPECT_EQ(m.instruction_text(y).rfind("y = f32[8,16]{1,0} sine( x /* its operand */ ), metadata=", 0), 0u);
  const Instruction& z = e.instructions[2];
  EXPECT_TRUE(z.is_root);
  EXPECT_EQ(z.operands, (std::vector<std::size_t>{0, 1}));
  EXPECT_EQ(z.attribute("backend_config")->value,
            R"({"outer_dimension_partitions":["2"],"used_scoped_memory_configs":[]})");
}

TEST(HloParser, CollectivesShardingAndPartitions) {
  const Module m = load("collectives.hlo");
  EXPECT_EQ(m.num_partitions, 2);
  EXPECT_EQ(m.replica_count, 1);
  const Computation& e = m.entry_computation();
  for (const char* name : {"all-reduce.1", "all-gather.2", "reduce-scatter.3", "all-to-all.4", "collective-permute.5",
                           "all-reduce-start.6", "all-reduce-done.7", "all-gather-start.8", "all-gather-done.9",
                           "collective-permute-start.10", "collective-permute-done.11"}) {
    const std::string_view n = name;
    const Instruction& i = find(e, n);
    EXPECT_EQ(opcode_name(i.opcode), n.substr(0, n.find('.'))) << n;
  }
  EXPECT_EQ(find(e, "all-gather.2").attribute("replica_groups")->value, "[1,2]<=[2]");
  EXPECT_EQ(find(e, "collective-permute.5").attribute("source_target_pairs")->value, "{{0,1},{1,0}}");
  EXPECT_EQ(m.computations[find(e, "reduce-scatter.3").called.at(0)].name, "sum.f32");
  EXPECT_EQ(find(e, "act").attribute("sharding")->value, "{devices=[2,1]<=[2]}");
  EXPECT_EQ(find(e, "collective-permute-start.10").shape.elements.size(), 4u);
  EXPECT_EQ(e.instructions[e.root].attribute("sharding")->value, "{{replicated}, {devices=[2,1]<=[2]}}");
  EXPECT_EQ(m.attributes[2].name, "allow_spmd_sharding_propagation_to_output");
}

TEST(HloParser, InPlaceUpdateAndShippedExamples) {
  const Module d = load("dus_inplace.hlo");
  const Instruction& u = find(d.entry_computation(), "updated");
  EXPECT_EQ(u.opcode, Opcode::DynamicUpdateSlice);
  EXPECT_EQ(u.operands.size(), 4u);
  const Module mlp = load("mlp3.hlo");
  EXPECT_EQ(mlp.entry_computation().parameters.size(), 7u);
  EXPECT_EQ(load("exponential.hlo").entry_computation().instructions.back().pos.line, 9u);
  const Module t = load("transformer_block.hlo");
  EXPECT_EQ(t.computations.size(), 3u);
  EXPECT_GT(t.instruction_count(), 100u);
}

TEST(HloParser, TeraElementTensorIsValid) {
  const Module m = load("huge_tensor.hlo");
  EXPECT_EQ(m.entry_computation().instructions[0].shape.element_count(), 1000000000000u);
}

TEST(HloShape, ToStringRoundTrips) {
  for (const char* text : {"f32[8,128]{1,0}", "bf16[8,256]{1,0:T(8,128)(2,1)}", "f32[]", "pred[3]",
                           "(f32[2]{0}, s32[])", "((), token[])", "bf16[8,256]{1,0:T(8,128)(2,1)S(1)}",
                           "s32[]{:T(128)}", "f32[<=8,?,4]{2,1,0}", "u4[16]{0:T(1024)(128)(2,1)E(4)}",
                           "f8e4m3fn[1000000,1000000]"}) {
    const std::string module = std::string("HloModule r\nENTRY e {\n  ROOT p = ") + text + " parameter(0)\n}\n";
    const Module m = parse_hlo(module, "r.hlo");
    const Shape& s = m.entry_computation().instructions[0].shape;
    EXPECT_EQ(s.to_string(), text);
    const std::string again = "HloModule r\nENTRY e {\n  ROOT p = " + s.to_string() + " parameter(0)\n}\n";
    EXPECT_EQ(parse_hlo(again, "r.hlo").entry_computation().instructions[0].shape.to_string(), text);
  }
}

// Every error kind: the bad module's exact FILE:LINE:COL and cause.
TEST(HloParserErrors, EachBadModuleAtItsLineAndColumn) {
  const std::filesystem::path bad = kData / "bad";
  const auto expect = [&](const char* file, const std::string& where_and_cause) {
    EXPECT_EQ(error_of(bad / file), (bad / file).string() + ":" + where_and_cause) << file;
  };
  expect("truncated.hlo", "6:1: unexpected end of file: the module is truncated (expected '}' closing computation 'main')");
  expect("unknown_opcode.hlo", "5:23: unknown opcode 'exp'");
  expect("undefined_operand.hlo", "5:31: undefined operand 'z' in computation 'main'");
  expect("duplicate_name.hlo", "6:8: duplicate name 'y' (first defined at line 5)");
  expect("wrong_operand_count.hlo", "5:23: 'add' takes 2 operands, not 1");
  expect("malformed_shape.hlo", "5:19: malformed shape: expected a dimension, found ']'");
  expect("use_before_definition.hlo", "5:26: 'z' is used before its definition (line 6)");
  expect("overflow_elements.hlo", "5:13: shape f32[4294967296,4294967296]{1,0}: its element count overflows 64 bits");
  expect("overflow_bytes.hlo", "5:13: shape c128[1152921504606846976]{0}: its byte size overflows 64 bits");
  expect("binary_garbage.hlo", "5:26: byte 0x00 is not text: the file is binary, not HLO text");
  expect("unknown_computation.hlo", "5:42: undefined computation 'nowhere'");
}

TEST(HloParserErrors, MoreMalformedText) {
  EXPECT_EQ(parse_error(""), "m.hlo:1:1: empty file: expected 'HloModule'");
  EXPECT_EQ(parse_error("HloModule m"), "m.hlo:1:12: unexpected end of file: the module is truncated (expected a computation)");
  EXPECT_EQ(parse_error("HloModule m\nENTRY e {\n  ROOT p = f32[2]{0} parameter(0)\n  /* open"),
            "m.hlo:4:3: unterminated /* comment: the module is truncated");
  EXPECT_EQ(parse_error("HloModule m\nENTRY e {\n  ROOT p = f32[2] custom-call(), backend_config={\"a\":[1}\n}\n"),
            "m.hlo:3:56: '}' closes the '[' opened at 3:54");
  EXPECT_EQ(parse_error("HloModule m\nENTRY e {\n  ROOT p = f33[2] parameter(0)\n}\n"),
            "m.hlo:3:12: malformed shape: unknown element type 'f33'");
  EXPECT_EQ(parse_error("HloModule m\nENTRY e {\n  ROOT p = f32[2]{1,0} parameter(0)\n}\n"),
            "m.hlo:3:19: malformed layout: dimension 1 is not a dimension of a rank-1 shape");
  EXPECT_EQ(parse_error("HloModule m\nENTRY e {\n  ROOT p = f32[99999999999999999999] parameter(0)\n}\n"),
            "m.hlo:3:16: a dimension does not fit 64 bits");
  EXPECT_EQ(parse_error("HloModule m\nENTRY e {\n  ROOT p = f32[2] parameter(1)\n}\n"),
            "m.hlo:3:8: parameter(1) in computation 'e' of 1 instructions: parameters are numbered from 0");
  EXPECT_EQ(parse_error("HloModule m\nENTRY e {\n  p = f32[2] parameter(1)\n  ROOT q = f32[2] negate(p)\n}\n"),
            "m.hlo:2:1: computation 'e' has no parameter(0)");
  EXPECT_EQ(parse_error("HloModule m\ne {\n  ROOT p = f32[2] parameter(0)\n}\ne {\n  ROOT q = f32[2] parameter(0)\n}\n"),
            "m.hlo:5:1: duplicate computation name 'e' (first at line 2)");
  EXPECT_EQ(parse_error("HloModule m, num_partitions=x\nENTRY e {\n  ROOT p = f32[2] parameter(0)\n}\n"),
            "m.hlo:1:29: expected an integer for num_partitions");
  EXPECT_EQ(parse_error("HloModule m\nENTRY e {\n  ROOT p = f32[2] parameter(0), sharding=\n}\n"),
            "m.hlo:4:1: expected the value of attribute 'sharding'");
  EXPECT_EQ(parse_error("HloModule m\nENTRY e {\n  ROOT p = f32[2] parameter(0)\n}\n\xff\n"),
            "m.hlo:5:1: byte 0xff is not text: the file is binary, not HLO text");
  EXPECT_EQ(parse_error("HloModule m\nENTRY e {\n  ROOT p = " + std::string(65, '(') + " parameter(0)\n}\n"),
            "m.hlo:3:76: malformed shape: tuples nested more than 64 deep");
  // UTF-8 in a string is text.
  EXPECT_EQ(parse_error("HloModule m\nENTRY e {\n  ROOT p = f32[2] parameter(0), metadata={op_name=\"\xc3\xa9\"}\n}\n"), "");
}

TEST(HloParserErrors, FileOverTheSizeLimitIsRefusedUnread) {
  const std::filesystem::path path = std::filesystem::temp_directory_path() /
                                     ("tpuemu_hlo_big_" + std::to_string(::getpid()) + ".hlo");
  { std::ofstream out(path, std::ios::binary); }
  std::filesystem::resize_file(path, kHloInput.max_bytes + 1);  // sparse: no disk used
  const std::string message = error_of(path);
  std::filesystem::remove(path);
  EXPECT_EQ(message, path.string() + ": larger than the 128 MiB limit of a module in HLO text");
}

}  // namespace
}  // namespace tpuemu::hlo
