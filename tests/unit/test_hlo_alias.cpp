// SPDX-License-Identifier: Apache-2.0
// Alias analysis (tpuemu/hlo/alias_analysis.h): which values share one buffer - a while's state
// across the loop, a conditional's branch results, donated arguments and their outputs - and the
// copies XLA's copy insertion would make: of a read-only value a loop or a branch writes, of an
// ENTRY parameter that would join another, of a result leaf that is an argument, a constant or
// another leaf's buffer.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tpuemu/base/error.h"
#include "tpuemu/hlo/alias_analysis.h"
#include "tpuemu/hlo/hlo_parser.h"

namespace tpuemu::hlo {
namespace {

Module parse(const std::string& text) { return parse_hlo(text, "test.hlo"); }

std::int64_t position_of(const Module& m, const Dataflow& flow, const std::string& name) {
  for (std::int64_t p = 0; p < flow.positions(); ++p)
    if (m.computations[flow.computation_at(p)].instructions[flow.instruction_at(p)].name == name) return p;
  ADD_FAILURE() << "no position runs " << name;
  return 0;
}
// The one value the named instruction's result holds at leaf j.
ValueId value_of(const Module& m, const Dataflow& flow, const std::string& name, std::size_t j = 0) {
  const std::span<const ValueId> r = flow.result(position_of(m, flow, name));
  EXPECT_LT(j, r.size()) << name;
  return j < r.size() ? r[j] : kNoValue;
}

// A loop whose state is a counter (a constant), an accumulator and a weight passed through; the
// accumulator's init is `INIT`.
std::string loop_module(const std::string& init) {
  return R"(HloModule w
body {
  s = (s32[], f32[8,128]{1,0}, f32[8,128]{1,0}) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  acc = f32[8,128]{1,0} get-tuple-element(s), index=1
  wt = f32[8,128]{1,0} get-tuple-element(s), index=2
  one = s32[] constant(1)
  n = s32[] add(i, one)
  act = f32[8,128]{1,0} multiply(acc, wt)
  ROOT next = (s32[], f32[8,128]{1,0}, f32[8,128]{1,0}) tuple(n, act, wt)
}
cond {
  s.1 = (s32[], f32[8,128]{1,0}, f32[8,128]{1,0}) parameter(0)
  ROOT f = pred[] constant(false)
}
ENTRY main {
  x = f32[8,128]{1,0} parameter(0)
  w = f32[8,128]{1,0} parameter(1)
  fresh = f32[8,128]{1,0} negate(x)
  zero = s32[] constant(0)
  init = (s32[], f32[8,128]{1,0}, f32[8,128]{1,0}) tuple(zero, )" + init + R"(, w)
  loop = (s32[], f32[8,128]{1,0}, f32[8,128]{1,0}) while(init), condition=cond, body=body
  ROOT out = f32[8,128]{1,0} get-tuple-element(loop), index=1
})";
}

TEST(HloAlias, WhileStateIsOneBufferAcrossTheLoop) {
  const Module m = parse(loop_module("fresh"));
  const AliasAnalysis alias = AliasAnalysis::run(m, text_schedule(m), {});
  const Dataflow& flow = alias.dataflow();
  const ValueId fresh = value_of(m, flow, "fresh");
  // The accumulator: the init's buffer is the state; the body's result joins it; the loop holds it.
  EXPECT_EQ(value_of(m, flow, "loop", 1), fresh);
  EXPECT_EQ(value_of(m, flow, "acc"), fresh);
  EXPECT_TRUE(alias.same_buffer(value_of(m, flow, "act"), fresh));
  // The weight passes through unchanged: no copy, not joined with anything else.
  const ValueId w = value_of(m, flow, "w");
  EXPECT_EQ(value_of(m, flow, "loop", 2), w);
  EXPECT_EQ(alias.values_of(alias.buffer_of(w)), std::vector<ValueId>{w});
  // The counter's init is a constant the body writes: the state is a copy made at the loop's
  // first position (cond's parameter), joined with the body's add.
  const ValueId counter = value_of(m, flow, "loop", 0);
  const ValueId zero = value_of(m, flow, "zero");
  EXPECT_EQ(flow.value(counter).copy_of, zero);
  EXPECT_EQ(flow.value(counter).position, position_of(m, flow, "s.1"));
  EXPECT_EQ(flow.value(counter).kind, BufferKind::Temp);
  EXPECT_TRUE(alias.same_buffer(counter, value_of(m, flow, "n")));
  EXPECT_FALSE(alias.same_buffer(counter, zero));
  // The result: `fresh`'s buffer is the output, and no copy of it was needed.
  EXPECT_EQ(alias.outputs(), std::vector<ValueId>{fresh});
  EXPECT_TRUE(alias.is_output(alias.buffer_of(fresh)));
  EXPECT_FALSE(alias.is_output(alias.buffer_of(w)));
}

TEST(HloAlias, ReadOnlyLoopInitIsCopiedFirst) {
  const Module m = parse(loop_module("x"));
  const AliasAnalysis alias = AliasAnalysis::run(m, text_schedule(m), {});
  const Dataflow& flow = alias.dataflow();
  const ValueId x = value_of(m, flow, "x");
  const ValueId state = value_of(m, flow, "loop", 1);
  ASSERT_NE(state, x);
  EXPECT_EQ(flow.value(state).copy_of, x);
  EXPECT_FALSE(flow.value(state).readonly);
  EXPECT_TRUE(alias.same_buffer(state, value_of(m, flow, "act")));
  EXPECT_FALSE(alias.same_buffer(state, x));  // the argument is never written
  EXPECT_FALSE(alias.is_output(alias.buffer_of(x)));
  EXPECT_TRUE(alias.is_output(alias.buffer_of(state)));
}

TEST(HloAlias, ConditionalBranchResultsShareOneBufferAndReadOnlyOnesAreCopied) {
  const Module m = parse(R"(HloModule c
neg {
  a = f32[4]{0} parameter(0)
  ROOT r = f32[4]{0} negate(a)
}
keep {
  b = f32[4]{0} parameter(0)
  ROOT r.1 = f32[4]{0} copy(b)
}
pass {
  c = f32[4]{0} parameter(0)
  ROOT r.2 = f32[4]{0} bitcast(c)
}
ENTRY main {
  k = s32[] parameter(0)
  x = f32[4]{0} parameter(1)
  y = f32[4]{0} conditional(k, x, x), branch_computations={neg, keep}
  ROOT z = f32[4]{0} conditional(k, y, x), branch_computations={neg, pass}
})");
  const AliasAnalysis alias = AliasAnalysis::run(m, text_schedule(m), {});
  const Dataflow& flow = alias.dataflow();
  const std::int64_t y = position_of(m, flow, "y");
  // y: both branches write new values; they are one buffer, named by the first branch's.
  const ValueId first = flow.result(y - 3)[0];   // neg's r
  const ValueId second = flow.result(y - 1)[0];  // keep's r.1
  EXPECT_EQ(flow.result(y)[0], first);
  EXPECT_TRUE(alias.same_buffer(first, second));
  // z: branch `pass` returns the read-only argument x: a copy of the first branch's result at z's
  // position joins the output instead of x.
  const std::int64_t z = position_of(m, flow, "z");
  const ValueId x = value_of(m, flow, "x");
  const ValueId out = flow.result(z)[0];
  EXPECT_FALSE(alias.same_buffer(out, x));
  std::size_t copies = 0;
  for (const ValueId v : alias.values_of(alias.buffer_of(out))) {
    if (flow.value(v).copy_of == kNoValue) continue;
    ++copies;
    EXPECT_EQ(flow.value(v).position, z);
  }
  EXPECT_EQ(copies, 1u);
}

TEST(HloAlias, DonatedParameterIsItsOutputsBuffer) {
  const Module m = parse(R"(HloModule d, input_output_alias={ {0}: (0, {}, may-alias) }
ENTRY main {
  p = f32[8,128]{1,0} parameter(0)
  q = f32[8,128]{1,0} parameter(1)
  n = f32[8,128]{1,0} add(p, q)
  s = f32[8,128]{1,0} multiply(n, q)
  ROOT t = (f32[8,128]{1,0}, f32[8,128]{1,0}) tuple(s, n)
})");
  const AliasAnalysis alias = AliasAnalysis::run(m, text_schedule(m), {});
  const Dataflow& flow = alias.dataflow();
  const ValueId p = value_of(m, flow, "p");
  const ValueId s = value_of(m, flow, "s");
  EXPECT_TRUE(alias.same_buffer(p, s));
  EXPECT_TRUE(alias.shares_argument(alias.buffer_of(p)));
  EXPECT_TRUE(alias.is_output(alias.buffer_of(p)));
  const ValueId q = value_of(m, flow, "q");
  EXPECT_FALSE(alias.shares_argument(alias.buffer_of(q)));
  EXPECT_FALSE(alias.same_buffer(p, q));
  EXPECT_EQ(alias.buffer_of(p), 0u);  // buffers are numbered in the order of their first value
  EXPECT_EQ(alias.buffer_count(), 4u);  // p and s, q, n, t's index table
}

TEST(HloAlias, ResultsAreDistinctAndNeverReadOnly) {
  const Module m = parse(R"(HloModule r
ENTRY main {
  p = f32[4]{0} parameter(0)
  c = f32[4]{0} constant({1, 2, 3, 4})
  n = f32[4]{0} negate(p)
  ROOT t = (f32[4]{0}, f32[4]{0}, f32[4]{0}, f32[4]{0}) tuple(p, c, n, n)
})");
  const AliasAnalysis alias = AliasAnalysis::run(m, text_schedule(m), {});
  const Dataflow& flow = alias.dataflow();
  const std::int32_t last = static_cast<std::int32_t>(flow.positions() - 1);
  const ValueId p = value_of(m, flow, "p");
  const ValueId c = value_of(m, flow, "c");
  const ValueId n = value_of(m, flow, "n");
  const std::vector<ValueId>& out = alias.outputs();
  ASSERT_EQ(out.size(), 4u);
  // An argument, a constant and a second leaf holding n's buffer are copied at the last position.
  EXPECT_EQ(flow.value(out[0]).copy_of, p);
  EXPECT_EQ(flow.value(out[1]).copy_of, c);
  EXPECT_EQ(out[2], n);
  EXPECT_EQ(flow.value(out[3]).copy_of, n);
  for (const std::size_t j : {0u, 1u, 3u}) {
    EXPECT_EQ(flow.value(out[j]).position, last);
    EXPECT_TRUE(alias.is_output(alias.buffer_of(out[j])));
  }
  EXPECT_FALSE(alias.is_output(alias.buffer_of(p)));
  EXPECT_FALSE(alias.is_output(alias.buffer_of(c)));
  // The tuple's table is a temporary of its own: the result's table as is.
  EXPECT_EQ(alias.output_index_table(), flow.index_table(flow.entry_root()));
}

TEST(HloAlias, TwoEntryParametersNeverShareABuffer) {
  // The loop swaps two donated arguments: joining each state leaf with the other argument would
  // make them one buffer, so a copy of the other joins instead.
  const Module m = parse(R"(HloModule s, input_output_alias={ {0}: (0, {}, may-alias), {1}: (1, {}, may-alias) }
cond {
  s = (f32[4]{0}, f32[4]{0}) parameter(0)
  ROOT f = pred[] constant(false)
}
body {
  s.1 = (f32[4]{0}, f32[4]{0}) parameter(0)
  a = f32[4]{0} get-tuple-element(s.1), index=0
  b = f32[4]{0} get-tuple-element(s.1), index=1
  ROOT t = (f32[4]{0}, f32[4]{0}) tuple(b, a)
}
ENTRY main {
  p0 = f32[4]{0} parameter(0)
  p1 = f32[4]{0} parameter(1)
  init = (f32[4]{0}, f32[4]{0}) tuple(p0, p1)
  loop = (f32[4]{0}, f32[4]{0}) while(init), condition=cond, body=body
  x = f32[4]{0} get-tuple-element(loop), index=0
  y = f32[4]{0} get-tuple-element(loop), index=1
  ROOT out = (f32[4]{0}, f32[4]{0}) tuple(x, y)
})");
  const AliasAnalysis alias = AliasAnalysis::run(m, text_schedule(m), {});
  const Dataflow& flow = alias.dataflow();
  const ValueId p0 = value_of(m, flow, "p0");
  const ValueId p1 = value_of(m, flow, "p1");
  EXPECT_FALSE(alias.same_buffer(p0, p1));
  for (const auto& [own, other] : {std::pair{p0, p1}, std::pair{p1, p0}}) {
    const std::vector<ValueId> members = alias.values_of(alias.buffer_of(own));
    ASSERT_EQ(members.size(), 2u);
    EXPECT_EQ(members[0], own);
    EXPECT_EQ(flow.value(members[1]).copy_of, other);
    EXPECT_EQ(flow.value(members[1]).position, position_of(m, flow, "t"));  // the body's end
    EXPECT_TRUE(alias.shares_argument(alias.buffer_of(own)));
  }
}

TEST(HloAlias, MismatchedDonationIsAnError) {
  const Module m = parse(R"(HloModule e, input_output_alias={ {0}: (0, {}, may-alias) }
ENTRY main {
  p = (f32[4]{0}, f32[4]{0}) parameter(0)
  a = f32[4]{0} get-tuple-element(p), index=0
  ROOT t = (f32[4]{0}) tuple(a)
})");
  try {
    AliasAnalysis::run(m, text_schedule(m), {});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("input_output_alias: output {0} and parameter 0 {} are not the same shape"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace tpuemu::hlo
