// SPDX-License-Identifier: Apache-2.0
// Live ranges (tpuemu/hlo/live_range.h) on small modules - a value from its definition through its
// last reader or holder, a ROOT value to its window's end, a buffer over its values' union, an
// ENTRY parameter's buffer over the whole program - and the one peak sweep (buffers.h).
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <ostream>
#include <string>
#include <vector>

#include "tpuemu/hlo/alias_analysis.h"
#include "tpuemu/hlo/buffers.h"
#include "tpuemu/hlo/hlo_parser.h"
#include "tpuemu/hlo/live_range.h"

namespace tpuemu::hlo {

void PrintTo(const LiveInterval& r, std::ostream* os) { *os << "[" << r.start << ", " << r.end << "]"; }

namespace {

Module parse(const std::string& text) { return parse_hlo(text, "test.hlo"); }

struct Ranges {
  Module module;
  AliasAnalysis alias;
  std::vector<LiveInterval> values;
  BufferLiveRanges buffers;

  explicit Ranges(const std::string& text)
      : module(parse(text)), alias(AliasAnalysis::run(module, text_schedule(module), {})),
        values(value_live_ranges(alias.dataflow())), buffers(buffer_live_ranges(alias, values)) {}

  // The value defined at the named instruction's first position (leaf 0, or its index table).
  ValueId value(const std::string& name, bool table = false) const {
    const Dataflow& flow = alias.dataflow();
    for (std::int64_t p = 0; p < flow.positions(); ++p) {
      if (module.computations[flow.computation_at(p)].instructions[flow.instruction_at(p)].name != name) continue;
      for (const ValueId v : flow.defined(p))
        if ((flow.value(v).leaf == kIndexTable) == table) return v;
    }
    ADD_FAILURE() << "no value defined by " << name;
    return 0;
  }
  LiveInterval range(const std::string& name, bool table = false) const { return values[value(name, table)]; }
  LiveInterval buffer(const std::string& name) const { return buffers.ranges[alias.buffer_of(value(name))]; }
};

TEST(HloLiveRange, ValuesLiveFromTheirDefinitionThroughTheirLastReader) {
  const Ranges r(R"(HloModule s
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
  EXPECT_EQ(r.range("p"), (LiveInterval{0, 2}));
  EXPECT_EQ(r.range("a"), (LiveInterval{1, 5}));  // held by g, which c reads
  EXPECT_EQ(r.range("b"), (LiveInterval{2, 3}));  // its last reader is the tuple: g takes element 0
  EXPECT_EQ(r.range("t", true), (LiveInterval{3, 4}));  // g reads the index table
  EXPECT_EQ(r.range("c"), (LiveInterval{5, 6}));
  EXPECT_EQ(r.range("e"), (LiveInterval{7, 7}));  // ENTRY's ROOT: to the last position
  // Buffers: the argument's lives for the whole program, the others as their one value.
  EXPECT_EQ(r.buffer("p"), (LiveInterval{0, 7}));
  EXPECT_TRUE(r.buffers.whole_program[r.alias.buffer_of(r.value("p"))]);
  EXPECT_EQ(r.buffer("a"), (LiveInterval{1, 5}));
  EXPECT_FALSE(r.buffers.whole_program[r.alias.buffer_of(r.value("a"))]);
}

TEST(HloLiveRange, RootValuesLiveToTheEndOfTheirWindowThenTheCallersReaders) {
  const Ranges r(R"(HloModule c
f {
  a = f32[4]{0} parameter(0)
  big = f32[64,4]{1,0} broadcast(a), dimensions={1}
  ROOT r = f32[4]{0} negate(a)
  extra = f32[4]{0} abs(a)
}
ENTRY main {
  x = f32[4]{0} parameter(0)
  y = f32[4]{0} call(x), to_apply=f
  z = f32[4]{0} negate(x)
  ROOT w = f32[4]{0} add(y, z)
  o = f32[4]{0} negate(x)
})");
  // x 0, f: a 1, big 2, r 3, extra 4; y 5, z 6, w 7, o 8.
  EXPECT_EQ(r.range("big"), (LiveInterval{2, 2}));
  EXPECT_EQ(r.range("extra"), (LiveInterval{4, 4}));
  EXPECT_EQ(r.range("r"), (LiveInterval{3, 7}));  // past extra to f's end, then to w through y
  EXPECT_EQ(r.range("w"), (LiveInterval{7, 8}));  // ENTRY's ROOT, scheduled before o
  EXPECT_EQ(r.range("o"), (LiveInterval{8, 8}));
}

TEST(HloLiveRange, ABranchRootNobodyHoldsLivesToItsBranchsEnd) {
  const Ranges r(R"(HloModule b
neg {
  a = f32[4]{0} parameter(0)
  ROOT n = f32[4]{0} negate(a)
}
late {
  b = f32[4]{0} parameter(0)
  ROOT m = f32[4]{0} abs(b)
  after = f32[4]{0} exponential(b)
}
ENTRY main {
  k = s32[] parameter(0)
  x = f32[4]{0} parameter(1)
  ROOT c = f32[4]{0} conditional(k, x, x), branch_computations={neg, late}
})");
  // k 0, x 1, neg 2..3, late: b 4, m 5, after 6; c 7. The conditional holds the first branch's
  // value; m joins its buffer but is held by nothing after `after`.
  EXPECT_EQ(r.range("m"), (LiveInterval{5, 6}));
  EXPECT_EQ(r.range("n"), (LiveInterval{3, 7}));
  EXPECT_EQ(r.buffer("m"), (LiveInterval{3, 7}));
}

TEST(HloLiveRange, LoopStateBufferSpansTheLoop) {
  const Ranges r(R"(HloModule w
body {
  s = (s32[], f32[8,128]{1,0}) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  acc = f32[8,128]{1,0} get-tuple-element(s), index=1
  one = s32[] constant(1)
  n = s32[] add(i, one)
  tmp = f32[8,128]{1,0} multiply(acc, acc)
  act = f32[8,128]{1,0} tanh(tmp)
  ROOT next = (s32[], f32[8,128]{1,0}) tuple(n, act)
}
cond {
  s.1 = (s32[], f32[8,128]{1,0}) parameter(0)
  ROOT f = pred[] constant(false)
}
ENTRY main {
  x = f32[8,128]{1,0} parameter(0)
  fresh = f32[8,128]{1,0} negate(x)
  zero = s32[] constant(0)
  init = (s32[], f32[8,128]{1,0}) tuple(zero, fresh)
  loop = (s32[], f32[8,128]{1,0}) while(init), condition=cond, body=body
  out = f32[8,128]{1,0} get-tuple-element(loop), index=1
  ROOT y = f32[8,128]{1,0} negate(out)
})");
  // x 0, fresh 1, zero 2, init 3, cond 4..5, body 6..13, loop 14, out 15, y 16.
  EXPECT_EQ(r.range("tmp"), (LiveInterval{11, 12}));
  EXPECT_EQ(r.range("act"), (LiveInterval{12, 13}));  // the body's ROOT holds it to the body's end
  EXPECT_EQ(r.range("fresh"), (LiveInterval{1, 16}));  // read through the loop's result by y
  // act joins the state: one buffer from fresh's definition through y.
  EXPECT_EQ(r.buffer("act"), (LiveInterval{1, 16}));
  EXPECT_EQ(r.buffer("act"), r.buffer("fresh"));
  EXPECT_EQ(r.buffer("tmp"), (LiveInterval{11, 12}));
}

// ---------------------------------------------------------------------------------------------
// The peak sweep
// ---------------------------------------------------------------------------------------------
LiveBuffer buffer(std::int64_t start, std::int64_t end, std::uint64_t bytes, std::uint64_t unpadded) {
  LiveBuffer b;
  b.start = start;
  b.end = end;
  b.bytes = bytes;
  b.unpadded = unpadded;
  return b;
}

TEST(HloPeakLive, ThePeakItsFirstPositionAndTheUnpaddedBytesThere) {
  BufferSet set;
  set.positions = 5;
  set.buffers = {buffer(0, 1, 100, 50), buffer(1, 2, 100, 60), buffer(3, 4, 150, 150), buffer(4, 4, 50, 0)};
  // Padded live: 100, 200, 100, 150, 200; unpadded: 50, 110, 60, 150, 150.
  const PeakLive peak = peak_live(set);
  EXPECT_EQ(peak.bytes, 200u);
  EXPECT_EQ(peak.position, 1);  // the first of the two positions at 200
  EXPECT_EQ(peak.unpadded_at_peak, 110u);
  EXPECT_EQ(peak.unpadded, 150u);  // at another position
  EXPECT_EQ(peak_live_bytes(set), peak.bytes);
  EXPECT_EQ(peak_live_unpadded_bytes(set), peak.unpadded);
}

TEST(HloPeakLive, EmptyAndOutOfRangeSets) {
  EXPECT_EQ(peak_live(BufferSet{}).bytes, 0u);
  EXPECT_EQ(peak_live(BufferSet{}).position, 0);
  BufferSet set;
  set.positions = 3;
  set.buffers = {buffer(-2, 0, 10, 10), buffer(2, 5, 30, 20)};  // clamped to 0 and extended to 5
  const PeakLive peak = peak_live(set);
  EXPECT_EQ(peak.bytes, 30u);
  EXPECT_EQ(peak.position, 2);
  EXPECT_EQ(peak.unpadded_at_peak, 20u);
  // Only zero-byte buffers: no peak, at position 0.
  set.buffers = {buffer(1, 2, 0, 0)};
  EXPECT_EQ(peak_live(set).bytes, 0u);
  EXPECT_EQ(peak_live(set).position, 0);
}

TEST(HloPeakLive, SumsBeyond64BitsSaturate) {
  constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();
  BufferSet set;
  set.positions = 3;
  set.buffers = {buffer(0, 0, 8, 8), buffer(1, 2, kMax, kMax), buffer(2, 2, kMax, 1)};
  const PeakLive peak = peak_live(set);
  EXPECT_EQ(peak.bytes, kMax);
  EXPECT_EQ(peak.position, 2);  // 2^65 - 2 there, above position 1's 2^64 - 1
  EXPECT_EQ(peak.unpadded_at_peak, kMax);
  EXPECT_EQ(peak.unpadded, kMax);
}

}  // namespace
}  // namespace tpuemu::hlo
