// SPDX-License-Identifier: Apache-2.0
// Liveness, schedules and sizes (tpuemu/hlo/liveness.h): the hand rule on the straight-line test
// modules, XLA's aliasing rules on small modules, the schedulers' orders and the tiled sizes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "tpuemu/base/error.h"
#include "tpuemu/hlo/buffers.h"
#include "tpuemu/hlo/hlo_parser.h"
#include "tpuemu/hlo/liveness.h"

namespace tpuemu::hlo {
namespace {

const std::filesystem::path kHloDir = std::filesystem::path(TPUEMU_TEST_DATA_DIR) / "hlo";

std::vector<std::filesystem::path> test_modules() {
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(kHloDir))
    if (e.is_regular_file() && e.path().extension() == ".hlo") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}

Module parse(const std::string& text) { return parse_hlo(text, "test.hlo"); }

std::uint64_t text_peak_unpadded(const Module& m, const SizeOptions& sizes = {}) {
  return peak_live_unpadded_bytes(live_buffers(m, text_schedule(m), sizes));
}

const LiveBuffer* find_buffer(const BufferSet& set, const std::string& name) {
  for (const LiveBuffer& b : set.buffers)
    if (b.name == name) return &b;
  return nullptr;
}

// ---------------------------------------------------------------------------------------------
// The hand rule, implemented apart: buffers defined by every instruction except parameter, tuple,
// get-tuple-element and bitcast; live from the instruction through its last use in textual order
// (a use through a tuple or a bitcast is a use of the buffers it holds; get-tuple-element uses
// only its element); the ROOT's buffers to the end, and a result that is an ENTRY parameter, a
// constant or a buffer an earlier result holds is one more buffer, its copy, at the last position;
// ENTRY parameters for the whole program; unpadded sizes.
// ---------------------------------------------------------------------------------------------
struct HandLeaf {
  std::uint64_t bytes = 0;
  std::size_t def = 0;  // textual index
  std::size_t last = 0;
  bool whole = false;
  bool constant = false;
};

void flat_arrays(const Shape& s, std::vector<const Shape*>& out) {
  if (s.is_tuple())
    for (const Shape& e : s.elements) flat_arrays(e, out);
  else
    out.push_back(&s);
}

std::uint64_t hand_bytes(const Shape& s) {
  if (!s.is_array()) return 0;
  return (s.element_count() * bit_width(s.type) + 7) / 8;  // an unbounded '?' dim counts 0
}

std::uint64_t hand_rule_peak(const Module& m) {
  const Computation& c = m.entry_computation();
  const std::size_t n = c.instructions.size();
  std::vector<HandLeaf> leaves;
  std::vector<std::vector<std::size_t>> holds(n);  // per instruction: the leaves its value holds
  for (std::size_t i = 0; i < n; ++i) {
    const Instruction& ins = c.instructions[i];
    std::vector<const Shape*> arrays;
    flat_arrays(ins.shape, arrays);
    switch (ins.opcode) {
      case Opcode::Tuple:
        for (const std::size_t o : ins.operands) holds[i].insert(holds[i].end(), holds[o].begin(), holds[o].end());
        break;
      case Opcode::Bitcast:
        holds[i] = holds[ins.operands[0]];
        break;
      case Opcode::GetTupleElement: {
        const Shape& t = c.instructions[ins.operands[0]].shape;
        std::size_t first = 0;
        for (std::int64_t e = 0; e < ins.tuple_index; ++e) {
          std::vector<const Shape*> skip;
          flat_arrays(t.elements[e], skip);
          first += skip.size();
        }
        holds[i].assign(holds[ins.operands[0]].begin() + first, holds[ins.operands[0]].begin() + first + arrays.size());
        break;
      }
      default:
        for (const Shape* a : arrays) {
          holds[i].push_back(leaves.size());
          leaves.push_back({hand_bytes(*a), i, i, ins.opcode == Opcode::Parameter, ins.opcode == Opcode::Constant});
        }
    }
    if (ins.opcode != Opcode::GetTupleElement)
      for (const std::size_t o : ins.operands)
        for (const std::size_t l : holds[o]) leaves[l].last = std::max(leaves[l].last, i);
    for (const std::size_t l : holds[i]) leaves[l].last = std::max(leaves[l].last, i);
  }
  std::vector<std::size_t> results;
  for (const std::size_t l : holds[c.root]) {
    leaves[l].last = n - 1;
    const bool repeated = std::find(results.begin(), results.end(), l) != results.end();
    if (leaves[l].whole || leaves[l].constant || repeated) leaves.push_back({leaves[l].bytes, n - 1, n - 1});
    results.push_back(l);
  }
  std::uint64_t peak = 0;
  for (std::size_t t = 0; t < n; ++t) {
    std::uint64_t live = 0;
    for (const HandLeaf& l : leaves)
      if (l.whole || (l.def <= t && t <= l.last)) live += l.bytes;
    peak = std::max(peak, live);
  }
  return peak;
}

bool hand_rule_applies(const Module& m) {
  // The rule has no while/call/conditional; in-place updates and donation share buffers it counts
  // twice, so the modules that exercise them are compared against their own expectations below.
  if (!m.input_output_alias.empty()) return false;
  for (const Computation& c : m.computations)
    for (const Instruction& i : c.instructions)
      if (i.opcode == Opcode::While || i.opcode == Opcode::Call || i.opcode == Opcode::Conditional ||
          i.opcode == Opcode::DynamicUpdateSlice)
        return false;
  return true;
}

TEST(HloLiveness, HandNumbersOfTheStraightLineModules) {
  EXPECT_EQ(text_peak_unpadded(read_hlo_file(kHloDir / "straight_line_a.hlo")), 20480u);
  EXPECT_EQ(text_peak_unpadded(read_hlo_file(kHloDir / "straight_line_b.hlo")), 16640u);
}

TEST(HloLiveness, TextPeakUnpaddedIsTheHandRuleOnEveryStraightLineModule) {
  int compared = 0;
  for (const auto& path : test_modules()) {
    const Module m = read_hlo_file(path);
    if (!hand_rule_applies(m)) continue;
    SCOPED_TRACE(path.filename().string());
    EXPECT_EQ(text_peak_unpadded(m), hand_rule_peak(m));
    // Padding only adds.
    const BufferSet set = live_buffers(m, text_schedule(m), {});
    EXPECT_GE(peak_live_bytes(set), peak_live_unpadded_bytes(set));
    ++compared;
  }
  EXPECT_GE(compared, 6);
}

TEST(HloLiveness, TuplesForwardTheirElementsAndGteUsesOnlyItsOwn) {
  const Module m = parse(R"(HloModule t
ENTRY main {
  p = f32[8,128]{1,0} parameter(0)
  a = f32[8,128]{1,0} negate(p)
  b = f32[8,128]{1,0} abs(p)
  t = (f32[8,128]{1,0}, f32[8,128]{1,0}) tuple(a, b)
  g = f32[8,128]{1,0} get-tuple-element(t), index=0
  c = f32[8,128]{1,0} copy(g)
  d = f32[8,128]{1,0} copy(c)
  ROOT e = f32[8,128]{1,0} copy(d)
})");
  const BufferSet set = live_buffers(m, text_schedule(m), {});
  const LiveBuffer* a = find_buffer(set, "a");
  const LiveBuffer* b = find_buffer(set, "b");
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->end, 5);  // read by c through g
  EXPECT_EQ(b->end, 3);  // its last reader is the tuple; g takes element 0 only
  EXPECT_EQ(find_buffer(set, "g"), nullptr);
  const LiveBuffer* table = find_buffer(set, "t (index table)");
  ASSERT_TRUE(table);
  EXPECT_EQ(table->bytes, 16u);  // two 8-byte pointers, counted as storage only
  EXPECT_EQ(table->unpadded, 0u);
  EXPECT_EQ(find_buffer(set, "e")->kind, BufferKind::Output);
  EXPECT_EQ(find_buffer(set, "p")->kind, BufferKind::Parameter);
  EXPECT_TRUE(find_buffer(set, "p")->whole_program);
}

