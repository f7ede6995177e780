// SPDX-License-Identifier: Apache-2.0
// Dataflow on the flattened schedule (tpuemu/hlo/dataflow.h): the values each instruction defines
// per tuple leaf, the values a forwarding instruction holds, what each position reads, and where
// called computations' positions go. Straight-line modules run with a CarriedValues that must not
// be asked; the nested ones record what the walk asks.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tpuemu/hlo/dataflow.h"
#include "tpuemu/hlo/hlo_parser.h"

namespace tpuemu::hlo {
namespace {

Module parse(const std::string& text) { return parse_hlo(text, "test.hlo"); }

// For modules without while or conditional: the walk never asks.
class NoCarriedValues final : public CarriedValues {
 public:
  ValueId loop_state(Dataflow&, ValueId, ValueId, std::int32_t, std::int32_t) override {
    ADD_FAILURE() << "loop_state asked";
    return kNoValue;
  }
  ValueId branch_result(Dataflow&, std::span<const ValueId>, std::int32_t) override {
    ADD_FAILURE() << "branch_result asked";
    return kNoValue;
  }
};

// Records each question and answers with the value entering the loop / the first branch's.
class RecordingCarriedValues final : public CarriedValues {
 public:
  struct Loop {
    ValueId init, written;
    std::int32_t window, body_end;
  };
  ValueId loop_state(Dataflow&, ValueId init, ValueId written, std::int32_t window, std::int32_t body_end) override {
    loops.push_back({init, written, window, body_end});
    return init;
  }
  ValueId branch_result(Dataflow&, std::span<const ValueId> branches, std::int32_t position) override {
    branch_questions.emplace_back(branches.begin(), branches.end());
    branch_positions.push_back(position);
    return branches.front();
  }
  std::vector<Loop> loops;
  std::vector<std::vector<ValueId>> branch_questions;
  std::vector<std::int32_t> branch_positions;
};

// Every position at which the instruction named `name` runs, one per instance of its computation.
std::vector<std::int64_t> positions_of(const Module& m, const Dataflow& flow, const std::string& name) {
  std::vector<std::int64_t> out;
  for (std::int64_t p = 0; p < flow.positions(); ++p)
    if (m.computations[flow.computation_at(p)].instructions[flow.instruction_at(p)].name == name) out.push_back(p);
  return out;
}
std::int64_t position_of(const Module& m, const Dataflow& flow, const std::string& name) {
  const std::vector<std::int64_t> at = positions_of(m, flow, name);
  EXPECT_EQ(at.size(), 1u) << name;
  return at.empty() ? 0 : at.front();
}
std::vector<ValueId> as_vector(std::span<const ValueId> s) { return {s.begin(), s.end()}; }

TEST(HloDataflow, DefiningInstructionsDefineOneValuePerLeafForwardingOnesNone) {
  const Module m = parse(R"(HloModule d
ENTRY main {
  p = f32[8,128]{1,0} parameter(0)
  c = f32[4]{0} constant({1, 2, 3, 4})
  a = f32[8,128]{1,0} negate(p)
  cc = (f32[8,128]{1,0}, f32[4]{0}) custom-call(a, c), custom_call_target="pair"
  t = (f32[8,128]{1,0}, f32[4]{0}) tuple(a, c)
  g = f32[4]{0} get-tuple-element(t), index=1
  bc = f32[8,128]{1,0} bitcast(a)
  tk = token[] after-all()
  ROOT r = f32[8,128]{1,0} add(bc, p)
})");
  NoCarriedValues carried;
  const Dataflow flow = run_dataflow(m, text_schedule(m), {}, carried);
  ASSERT_EQ(flow.positions(), 9);
  const auto at = [&](const char* name) { return position_of(m, flow, name); };

  const std::vector<ValueId> p = flow.defined(at("p"));
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(flow.value(p[0]).kind, BufferKind::Parameter);
  EXPECT_TRUE(flow.value(p[0]).readonly);  // not donated
  EXPECT_TRUE(flow.value(p[0]).entry_parameter);
  EXPECT_EQ(flow.value(p[0]).bytes, 4096u);
  EXPECT_EQ(flow.entry_parameter(0), at("p"));
  EXPECT_EQ(flow.entry_parameter(1), -1);

  const std::vector<ValueId> c = flow.defined(at("c"));
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(flow.value(c[0]).kind, BufferKind::Constant);
  EXPECT_TRUE(flow.value(c[0]).readonly);

  const std::vector<ValueId> a = flow.defined(at("a"));
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(flow.value(a[0]).kind, BufferKind::Temp);
  EXPECT_FALSE(flow.value(a[0]).readonly);
  EXPECT_EQ(flow.value(a[0]).position, at("a"));
  EXPECT_EQ(as_vector(flow.result(at("a"))), a);
  EXPECT_EQ(flow.reads(at("a")), p);

  // A tuple-shaped result that is not a tuple instruction: a value per leaf and an index table.
  const std::vector<ValueId> cc = flow.defined(at("cc"));
  ASSERT_EQ(cc.size(), 3u);
  EXPECT_EQ(flow.value(cc[0]).leaf, 0);
  EXPECT_EQ(flow.value(cc[1]).leaf, 1);
  EXPECT_EQ(flow.value(cc[1]).bytes, 1024u);  // a rank-1 array fills one granule
  EXPECT_EQ(flow.value(cc[2]).leaf, kIndexTable);
  EXPECT_EQ(flow.value(cc[2]).bytes, 16u);
  EXPECT_EQ(flow.value(cc[2]).unpadded, 0u);
  EXPECT_EQ(flow.index_table(at("cc")), cc[2]);

  // tuple defines only its table; its leaves are its operands' values.
  const std::vector<ValueId> t = flow.defined(at("t"));
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(flow.value(t[0]).leaf, kIndexTable);
  EXPECT_EQ(as_vector(flow.result(at("t"))), (std::vector<ValueId>{a[0], c[0]}));

  // get-tuple-element forwards its element and reads only the tuple's table.
  EXPECT_TRUE(flow.defined(at("g")).empty());
  EXPECT_EQ(as_vector(flow.result(at("g"))), c);
  EXPECT_TRUE(flow.reads_index_table_only(at("g")));
  EXPECT_EQ(flow.reads(at("g")), t);

  // bitcast forwards its operand.
  EXPECT_TRUE(flow.defined(at("bc")).empty());
  EXPECT_EQ(as_vector(flow.result(at("bc"))), a);

  // A token has no storage: its leaf holds no value.
  EXPECT_TRUE(flow.defined(at("tk")).empty());
  EXPECT_EQ(as_vector(flow.result(at("tk"))), std::vector<ValueId>{kNoValue});

  const std::int64_t r = at("r");
  EXPECT_EQ(std::vector<std::int32_t>(flow.operands(r).begin(), flow.operands(r).end()),
            (std::vector<std::int32_t>{static_cast<std::int32_t>(at("bc")), static_cast<std::int32_t>(at("p"))}));
  EXPECT_EQ(flow.reads(r), (std::vector<ValueId>{a[0], p[0]}));
  EXPECT_FALSE(flow.reads_index_table_only(r));
  EXPECT_EQ(flow.entry_root(), r);
  // 1 + 1 + 1 + 3 + 1 + 1 values, no copies.
  EXPECT_EQ(flow.values().size(), 8u);
}

TEST(HloDataflow, DonatedParameterLeavesAreNotReadOnly) {
  const Module m = parse(R"(HloModule d, input_output_alias={ {0}: (0, {1}, may-alias) }
ENTRY main {
  p = (f32[4]{0}, f32[4]{0}) parameter(0)
  x = f32[4]{0} get-tuple-element(p), index=1
  n = f32[4]{0} negate(x)
  ROOT t = (f32[4]{0}) tuple(n)
})");
  NoCarriedValues carried;
  const Dataflow flow = run_dataflow(m, text_schedule(m), {}, carried);
  const std::span<const ValueId> p = flow.result(position_of(m, flow, "p"));
  ASSERT_EQ(p.size(), 2u);
  EXPECT_TRUE(flow.value(p[0]).readonly);
  EXPECT_FALSE(flow.value(p[1]).readonly);  // {1} is donated
  const ValueId table = flow.index_table(position_of(m, flow, "p"));
  ASSERT_NE(table, kNoValue);
  EXPECT_EQ(flow.value(table).kind, BufferKind::Parameter);
  EXPECT_TRUE(flow.value(table).entry_parameter);
}

TEST(HloDataflow, CalledComputationsAreSplicedBeforeTheirCallerOncePerSite) {
  const Module m = parse(R"(HloModule n
inc {
  x = f32[4]{0} parameter(0)
  ROOT y = f32[4]{0} negate(x)
}
cond {
  s = (s32[], f32[4]{0}) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  lim = s32[] constant(3)
  ROOT lt = pred[] compare(i, lim), direction=LT
}
body {
  s.1 = (s32[], f32[4]{0}) parameter(0)
  i.1 = s32[] get-tuple-element(s.1), index=0
  v = f32[4]{0} get-tuple-element(s.1), index=1
  one = s32[] constant(1)
  n = s32[] add(i.1, one)
  w = f32[4]{0} call(v), to_apply=inc
  ROOT t = (s32[], f32[4]{0}) tuple(n, w)
}
ENTRY main {
  p = f32[4]{0} parameter(0)
  z = s32[] constant(0)
  init = (s32[], f32[4]{0}) tuple(z, p)
  loop = (s32[], f32[4]{0}) while(init), condition=cond, body=body
  out = f32[4]{0} get-tuple-element(loop), index=1
  ROOT c = f32[4]{0} call(out), to_apply=inc
})");
  RecordingCarriedValues carried;
  const Dataflow flow = run_dataflow(m, text_schedule(m), {}, carried);
  // p 0, z 1, init 2, cond 3..6, body 7..15 (inc 12..13 inside it, before w), loop 16, out 17,
  // inc 18..19, c 20.
  ASSERT_EQ(flow.positions(), 21);
  const auto at = [&](const char* name) { return position_of(m, flow, name); };
  EXPECT_EQ(at("s"), 3);
  EXPECT_EQ(at("s.1"), 7);
  EXPECT_EQ(at("w"), 14);
  EXPECT_EQ(at("loop"), 16);
  EXPECT_EQ(positions_of(m, flow, "y"), (std::vector<std::int64_t>{13, 19}));
  // Each call site has its own instance: its own values.
  EXPECT_NE(flow.defined(13), flow.defined(19));
  ASSERT_EQ(flow.defined(19).size(), 1u);

  // A called computation's parameter holds its argument; a call's result is the callee's ROOT.
  EXPECT_EQ(as_vector(flow.result(at("s"))), as_vector(flow.result(at("init"))));
  EXPECT_EQ(as_vector(flow.result(at("s.1"))), as_vector(flow.result(at("init"))));
  EXPECT_EQ(flow.index_table(at("s.1")), flow.index_table(at("init")));
  EXPECT_TRUE(flow.reads(at("s.1")).empty());
  EXPECT_EQ(as_vector(flow.result(12)), as_vector(flow.result(at("v"))));
  EXPECT_EQ(as_vector(flow.result(at("c"))), flow.defined(19));
  EXPECT_EQ(as_vector(flow.result(at("w"))), flow.defined(13));

  // The windows close callees first, ENTRY last.
  const std::vector<ComputationWindow>& w = flow.windows();
  ASSERT_EQ(w.size(), 5u);
  const auto window = [&](std::size_t k) {
    return std::vector<std::int32_t>{w[k].first, w[k].last, w[k].root};
  };
  EXPECT_EQ(m.computations[w[0].computation].name, "cond");
  EXPECT_EQ(window(0), (std::vector<std::int32_t>{3, 6, 6}));
  EXPECT_EQ(m.computations[w[1].computation].name, "inc");
  EXPECT_EQ(window(1), (std::vector<std::int32_t>{12, 13, 13}));
  EXPECT_EQ(m.computations[w[2].computation].name, "body");
  EXPECT_EQ(window(2), (std::vector<std::int32_t>{7, 15, 15}));
  EXPECT_EQ(window(3), (std::vector<std::int32_t>{18, 19, 19}));
  EXPECT_EQ(window(4), (std::vector<std::int32_t>{0, 20, 20}));
  EXPECT_EQ(flow.entry_root(), 20);

  // The while asked once per stored leaf of its state: the init's value, the body ROOT's, the
  // loop's first position and the body's last.
  const std::span<const ValueId> init = flow.result(at("init"));
  const std::span<const ValueId> written = flow.result(at("t"));
  ASSERT_EQ(carried.loops.size(), 2u);
  for (std::size_t j = 0; j < 2; ++j) {
    EXPECT_EQ(carried.loops[j].init, init[j]);
    EXPECT_EQ(carried.loops[j].written, written[j]);
    EXPECT_EQ(carried.loops[j].window, 3);
    EXPECT_EQ(carried.loops[j].body_end, 15);
  }
  EXPECT_EQ(as_vector(flow.result(at("loop"))), as_vector(init));  // what the recorder answered
}

TEST(HloDataflow, ConditionalAsksPerLeafWithEveryBranchsValue) {
  const Module m = parse(R"(HloModule c
neg {
  a = f32[4]{0} parameter(0)
  ROOT r = f32[4]{0} negate(a)
}
same {
  b = f32[4]{0} parameter(0)
  ROOT r.1 = f32[4]{0} copy(b)
}
ENTRY main {
  k = s32[] parameter(0)
  x = f32[4]{0} parameter(1)
  ROOT z = f32[4]{0} conditional(k, x, x), branch_computations={neg, same}
})");
  RecordingCarriedValues carried;
  const Dataflow flow = run_dataflow(m, text_schedule(m), {}, carried);
  // k 0, x 1, neg 2..3, same 4..5, z 6.
  ASSERT_EQ(flow.positions(), 7);
  ASSERT_EQ(carried.branch_questions.size(), 1u);
  EXPECT_EQ(carried.branch_questions[0], (std::vector<ValueId>{flow.defined(3).at(0), flow.defined(5).at(0)}));
  EXPECT_EQ(carried.branch_positions, std::vector<std::int32_t>{6});
  EXPECT_EQ(as_vector(flow.result(6)), flow.defined(3));
  // The branch parameters hold the conditional's operands 1 and 2; the conditional reads all three.
  EXPECT_EQ(as_vector(flow.result(2)), as_vector(flow.result(1)));
  EXPECT_EQ(flow.operands(6).size(), 3u);
}

TEST(HloDataflow, DynamicUpdateSliceIsInPlaceOnlyWhenItsOperandDiesAndIsWritable) {
  const Module m = parse(R"(HloModule u
ENTRY main {
  p = f32[8,128]{1,0} parameter(0)
  u = f32[1,128]{1,0} parameter(1)
  i = s32[] parameter(2)
  a = f32[8,128]{1,0} negate(p)
  d = f32[8,128]{1,0} dynamic-update-slice(a, u, i, i)
  e = f32[8,128]{1,0} dynamic-update-slice(d, u, i, i)
  c = f32[8,128]{1,0} dynamic-update-slice(p, u, i, i)
  ROOT r = (f32[8,128]{1,0}, f32[8,128]{1,0}, f32[8,128]{1,0}) tuple(d, e, c)
})");
  NoCarriedValues carried;
  const Dataflow flow = run_dataflow(m, text_schedule(m), {}, carried);
  const auto at = [&](const char* name) { return position_of(m, flow, name); };
  // a's last reader is d: d writes a's buffer.
  EXPECT_TRUE(flow.defined(at("d")).empty());
  EXPECT_EQ(as_vector(flow.result(at("d"))), flow.defined(at("a")));
  // d is read after e (by the ROOT): e defines its own.
  EXPECT_EQ(flow.defined(at("e")).size(), 1u);
  // p dies at c but is a read-only argument: c defines its own.
  EXPECT_EQ(flow.defined(at("c")).size(), 1u);
}

TEST(HloDataflow, LongChainsStayCompact) {
  // 50 000 chained adds: one value and one result leaf per position, two operand positions each.
  constexpr int kAdds = 50000;
  std::string text = "HloModule chain\nENTRY main {\n  a.0 = f32[8,128]{1,0} parameter(0)\n";
  for (int i = 1; i <= kAdds; ++i) {
    text += std::string(i == kAdds ? "  ROOT a." : "  a.") + std::to_string(i) + " = f32[8,128]{1,0} add(a." +
            std::to_string(i - 1) + ", a." + std::to_string(i - 1) + ")\n";
  }
  text += "}\n";
  const Module m = parse(text);
  NoCarriedValues carried;
  const Dataflow flow = run_dataflow(m, text_schedule(m), {}, carried);
  ASSERT_EQ(flow.positions(), kAdds + 1);
  EXPECT_EQ(flow.values().size(), static_cast<std::size_t>(kAdds + 1));
  for (const std::int64_t p : {std::int64_t{1}, std::int64_t{kAdds / 2}, std::int64_t{kAdds}}) {
    EXPECT_EQ(as_vector(flow.result(p)), std::vector<ValueId>{static_cast<ValueId>(p)});
    EXPECT_EQ(flow.reads(p), (std::vector<ValueId>{static_cast<ValueId>(p - 1), static_cast<ValueId>(p - 1)}));
  }
}

}  // namespace
}  // namespace tpuemu::hlo
