// SPDX-License-Identifier: Apache-2.0
// The instruction trace port (tpu_top trace_o, docs/isa.md "Core ports") on the small core,
// through CoreSim::start_timeline: completions out of issue order carry the right queue index (an
// empty DMA done at issue while earlier DMAs are in flight; a LOADW on the shadow bank finishing
// before an earlier MATMUL), Done is where the signal fires, waits bracket the
// issue, and nothing is recorded when not asked.
#include <gtest/gtest.h>

#include <map>
#include <vector>

#include "core_fixture.h"

namespace tpuemu::test {
namespace {

constexpr std::uint8_t kDma = 0, kMxu = 1, kVec = 2;  // spec::trace::kEngines order
constexpr std::uint32_t kDimSmall = 8;

struct Seen {
  std::map<std::uint32_t, std::uint64_t> issue, done, wait_begin, wait_end;
  std::vector<std::uint32_t> done_order;
};

std::map<std::uint8_t, Seen> by_engine(const sim::Timeline& t) {
  std::map<std::uint8_t, Seen> out;
  for (const sim::TraceEvent& e : t.events) {
    Seen& s = out[e.engine];
    switch (e.kind) {
      case sim::TraceEvent::Issue: s.issue.emplace(e.index, e.cycle); break;
      case sim::TraceEvent::Done:
        s.done.emplace(e.index, e.cycle);
        s.done_order.push_back(e.index);
        break;
      case sim::TraceEvent::WaitBegin: s.wait_begin.emplace(e.index, e.cycle); break;
      case sim::TraceEvent::WaitEnd: s.wait_end[e.index] = e.cycle; break;
    }
  }
  return out;
}

TEST(CoreTrace, EngineOrderIsTheContracts) {
  ASSERT_EQ(spec::trace::kEngines.size(), 3u);
  EXPECT_EQ(spec::trace::kEngines[kDma].queue, spec::Queue::Dma);
  EXPECT_EQ(spec::trace::kEngines[kMxu].queue, spec::Queue::Mxu);
  EXPECT_EQ(spec::trace::kEngines[kVec].queue, spec::Queue::Vector);
}

TEST(CoreTrace, DmaCompletionsOutOfOrderCarryTheirIndex) {
  auto core = small_core(/*latency=*/60);
  // 0: VMEM->HBM, 64 rows (write class: done when the last write is acknowledged)
  // 1: HBM->VMEM, 1 row (read class: done when its beat is in VMEM)
  // 2: empty (done at issue)
  // 3: DMA.NOP fence signalling s1, 4: vector NOP waiting on it
  const Program p = assemble("dma hbm=0x10000 local=0 len=64 path=vmem2hbm signal=s0\n"
                             "dma hbm=0x0 local=100 len=1 path=hbm2vmem\n"
                             "dma hbm=0x0 local=0 len=0 path=hbm2vmem\n"
                             "nop.dma signal=s1\n"
                             "nop.vec wait=s1>=1\n"
                             "end\n");
  core->start_timeline();
  const auto run = run_core(*core, p);
  const sim::Timeline t = core->stop_timeline();
  ASSERT_TRUE(run.done) << "error " << run.error_code;
  ASSERT_TRUE(t.start.has_value());
  auto e = by_engine(t);
  const Seen& d = e[kDma];
  ASSERT_EQ(d.issue.size(), 4u);
  ASSERT_EQ(d.done.size(), 4u);
  for (std::uint32_t i = 0; i < 4; ++i) EXPECT_GE(d.done.at(i), d.issue.at(i)) << i;
  EXPECT_EQ(d.done.at(2), d.issue.at(2)) << "empty: done at issue";
  // the empty DMA completed before both earlier ones: completions out of issue order, each with
  // its own index (whether the read beats the write depends on the memory's latencies)
  EXPECT_LT(d.done.at(2), d.done.at(0));
  EXPECT_LT(d.done.at(2), d.done.at(1));
  EXPECT_EQ(d.done_order.front(), 2u);
  EXPECT_GT(d.issue.at(3), d.done.at(0)) << "the fence starts after everything before it";
  EXPECT_EQ(d.done.at(3), d.issue.at(3));
  EXPECT_EQ(d.done_order.back(), 3u);
  // the vector NOP waited for the fence's signal: its wait ends as it issues
  const Seen& v = e[kVec];
  ASSERT_EQ(v.wait_begin.count(0), 1u);
  EXPECT_LT(v.wait_begin.at(0), v.issue.at(0));
  EXPECT_EQ(v.wait_end.at(0), v.issue.at(0));
  EXPECT_GT(v.issue.at(0), d.done.at(3));
  EXPECT_TRUE(e[kMxu].issue.empty());
}

TEST(CoreTrace, LoadwOnTheShadowBankFinishesBeforeTheEarlierMatmul) {
  auto core = small_core();
  // weights for both banks and 200 input rows, then MATMUL on bank 0 (long) and LOADW bank 1
  const Program p = assemble("dma hbm=0x0 local=0 len=216 path=hbm2vmem signal=s0\n"
                             "loadw vmem=200 bank=0 wait=s0>=1\n"
                             "matmul vmem=0 acc=0 rows=200 bank=0 signal=s2\n"
                             "loadw vmem=208 bank=1\n"
                             "matmul vmem=0 acc=200 rows=0 bank=1\n"
                             "nop.mxu\n"
                             "end\n");
  core->start_timeline();
  const auto run = run_core(*core, p);
  const sim::Timeline t = core->stop_timeline();
  ASSERT_TRUE(run.done) << "error " << run.error_code;
  auto e = by_engine(t);
  const Seen& m = e[kMxu];
  ASSERT_EQ(m.issue.size(), 5u);
  ASSERT_EQ(m.done.size(), 5u);
  EXPECT_LT(m.done.at(2), m.done.at(1)) << "LOADW bank 1 (index 2) before MATMUL bank 0 (index 1)";
  EXPECT_EQ(m.done.at(3), m.issue.at(3)) << "empty MATMUL: done at issue";
  EXPECT_GE(m.done.at(1) - m.issue.at(1), 200u + spec::kMxuLatencyPerDim * kDimSmall) << "rows + array latency";
  EXPECT_GE(m.issue.at(4), m.done.at(1)) << "MXU.NOP fences the MATMUL";
  // the LOADW waited on s0: its wait ends as it issues
  ASSERT_EQ(m.wait_begin.count(0), 1u);
  EXPECT_EQ(m.wait_end.at(0), m.issue.at(0));
  EXPECT_EQ(counter(*core, spec::counter::mxu_busy), 200u);
}

TEST(CoreTrace, NothingRecordedOutsideStartStop) {
  auto core = small_core();
  const Program p = assemble("nop.dma\nnop.mxu\nnop.vec\nend\n");
  core->start_timeline();
  const sim::Timeline empty_before = core->stop_timeline();
  EXPECT_TRUE(empty_before.events.empty());
  ASSERT_TRUE(run_core(*core, p).done);
  core->start_timeline();
  const sim::Timeline after = core->stop_timeline();
  EXPECT_TRUE(after.events.empty()) << "the run happened while not recording";
  core->start_timeline();
  ASSERT_TRUE(run_core(*core, p).done);
  const sim::Timeline rec = core->stop_timeline();
  EXPECT_EQ(rec.events.size(), 6u) << "three NOPs: an issue and a done each";
  EXPECT_TRUE(rec.hbm.empty()) << "simple memory model";
}

}  // namespace
}  // namespace tpuemu::test