TEST(HloLiveness, WhileStateIsOneBufferAndTheBodyNestsInTheLoopsTime) {
  const Module m = read_hlo_file(kHloDir / "while_loop.hlo");
  const BufferSet set = live_buffers(m, text_schedule(m), {});
  // Positions: body (9), cond (4) spliced before the while: ENTRY x 0, w.1 1, zero 2, init 3,
  // cond 4..7, body 8..16, loop 17, out 18. XLA flattens the condition first.
  EXPECT_EQ(set.positions, 19);
  // The accumulator: x is a read-only argument, so the loop state starts as a copy of it; the
  // body's tanh result is that same buffer (loop-carried), live across the whole loop.
  const LiveBuffer* acc = find_buffer(set, "x{1} (copy)");
  if (acc == nullptr) acc = find_buffer(set, "x (copy)");
  ASSERT_TRUE(acc) << "no copy of the read-only init";
  EXPECT_EQ(acc->start, 4);
  EXPECT_EQ(acc->end, 18);
  EXPECT_EQ(acc->kind, BufferKind::Output);
  EXPECT_EQ(find_buffer(set, "act"), nullptr);  // joined into the state buffer
  // The body's temporary lives inside the body's window.
  const LiveBuffer* prod = find_buffer(set, "prod");
  ASSERT_TRUE(prod);
  EXPECT_GE(prod->start, 8);
  EXPECT_LE(prod->end, 16);
  // The counter's state: a copy of the constant zero, joined with next_i.
  EXPECT_EQ(find_buffer(set, "next_i"), nullptr);
}

