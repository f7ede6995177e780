// SPDX-License-Identifier: Apache-2.0
// XLA's own unit-test figures, reproduced on tpuemu's hlo layer (docs/hlo.md, "XLA's own test
// figures"). Each test names the XLA test (file and TEST) whose stated figures it asserts; where
// tpuemu's rule differs on purpose, the test asserts tpuemu's figure and says why. The modules and
// event sequences are written here from the figures those tests state; no XLA code is used.
//
// Two conventions differ throughout and are not repeated per test:
// - XLA's HloLiveRange ends a live-out buffer (an ENTRY parameter, an output) at the schedule's
//   length, one past the last instruction; tpuemu ends it at the last position. Every buffer that
//   lives out ends at the same time in both, so overlaps, peaks and placements are the same.
// - The heap tests of heap_simulator_test.cc drive GlobalDecreasingSizeBestFitHeap with Alloc and
//   Free calls; each call is one time step (the heap's current_time_), so a buffer lives from its
//   Alloc's step to its Free's step, both inclusive, as a tpuemu LiveBuffer does.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "tpuemu/hlo/buffers.h"
#include "tpuemu/hlo/hlo_parser.h"
#include "tpuemu/hlo/liveness.h"
#include "tpuemu/hlo/placement.h"

namespace tpuemu::hlo {
namespace {

// ---------------------------------------------------------------------------------------------
// Heap events as XLA's heap tests state them.
// ---------------------------------------------------------------------------------------------

struct Event {
  enum Kind { Alloc, Free } kind;
  char buffer;  // 'a', 'b', ...
  std::uint64_t bytes = 0;
};

// The buffers of an Alloc/Free sequence, one time step per event, named by their letter and
// numbered in order of first Alloc (XLA's HloValue ids in these tests).
BufferSet from_events(const std::vector<Event>& events) {
  BufferSet set;
  std::map<char, std::size_t> index;
  for (std::size_t t = 0; t < events.size(); ++t) {
    const Event& e = events[t];
    const auto time = static_cast<std::int64_t>(t);
    if (e.kind == Event::Alloc) {
      index[e.buffer] = set.buffers.size();
      LiveBuffer b;
      b.name = std::string(1, e.buffer);
      b.bytes = b.unpadded = e.bytes;
      b.start = b.end = time;
      set.buffers.push_back(b);
    } else {
      set.buffers.at(index.at(e.buffer)).end = time;
    }
  }
  set.positions = static_cast<std::int64_t>(events.size());
  return set;
}

// A colocation (XLA's ShareWith) as it reaches place_xla from tpuemu's liveness: one buffer, the
// union of the members' live ranges, the largest member's size, the earliest member's place.
BufferSet colocate(BufferSet set, char keep, char joined) {
  const auto at = [&](char name) {
    for (std::size_t i = 0; i < set.buffers.size(); ++i)
      if (set.buffers[i].name == std::string(1, name)) return i;
    throw std::logic_error("no such buffer");
  };
  LiveBuffer& k = set.buffers[at(keep)];
  const LiveBuffer j = set.buffers[at(joined)];
  k.start = std::min(k.start, j.start);
  k.end = std::max(k.end, j.end);
  k.bytes = k.unpadded = std::max(k.bytes, j.bytes);
  set.buffers.erase(set.buffers.begin() + static_cast<std::ptrdiff_t>(at(joined)));
  return set;
}

std::map<std::string, std::uint64_t> offsets_of(const BufferSet& set, const Placement& p) {
  std::map<std::string, std::uint64_t> out;
  for (std::size_t i = 0; i < set.buffers.size(); ++i) out[set.buffers[i].name] = p.offsets.at(i);
  return out;
}

using Offsets = std::map<std::string, std::uint64_t>;
constexpr Event::Kind A = Event::Alloc;
constexpr Event::Kind F = Event::Free;

// xla/service/heap_simulator/heap_simulator_test.cc, GlobalDecreasingSizeBestFitHeapTest.Empty.
TEST(XlaFiguresHeap, Empty) {
  const Placement p = place_xla(BufferSet{}, {});
  EXPECT_EQ(p.heap_bytes, 0u);
  EXPECT_TRUE(p.offsets.empty());
}

// heap_simulator_test.cc, GlobalDecreasingSizeBestFitHeapTest.DecreasingSize: four buffers live
// together, placed largest first: heap 100, d 0, b 40, c 70, a 90.
TEST(XlaFiguresHeap, DecreasingSize) {
  const BufferSet set = from_events({{A, 'a', 10}, {A, 'b', 30}, {A, 'c', 20}, {A, 'd', 40},
                                     {F, 'a'}, {F, 'b'}, {F, 'c'}, {F, 'd'}});
  const Placement p = place_xla(set, {});
  EXPECT_EQ(p.heap_bytes, 100u);
  EXPECT_EQ(offsets_of(set, p), (Offsets{{"a", 90}, {"b", 40}, {"c", 70}, {"d", 0}}));
}

// heap_simulator_test.cc, GlobalDecreasingSizeBestFitHeapTest.DecreasingSizeWithAlignment:
// alignment 20, heap 120, c 0, a 60, d 60, b 100 (free chunks start at aligned ends).
TEST(XlaFiguresHeap, DecreasingSizeWithAlignment) {
  const BufferSet set = from_events({{A, 'a', 10}, {A, 'b', 20}, {A, 'c', 50}, {F, 'a'},
                                     {A, 'd', 40}, {F, 'b'}, {F, 'c'}, {F, 'd'}});
  PlacementOptions options;
  options.alignment = 20;
  const Placement p = place_xla(set, options);
  EXPECT_EQ(p.heap_bytes, 120u);
  EXPECT_EQ(offsets_of(set, p), (Offsets{{"a", 60}, {"b", 100}, {"c", 0}, {"d", 60}}));
}

// heap_simulator_test.cc, GlobalDecreasingSizeBestFitHeapTest.BestFit: a goes to the 30-byte gap
// at 90, not the 50-byte one at 0: heap 140, e 0, c 50, d 90, a 90, b 120.
TEST(XlaFiguresHeap, BestFit) {
  const BufferSet set =
      from_events({{A, 'a', 10}, {A, 'b', 20}, {A, 'c', 40}, {F, 'a'}, {A, 'd', 30},
                   {A, 'e', 50}, {F, 'b'}, {F, 'c'}, {F, 'd'}, {F, 'e'}});
  const Placement p = place_xla(set, {});
  EXPECT_EQ(p.heap_bytes, 140u);
  EXPECT_EQ(offsets_of(set, p),
            (Offsets{{"a", 90}, {"b", 120}, {"c", 50}, {"d", 90}, {"e", 0}}));
}

// heap_simulator_test.cc, GlobalDecreasingSizeBestFitHeapTest.Colocated: a (40) and c (40, shares
// a) live apart, b (20) lives between them. XLA checks each colocated member's own interval, so
// b reuses a's bytes: heap 40, every offset 0. Differs on purpose: tpuemu's liveness joins
// aliased values into one buffer live over the union of their ranges (docs/hlo.md, "Aliasing
// joins values into one buffer"), so b cannot sit inside a+c's range: heap 60, b at 40.
TEST(XlaFiguresHeap, ColocatedDiffersUnionRange) {
  const BufferSet set = colocate(
      from_events({{A, 'a', 40}, {F, 'a'}, {A, 'b', 20}, {F, 'b'}, {A, 'c', 40}, {F, 'c'}}),
      'a', 'c');
  const Placement p = place_xla(set, {});
  EXPECT_EQ(p.heap_bytes, 60u);  // XLA: 40
  EXPECT_EQ(offsets_of(set, p), (Offsets{{"a", 0}, {"b", 40}}));  // XLA: b at 0
}

// heap_simulator_test.cc, GlobalDecreasingSizeBestFitHeapTest.ColocatedII: b (20) lives across c
// (40, shares a): heap 60, a and c at 0, b at 40.
TEST(XlaFiguresHeap, ColocatedII) {
  const BufferSet set = colocate(from_events({{A, 'a', 40}, {F, 'a'}, {A, 'b', 20},
                                              {A, 'c', 40}, {F, 'c'}, {F, 'b'}}),
                                 'a', 'c');
  const Placement p = place_xla(set, {});
  EXPECT_EQ(p.heap_bytes, 60u);
  EXPECT_EQ(offsets_of(set, p), (Offsets{{"a", 0}, {"b", 40}}));
}

// heap_simulator_test.cc, GlobalDecreasingSizeBestFitHeapTest.ColocatedIII: the larger b (30)
// goes first: heap 40, b at 0, a and c at 30.
TEST(XlaFiguresHeap, ColocatedIII) {
  const BufferSet set = colocate(from_events({{A, 'a', 10}, {F, 'a'}, {A, 'b', 30},
                                              {A, 'c', 10}, {F, 'c'}, {F, 'b'}}),
                                 'a', 'c');
  const Placement p = place_xla(set, {});
  EXPECT_EQ(p.heap_bytes, 40u);
  EXPECT_EQ(offsets_of(set, p), (Offsets{{"a", 30}, {"b", 0}}));
}

// heap_simulator_test.cc, GlobalDecreasingSizeBestFitHeapTest.ColocatedDifferentSize1: c (30)
// shares a (40): the colocation takes the larger size, 40; heap 60, a and c at 0, b at 40.
TEST(XlaFiguresHeap, ColocatedDifferentSize1) {
  const BufferSet set = colocate(from_events({{A, 'a', 40}, {F, 'a'}, {A, 'b', 20},
                                              {A, 'c', 30}, {F, 'c'}, {F, 'b'}}),
                                 'a', 'c');
  const Placement p = place_xla(set, {});
  EXPECT_EQ(p.heap_bytes, 60u);
  EXPECT_EQ(set.buffers.at(0).bytes, 40u);
  EXPECT_EQ(offsets_of(set, p), (Offsets{{"a", 0}, {"b", 40}}));
}

// heap_simulator_test.cc, GlobalDecreasingSizeBestFitHeapTest.ColocatedDifferentSize2: c (50)
// shares a (40): both are 50 bytes; heap 70, a and c at 0, b at 50.
TEST(XlaFiguresHeap, ColocatedDifferentSize2) {
  const BufferSet set = colocate(from_events({{A, 'a', 40}, {F, 'a'}, {A, 'b', 20},
                                              {A, 'c', 50}, {F, 'c'}, {F, 'b'}}),
                                 'a', 'c');
  const Placement p = place_xla(set, {});
  EXPECT_EQ(p.heap_bytes, 70u);
  EXPECT_EQ(set.buffers.at(0).bytes, 50u);
  EXPECT_EQ(offsets_of(set, p), (Offsets{{"a", 0}, {"b", 50}}));
}

// ---------------------------------------------------------------------------------------------
// Modules: the buffers tpuemu's liveness makes, dense sizes (the XLA tests count bytes untiled).
// ---------------------------------------------------------------------------------------------

constexpr SizeOptions kDense{.tiled = false};

BufferSet text_buffers(const std::string& text) {
  const Module m = parse_hlo(text, "xla_figures.hlo");
  return live_buffers(m, text_schedule(m), kDense);
}

const LiveBuffer& named(const BufferSet& set, const std::string& name) {
  for (const LiveBuffer& b : set.buffers)
    if (b.name == name) return b;
  throw std::logic_error("no buffer " + name);
}

using Range = std::pair<std::int64_t, std::int64_t>;
Range range_of(const BufferSet& set, const std::string& name) {
  const LiveBuffer& b = named(set, name);
  return {b.start, b.end};
}

// Bytes live at each position; the first position where they peak.
std::pair<std::int64_t, std::uint64_t> peak_position(const BufferSet& set) {
  std::int64_t at = 0;
  std::uint64_t best = 0;
  for (std::int64_t t = 0; t < set.positions; ++t) {
    std::uint64_t live = 0;
    for (const LiveBuffer& b : set.buffers)
      if (b.start <= t && t <= b.end) live += b.bytes;
    if (live > best) best = live, at = t;
  }
  return {at, best};
}

// xla/hlo/utils/hlo_live_range_test.cc, HloLiveRangeTest.ToStringSimpleComputation: paramA 0-3,
// paramX 0-3, multiply 2-3 (XLA's end: the schedule's length 3); the peak is 48 bytes at time 2,
// all three live. tpuemu: the same ranges ending at the last position 2; the same peak.
TEST(XlaFiguresLiveRange, ToStringSimpleComputation) {
  const BufferSet set = text_buffers(R"(HloModule Module, is_scheduled=true
ENTRY %main {
  %paramA = f32[4] parameter(0)
  %paramX = f32[4] parameter(1)
  ROOT %multiply = f32[4] multiply(%paramA, %paramX)
})");
  EXPECT_EQ(set.positions, 3);
  EXPECT_EQ(range_of(set, "paramA"), Range(0, 2));
  EXPECT_EQ(range_of(set, "paramX"), Range(0, 2));
  EXPECT_EQ(range_of(set, "multiply"), Range(2, 2));
  EXPECT_EQ(peak_position(set), (std::pair<std::int64_t, std::uint64_t>{2, 48}));
  EXPECT_EQ(peak_live_bytes(set), 48u);
}

// hlo_live_range_test.cc, HloLiveRangeTest.MultiplyAdd: parameters 0-5, mul 2-4 (its last use,
// add), add 4-5. tpuemu: mul 2-4 as XLA; the live-out ones end at 4.
TEST(XlaFiguresLiveRange, MultiplyAdd) {
  const BufferSet set = text_buffers(R"(HloModule m, is_scheduled=true
ENTRY e {
  paramA = f32[4] parameter(0)
  paramX = f32[4] parameter(1)
  mul = f32[4] multiply(paramA, paramX)
  paramY = f32[4] parameter(2)
  ROOT add = f32[4] add(mul, paramY)
})");
  EXPECT_EQ(range_of(set, "paramA"), Range(0, 4));
  EXPECT_EQ(range_of(set, "paramY"), Range(0, 4));
  EXPECT_EQ(range_of(set, "mul"), Range(2, 4));
  EXPECT_EQ(range_of(set, "add"), Range(4, 4));
}

// hlo_live_range_test.cc, HloLiveRangeTest.LiveOutBuffers: a value the ROOT tuple holds lives to
// the end: mul 2-6, add 4-6 (XLA's end 6). tpuemu: 2-5 and 4-5, the last position.
TEST(XlaFiguresLiveRange, LiveOutBuffers) {
  const BufferSet set = text_buffers(R"(HloModule m, is_scheduled=true
ENTRY e {
  paramA = f32[4] parameter(0)
  paramX = f32[4] parameter(1)
  mul = f32[4] multiply(paramA, paramX)
  paramY = f32[4] parameter(2)
  add = f32[4] add(mul, paramY)
  ROOT tuple = (f32[4], f32[4]) tuple(mul, add)
})");
  EXPECT_EQ(set.positions, 6);
  EXPECT_EQ(range_of(set, "mul"), Range(2, 5));
  EXPECT_EQ(range_of(set, "add"), Range(4, 5));
  EXPECT_EQ(named(set, "mul").kind, BufferKind::Output);
}

// hlo_live_range_test.cc, HloLiveRangeTest.Call: the callee's positions are spliced before the
// call: a 0-7, b 1-3 (read by the callee's negate at 3), negate_0 3-6 (the call's value, read by
// e), d 5-6, e 6-7. tpuemu: the same, the live-out a and e ending at 6.
TEST(XlaFiguresLiveRange, Call) {
  const BufferSet set = text_buffers(R"(HloModule Call, is_scheduled=true
%called_computation (param_0: f32[4096]) -> f32[4096] {
  %param_0 = f32[4096] parameter(0)
  ROOT %negate_0 = f32[4096] negate(%param_0)
}
ENTRY %main (a: f32[4096]) -> f32[4096] {
  %a = f32[4096] parameter(0)
  %b = f32[4096] negate(%a)
  %c = f32[4096] call(%b), to_apply=%called_computation
  %d = f32[4096] negate(%c)
  ROOT %e = f32[4096] add(%c, %d)
})");
  EXPECT_EQ(set.positions, 7);
  EXPECT_EQ(range_of(set, "a"), Range(0, 6));
  EXPECT_EQ(range_of(set, "b"), Range(1, 4));  // XLA 1-3: the call's own position is not a use
  EXPECT_EQ(range_of(set, "negate_0"), Range(3, 6));
  EXPECT_EQ(range_of(set, "d"), Range(5, 6));
  EXPECT_EQ(range_of(set, "e"), Range(6, 6));
}

// hlo_live_range_test.cc, HloLiveRangeTest.InstructionScheduledAfterRoot: add2 follows the ROOT
// tuple: mul 2-7, add 4-7, tuple 5-7 (the values the ROOT holds live to the end), add2 6-6.
// tpuemu: the same, ending at the last position 6 (the tuple's buffer is its index table).
TEST(XlaFiguresLiveRange, InstructionScheduledAfterRoot) {
  const BufferSet set = text_buffers(R"(HloModule m, is_scheduled=true
ENTRY e {
  paramA = f32[4] parameter(0)
  paramX = f32[4] parameter(1)
  mul = f32[4] multiply(paramA, paramX)
  paramY = f32[4] parameter(2)
  add = f32[4] add(mul, paramY)
  ROOT tuple = (f32[4], f32[4]) tuple(mul, add)
  add2 = f32[4] add(mul, paramY)
})");
  EXPECT_EQ(set.positions, 7);
  EXPECT_EQ(range_of(set, "paramA"), Range(0, 6));
  EXPECT_EQ(range_of(set, "mul"), Range(2, 6));
  EXPECT_EQ(range_of(set, "add"), Range(4, 6));
  EXPECT_EQ(range_of(set, "tuple (index table)"), Range(5, 6));
  EXPECT_EQ(range_of(set, "add2"), Range(6, 6));
  EXPECT_EQ(named(set, "add2").kind, BufferKind::Temp);
}

// hlo_live_range_test.cc, HloLiveRangeTest.AliasedParameter: paramA is donated to the output
// (input_output_alias), so its value ends at its last use: paramA 0-2, mul 2-4, add 4-5, the
// other parameters 0-5. Differs on purpose: tpuemu joins a donated argument and its output into
// one buffer (docs/hlo.md, "Aliasing joins values into one buffer"), live 0-4 under paramA's name,
// kind output, shares_argument; XLA gives the two values one allocation too, so the bytes are
// the same.
TEST(XlaFiguresLiveRange, AliasedParameter) {
  const BufferSet set = text_buffers(R"(HloModule m, input_output_alias={ {}: (0, {}, may-alias) }
ENTRY e {
  paramA = f32[4] parameter(0)
  paramX = f32[4] parameter(1)
  mul = f32[4] multiply(paramA, paramX)
  paramY = f32[4] parameter(2)
  ROOT add = f32[4] add(mul, paramY)
})");
  EXPECT_EQ(set.buffers.size(), 4u);  // paramA+add, paramX, mul, paramY
  EXPECT_EQ(range_of(set, "paramA"), Range(0, 4));  // XLA: paramA 0-2, add 4-5
  EXPECT_TRUE(named(set, "paramA").shares_argument);
  EXPECT_EQ(range_of(set, "paramX"), Range(0, 4));
  EXPECT_EQ(range_of(set, "mul"), Range(2, 4));
}

// ---------------------------------------------------------------------------------------------
// Buffer assignment (assign_xla) on modules.
// ---------------------------------------------------------------------------------------------

// xla/service/buffer_assignment_test.cc, BufferAssignmentTest.OneTempAllocation: dot_ab (32 B)
// and dot_bc (48 B) share one temporary allocation: 80 B at alignment 1; at alignment 64, 112 B
// (dot_ab at 0, dot_bc at 64) or 96 B (dot_bc at 0, dot_ab at 64), the test accepting either.
// tpuemu: 80 B, and 96 B with dot_bc at 0 (the spatial order places the larger first).
TEST(XlaFiguresAssignment, OneTempAllocation) {
  const BufferSet set = text_buffers(R"(HloModule m
ENTRY e {
  param_a = f32[2,3] parameter(0)
  param_b = f32[3,4] parameter(1)
  param_c = f32[4,4] parameter(2)
  dot_ab = f32[2,4] dot(param_a, param_b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  dot_bc = f32[3,4] dot(param_b, param_c), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT concat = f32[5,4] concatenate(dot_ab, dot_bc), dimensions={0}
})");
  EXPECT_EQ(named(set, "dot_ab").bytes, 32u);
  EXPECT_EQ(named(set, "dot_bc").bytes, 48u);
  EXPECT_EQ(assign_xla(set, {}).temporaries_block_bytes, 80u);

  PlacementOptions aligned;
  aligned.alignment = 64;
  const Placement p = assign_xla(set, aligned);
  EXPECT_EQ(p.temporaries_block_bytes, 96u);
  // Own allocations: the three arguments (24 + 48 + 64 B) and the output (80 B), then the block.
  std::uint64_t block = 0;
  for (std::size_t i = 0; i < set.buffers.size(); ++i)
    if (set.buffers[i].name == "dot_bc") block = p.offsets[i];
  const Offsets o = offsets_of(set, p);
  EXPECT_EQ(o.at("dot_ab") - block, 64u);
  EXPECT_EQ(o.at("dot_bc") - block, 0u);
}

// buffer_assignment_test.cc, BufferAssignmentTest.PeakBuffers: log, rev, neg and concat are the
// temporary allocation's four buffers; at the peak, at concat, {rev, neg, concat} are live.
// tpuemu: the same four temporaries, the same peak set (1 600 B) and a block of exactly 1 600 B.
TEST(XlaFiguresAssignment, PeakBuffers) {
  const BufferSet set = text_buffers(R"(HloModule m
ENTRY e {
  p = f32[100] parameter(0)
  log = f32[100] log(p)
  rev = f32[100] reverse(log), dimensions={0}
  neg = f32[100] negate(p)
  concat = f32[200] concatenate(rev, neg), dimensions={0}
  ROOT root = f32[1] slice(concat), slice={[0:1]}
})");
  std::set<std::string> temps;
  for (const LiveBuffer& b : set.buffers)
    if (b.kind == BufferKind::Temp) temps.insert(b.name);
  EXPECT_EQ(temps, (std::set<std::string>{"log", "rev", "neg", "concat"}));

  BufferSet temp_set;
  temp_set.positions = set.positions;
  for (const LiveBuffer& b : set.buffers)
    if (b.kind == BufferKind::Temp) temp_set.buffers.push_back(b);
  const auto [at, bytes] = peak_position(temp_set);
  EXPECT_EQ(at, named(set, "concat").start);
  EXPECT_EQ(bytes, 1600u);
  std::set<std::string> at_peak;
  for (const LiveBuffer& b : temp_set.buffers)
    if (b.start <= at && at <= b.end) at_peak.insert(b.name);
  EXPECT_EQ(at_peak, (std::set<std::string>{"rev", "neg", "concat"}));
  EXPECT_EQ(assign_xla(set, {}).temporaries_block_bytes, 1600u);
}

// buffer_assignment_test.cc, BufferAssignmentTest.BufferInfoStringTest: per buffer, size,
// definition time and end time: param.0 4096 0-5, param.1 4096 1-5, mul 4096 2-3, add 4096 3-4,
// bcast 4194304 4-5; every offset 0. tpuemu: the sizes, and mul 2-3 and add 3-4 as XLA. It
// differs on purpose in three places: a parameter is live from position 0 (param.1: 0, where
// XLA's buffer info prints its instruction's time 1; its HloLiveRange, too, starts parameters at
// 0); the live-out ones end at the last position, 4; and add does not reuse mul's bytes (XLA
// shares a dying operand's buffer with an elementwise user; tpuemu shares only in-place
// dynamic-update-slice, docs/hlo.md "Liveness"), so the temporaries' block is 8192 B, not 4096.
TEST(XlaFiguresAssignment, BufferInfoStringTest) {
  const BufferSet set = text_buffers(R"(HloModule test_module, is_scheduled=true
ENTRY %test_module {
  %param.0 = s32[1024]{0} parameter(0)
  %param.1 = s32[1024]{0} parameter(1)
  %mul = s32[1024]{0} multiply(%param.0, %param.1)
  %add = s32[1024]{0} add(%mul, %param.0)
  ROOT %bcast = s32[1024,1024]{1,0} broadcast(s32[1024] %add), dimensions={0}
})");
  EXPECT_EQ(named(set, "param.0").bytes, 4096u);
  EXPECT_EQ(named(set, "param.1").bytes, 4096u);
  EXPECT_EQ(named(set, "mul").bytes, 4096u);
  EXPECT_EQ(named(set, "add").bytes, 4096u);
  EXPECT_EQ(named(set, "bcast").bytes, 4194304u);
  EXPECT_EQ(range_of(set, "param.0"), Range(0, 4));  // XLA 0-5
  EXPECT_EQ(range_of(set, "param.1"), Range(0, 4));  // XLA 1-5
  EXPECT_EQ(range_of(set, "mul"), Range(2, 3));
  EXPECT_EQ(range_of(set, "add"), Range(3, 4));
  EXPECT_EQ(range_of(set, "bcast"), Range(4, 4));  // XLA 4-5
  EXPECT_EQ(assign_xla(set, {}).temporaries_block_bytes, 8192u);  // XLA 4096: add reuses mul
}

}  // namespace
}  // namespace tpuemu::hlo