TEST(HloLiveness, InPlaceDynamicUpdateSliceOnlyWhenOperandDies) {
  const Module m = read_hlo_file(kHloDir / "dus_inplace.hlo");
  const BufferSet set = live_buffers(m, text_schedule(m), {});
  EXPECT_EQ(find_buffer(set, "updated"), nullptr);  // written into scaled's buffer
  const LiveBuffer* scaled = find_buffer(set, "scaled");
  ASSERT_TRUE(scaled);
  EXPECT_EQ(scaled->kind, BufferKind::Output);  // it is the ROOT's element 0
  EXPECT_EQ(scaled->end, set.positions - 1);
  EXPECT_NE(find_buffer(set, "updated.2"), nullptr);  // copied stays live: a new buffer
}

TEST(HloLiveness, DonatedArgumentIsTheOutputBuffer) {
  const Module m = parse(R"(HloModule d, input_output_alias={ {0}: (0, {}, may-alias) }
ENTRY main {
  p = f32[8,128]{1,0} parameter(0)
  q = f32[8,128]{1,0} parameter(1)
  n = f32[8,128]{1,0} add(p, q)
  s = f32[8,128]{1,0} multiply(n, q)
  ROOT t = (f32[8,128]{1,0}, f32[8,128]{1,0}) tuple(s, n)
})");
  const BufferSet set = live_buffers(m, text_schedule(m), {});
  EXPECT_EQ(find_buffer(set, "s"), nullptr);
  const LiveBuffer* p = find_buffer(set, "p");
  ASSERT_TRUE(p);
  EXPECT_TRUE(p->shares_argument);
  EXPECT_EQ(p->kind, BufferKind::Output);
  EXPECT_TRUE(p->whole_program);
  EXPECT_FALSE(find_buffer(set, "q")->shares_argument);
  // p/s 4096 + q 4096 + n 4096 + the table (16, padded only): the donation saved one buffer.
  EXPECT_EQ(peak_live_unpadded_bytes(set), 3u * 4096);
}

TEST(HloLiveness, CallAndConditionalNestTheirTemporaries) {
  const Module m = parse(R"(HloModule c
sq {
  a = f32[8,128]{1,0} parameter(0)
  big = f32[64,128]{1,0} broadcast(a), dimensions={}
  ROOT r = f32[8,128]{1,0} multiply(a, a)
}
neg {
  b = f32[8,128]{1,0} parameter(0)
  ROOT r.1 = f32[8,128]{1,0} negate(b)
}
ENTRY main {
  k = s32[] parameter(0)
  x = f32[8,128]{1,0} parameter(1)
  y = f32[8,128]{1,0} call(x), to_apply=sq
  ROOT z = f32[8,128]{1,0} conditional(k, y, y), branch_computations={sq, neg}
})");
  const BufferSet set = live_buffers(m, text_schedule(m), {});
  // k 0, x 1, sq(a, big, r) 2..4, y 5, sq 6..8, neg 9..10, z 11.
  EXPECT_EQ(set.positions, 12);
  EXPECT_EQ(find_buffer(set, "y"), nullptr);  // call's output is the callee's root
  const LiveBuffer* big = find_buffer(set, "big");
  ASSERT_TRUE(big);
  EXPECT_EQ(big->start, 3);
  EXPECT_EQ(big->end, 3);
  // The conditional's output: both branch roots, one buffer to the end.
  std::size_t outputs = 0;
  for (const LiveBuffer& b : set.buffers)
    if (b.kind == BufferKind::Output) {
      ++outputs;
      EXPECT_EQ(b.end, 11);
      EXPECT_LE(b.start, 8);
    }
  EXPECT_EQ(outputs, 1u);
}

TEST(HloLiveness, DescriptionsAreMadeFromTheModuleWhenAsked) {
  const Module m = parse(R"(HloModule t
ENTRY main {
  p = bf16[16,256]{1,0} parameter(0)
  c = f32[8,128]{1,0} constant({...})
  n = f32[8,128]{1,0} negate(c), metadata={op_name="jit(f)/neg" source_file="f.py" source_line=7}
  pair = (f32[8,128]{1,0}, s32[4]{0}) custom-call(n), custom_call_target="x"
  g = f32[8,128]{1,0} get-tuple-element(pair), index=0
  ROOT out = (f32[8,128]{1,0}, bf16[16,256]{1,0}) tuple(g, p)
})");
  const BufferSet set = live_buffers(m, text_schedule(m), {});
  const LiveBuffer* n = find_buffer(set, "n");
  ASSERT_TRUE(n);
  const BufferDescription d = set.describe(*n);
  EXPECT_EQ(d.shape, "f32[8,128]{1,0:T(8,128)}");
  EXPECT_EQ(d.op_name, "jit(f)/neg");
  EXPECT_EQ(d.source, "f.py:7");
  EXPECT_EQ(d.computation, "main");
  EXPECT_NE(d.instruction.find("negate("), std::string::npos) << d.instruction;
  // A tuple element: the leaf's shape, the instruction's text; the index table: the tuple's shape.
  const LiveBuffer* element = find_buffer(set, "pair{1}");
  ASSERT_TRUE(element);
  EXPECT_EQ(element->origin.leaf, 1);
  EXPECT_EQ(set.describe(*element).shape, "s32[4]{0:T(256)}");
  EXPECT_TRUE(set.describe(*element).op_name.empty());
  EXPECT_NE(set.describe(*element).instruction.find("custom-call(n)"), std::string::npos);
  const LiveBuffer* table = find_buffer(set, "pair (index table)");
  ASSERT_TRUE(table);
  EXPECT_EQ(table->origin.leaf, BufferOrigin::kIndexTableLeaf);
  EXPECT_EQ(set.describe(*table).shape, "(f32[8,128]{1,0}, s32[4]{0})");
  // A copy keeps its value's origin and counts the copies: p returned as is is copied out.
  const LiveBuffer* copied = find_buffer(set, "p (copy)");
  ASSERT_TRUE(copied);
  EXPECT_EQ(copied->origin.copies, 1u);
  EXPECT_EQ(set.describe(*copied).shape, "bf16[16,256]{1,0:T(16,128)(2,1)}");
  EXPECT_EQ(find_buffer(set, "p")->origin.copies, 0u);
  // A set made by hand, or a buffer copied out of its set, has no description.
  const BufferSet hand{.buffers = {LiveBuffer{.name = "x", .bytes = 8}}, .positions = 1};
  EXPECT_TRUE(hand.describe(hand.buffers[0]).shape.empty());
  EXPECT_EQ(hand.buffers[0].origin.computation, BufferOrigin::kNone);
}

TEST(HloLiveness, BadSchedulesAndRecursionAreErrors) {
  const Module m = parse(R"(HloModule s
ENTRY main {
  p = f32[4]{0} parameter(0)
  ROOT n = f32[4]{0} negate(p)
})");
  Schedule s = text_schedule(m);
  std::swap(s.order[0][0], s.order[0][1]);
  EXPECT_THROW(live_buffers(m, s, {}), Error);
  s.order[0] = {0};
  EXPECT_THROW(live_buffers(m, s, {}), Error);
  EXPECT_THROW(choose_schedule(m, "fastest", {}), Error);
}

// ---------------------------------------------------------------------------------------------
// Schedules
// ---------------------------------------------------------------------------------------------
void expect_topological(const Module& m, const Schedule& s) {
  ASSERT_EQ(s.order.size(), m.computations.size()) << s.name;
  for (std::size_t c = 0; c < m.computations.size(); ++c) {
    const Computation& comp = m.computations[c];
    ASSERT_EQ(s.order[c].size(), comp.instructions.size()) << s.name << " " << comp.name;
    std::vector<bool> done(comp.instructions.size(), false);
    for (const std::size_t i : s.order[c]) {
      ASSERT_LT(i, done.size());
      EXPECT_FALSE(done[i]) << s.name << " lists " << comp.instructions[i].name << " twice";
      for (const std::size_t o : comp.instructions[i].operands)
        EXPECT_TRUE(done[o]) << s.name << ": " << comp.instructions[i].name << " before its operand";
      done[i] = true;
    }
  }
}

TEST(HloSchedules, EveryScheduleIsTopologicalAndBestIsNoWorseThanText) {
  int modules = 0;
  for (const auto& path : test_modules()) {
    SCOPED_TRACE(path.filename().string());
    const Module m = read_hlo_file(path);
    expect_topological(m, text_schedule(m));
    expect_topological(m, dfs_schedule(m));
    expect_topological(m, list_schedule(m));
    const ScheduleChoice best = choose_schedule(m, "best", {});
    ASSERT_EQ(best.peaks.size(), 3u);
    EXPECT_EQ(best.peaks[0].name, "text");
    EXPECT_EQ(best.peaks[1].name, "dfs");
    EXPECT_EQ(best.peaks[2].name, "list");
    const std::uint64_t used = peak_live_bytes(best.buffers);
    EXPECT_LE(used, best.peaks[0].peak_live_bytes);
    for (const auto& p : best.peaks) EXPECT_LE(used, p.peak_live_bytes);
    ++modules;
  }
  EXPECT_GE(modules, 10);
}

TEST(HloSchedules, ListAndDfsFreeEarlyWhereTextDoesNot) {
  // Text order makes both big temporaries first and reduces them late; a memory-aware order
  // reduces each right after making it.
  const Module m = parse(R"(HloModule late
ENTRY main {
  p = f32[8,128]{1,0} parameter(0)
  big1 = f32[1024,128]{1,0} broadcast(p), dimensions={}
  big2 = f32[1024,128]{1,0} broadcast(p), dimensions={}
  s1 = f32[8,128]{1,0} slice(big1), slice={[0:8], [0:128]}
  s2 = f32[8,128]{1,0} slice(big2), slice={[0:8], [0:128]}
  ROOT r = f32[8,128]{1,0} add(s1, s2)
})");
  const ScheduleChoice c = choose_schedule(m, "", {});
  EXPECT_EQ(c.peaks[0].peak_live_bytes_unpadded, 2u * 524288 + 2 * 4096);
  EXPECT_EQ(c.peaks[1].peak_live_bytes_unpadded, 524288u + 3 * 4096);
  EXPECT_EQ(c.peaks[2].peak_live_bytes_unpadded, 524288u + 3 * 4096);
  EXPECT_EQ(c.name, "dfs");  // not scheduled: best, ties to the earlier of dfs and list
  Module scheduled = m;
  scheduled.is_scheduled = true;
  EXPECT_EQ(choose_schedule(scheduled, "", {}).name, "text");
}

// ---------------------------------------------------------------------------------------------
// Sizes
// ---------------------------------------------------------------------------------------------
Shape array(PrimitiveType t, std::vector<std::int64_t> dims) {
  Shape s;
  s.type = t;
  s.dims = std::move(dims);
  s.dynamic.assign(s.dims.size(), false);
  return s;
}

TEST(HloSizes, TpuTilesByElementWidth) {
  const SizeOptions tpu;
  // f32 (8,128); 16-bit 16 rows; 8-bit and pred 32 rows; 4-bit 64 rows: a [3,5] array fills one
  // 4 KiB tile whatever its type.
  for (const auto t : {PrimitiveType::F32, PrimitiveType::BF16, PrimitiveType::S8, PrimitiveType::Pred,
                       PrimitiveType::S4}) {
    const ShapeBytes b = shape_bytes(array(t, {3, 5}), tpu);
    EXPECT_EQ(b.padded, 4096u) << type_name(t);
  }
  EXPECT_EQ(shape_bytes(array(PrimitiveType::F32, {3, 5}), tpu).unpadded, 60u);
  EXPECT_EQ(shape_bytes(array(PrimitiveType::S4, {3, 5}), tpu).unpadded, 8u);  // 15 nibbles
  EXPECT_EQ(shape_bytes(array(PrimitiveType::BF16, {3, 5}), tpu).layout, "{1,0:T(16,128)(2,1)}");
  EXPECT_EQ(shape_bytes(array(PrimitiveType::F32, {3, 5}), tpu).layout, "{1,0:T(8,128)}");
  // bf16[17,129]: rows to 32, columns to 256.
  EXPECT_EQ(shape_bytes(array(PrimitiveType::BF16, {17, 129}), tpu).padded, 32u * 256 * 2);
  // Leading dims multiply; 64-bit elements take 8 bytes in (8,128) tiles.
  EXPECT_EQ(shape_bytes(array(PrimitiveType::F64, {2, 3, 5}), tpu).padded, 2u * 8 * 128 * 8);
  // Rank 1 and scalars: 8*lanes-byte granules.
  EXPECT_EQ(shape_bytes(array(PrimitiveType::F32, {5}), tpu).padded, 1024u);
  EXPECT_EQ(shape_bytes(array(PrimitiveType::F32, {257}), tpu).padded, 2048u);
  EXPECT_EQ(shape_bytes(array(PrimitiveType::F32, {}), tpu).padded, 1024u);
  EXPECT_EQ(shape_bytes(array(PrimitiveType::F32, {}), tpu).unpadded, 4u);
  // The lane count comes from the preset.
  EXPECT_EQ(shape_bytes(array(PrimitiveType::F32, {8, 128}), {true, 256}).padded, 8192u);
  EXPECT_EQ(shape_bytes(array(PrimitiveType::F32, {8, 128}), {true, 8}).padded, 4096u);
  // Untiled: dense, sub-byte packed.
  EXPECT_EQ(shape_bytes(array(PrimitiveType::S4, {3}), {false, 128}).padded, 2u);
  EXPECT_EQ(shape_bytes(array(PrimitiveType::F32, {3, 5}), {false, 128}).padded, 60u);
  // Tokens and tuples: a tuple is its index table, stored, not data.
  EXPECT_EQ(shape_bytes(array(PrimitiveType::Token, {}), tpu).padded, 0u);
}

TEST(HloSizes, LayoutOrderAndTheModulesOwnTiles) {
  Shape s = array(PrimitiveType::F32, {5, 300});
  s.layout = std::make_shared<const Layout>(Layout{{0, 1}, {}, 0, "0,1"});  // dim 0 is minor: physical [300, 5]
  EXPECT_EQ(shape_bytes(s, {}).padded, 304u * 128 * 4);
  Shape t = array(PrimitiveType::BF16, {3, 5});
  t.layout = std::make_shared<const Layout>(Layout{{1, 0}, {{2, 128}, {2, 1}}, 1, "1,0:T(2,128)(2,1)S(1)"});
  const ShapeBytes b = shape_bytes(t, {});
  EXPECT_EQ(b.padded, 4u * 128 * 2);  // rows to 4 (2 tiles of 2), columns to 128
  EXPECT_EQ(b.layout, "{1,0:T(2,128)(2,1)S(1)}");
  EXPECT_EQ(shape_bytes(t, {false, 128}).padded, 30u);  // --untiled ignores the module's tiles
}

TEST(HloSizes, HugeTensorsNeverWrap) {
  // 10^12 elements: exact in 64 bits.
  const Shape tera = array(PrimitiveType::F32, {1000000, 1000000});
  EXPECT_EQ(shape_bytes(tera, {}).unpadded, 4000000000000u);
  EXPECT_EQ(shape_bytes(tera, {}).padded, std::uint64_t{1000000} * 1000064 * 4);
  // 2^80 elements: saturated, never a small wrapped number.
  const Shape absurd = array(PrimitiveType::C128, {std::int64_t{1} << 40, std::int64_t{1} << 40});
  constexpr auto kMax = std::numeric_limits<std::uint64_t>::max();
  EXPECT_EQ(shape_bytes(absurd, {}).unpadded, kMax);
  EXPECT_EQ(shape_bytes(absurd, {}).padded, kMax);
  BufferSet set;
  set.positions = 1;
  set.buffers = {LiveBuffer{.bytes = kMax, .unpadded = kMax}, LiveBuffer{.bytes = kMax, .unpadded = 1}};
  EXPECT_EQ(peak_live_bytes(set), kMax);
  EXPECT_EQ(peak_live_unpadded_bytes(set), kMax);
  const Module huge = read_hlo_file(kHloDir / "huge_tensor.hlo");
  EXPECT_GE(text_peak_unpadded(huge), 4000000000000u);
}

TEST(HloSizes, BufferKindNames) {
  EXPECT_EQ(buffer_kind_name(BufferKind::Temp), "HLO temp");
  EXPECT_EQ(buffer_kind_name(BufferKind::Parameter), "parameter");
  EXPECT_EQ(buffer_kind_name(BufferKind::Output), "output");
  EXPECT_EQ(buffer_kind_name(BufferKind::Constant), "constant");
}

}  // namespace
}  // namespace tpuemu::hlo
