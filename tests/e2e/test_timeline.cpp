// SPDX-License-Identifier: Apache-2.0
// Instruction timelines (RunOptions::record_timeline) of a compiled matmul on the rtl backend
// (the `default` preset: DIM 16 on the HBM model) and on the fake backend: every instruction
// issues and completes, done >= issue, each queue issues in program order, waits come before
// their issue on the header's semaphore, MXU busy time agrees with the mxu_busy counter, and on
// HBM every channel that moved data has busy intervals and refreshes appear once the run is longer
// than tREFI. Plus the Chrome trace of it and the timeline's absence when not asked for.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <map>
#include <set>

#include "tpuemu/compile/workload.h"
#include "tpuemu/config/config.h"
#include "tpuemu/config/hbm_config.h"
#include "tpuemu/device/timeline.h"
#include "tpuemu/run/runner.h"
#include "tpuemu/spec/contract.h"

namespace tpuemu {
namespace {

struct Recorded {
  Preset preset;
  WorkloadReport report;
  std::vector<InstructionSpan> spans;
};

// One recorded 128x256x128 matmul per backend, shared by the tests.
const Recorded& recorded(const std::string& backend) {
  static std::map<std::string, Recorded> cache;
  auto it = cache.find(backend);
  if (it == cache.end()) {
    Recorded r;
    r.preset = load_preset("default");
    RunSettings s;
    s.backend = backend;
    s.record_timeline = true;
    r.report = run_workload(r.preset, make_matmul_workload(128, 256, 128, true, 3), s);
    r.spans = instruction_spans(r.report.run.timeline, r.report.program);
    it = cache.emplace(backend, std::move(r)).first;
  }
  return it->second;
}

// The 32-bit words of instruction `pc` of a program image.
std::array<std::uint32_t, spec::kInstrWords> words_of(const std::vector<std::uint8_t>& program, std::size_t pc) {
  std::array<std::uint32_t, spec::kInstrWords> w{};
  for (std::size_t i = 0; i < w.size(); ++i) {
    for (unsigned b = 0; b < 4; ++b) w[i] |= std::uint32_t{program[pc * 32 + 4 * i + b]} << (8 * b);
  }
  return w;
}

class Timeline : public ::testing::TestWithParam<std::string> {};

TEST_P(Timeline, EveryInstructionIssuesAndCompletesInProgramOrderPerQueue) {
  const Recorded& r = recorded(GetParam());
  ASSERT_TRUE(r.report.bit_exact) << r.report.first_mismatch;
  ASSERT_EQ(r.spans.size() + 1, r.report.program_instructions) << "all but END";
  std::map<Queue, std::uint64_t> last_issue;
  std::map<Queue, std::uint32_t> next_index;
  std::size_t waits = 0;
  for (const InstructionSpan& s : r.spans) {
    SCOPED_TRACE(::testing::Message() << "pc " << s.program_index << " opcode " << int(s.opcode));
    ASSERT_TRUE(s.issue.has_value());
    ASSERT_TRUE(s.done.has_value());
    EXPECT_GE(*s.done, *s.issue);
    EXPECT_EQ(s.queue_index, next_index[s.queue]++);
    EXPECT_GE(*s.issue, last_issue[s.queue]) << "issues in program order within the queue";
    last_issue[s.queue] = *s.issue;
    if (s.wait_begin) {
      ++waits;
      ASSERT_TRUE(s.wait_sem.has_value()) << "only instructions that wait have waits";
      ASSERT_TRUE(s.wait_end.has_value());
      EXPECT_LE(*s.wait_begin, *s.wait_end);
      EXPECT_EQ(*s.wait_end, *s.issue) << "the wait ends as the instruction issues";
      EXPECT_EQ(*s.wait_sem, spec::instr::header::wait_sem.get(words_of(r.report.program, s.program_index)));
    }
  }
  EXPECT_GT(waits, 0u) << "a double-buffered matmul waits on its semaphores";
  // The raw events: Issue events of a queue come in queue-index order, and a WaitBegin precedes
  // the Issue of the same instruction.
  std::map<Queue, std::uint32_t> issued;
  std::map<std::pair<Queue, std::uint32_t>, std::uint64_t> wait_began;
  std::uint64_t prev = 0;
  for (const TimelineEvent& e : r.report.run.timeline) {
    EXPECT_GE(e.cycle, prev) << "events in cycle order";
    prev = e.cycle;
    if (e.kind == TimelineEvent::Issue) {
      EXPECT_EQ(e.queue_index, issued[e.queue]++);
      if (const auto w = wait_began.find({e.queue, e.queue_index}); w != wait_began.end()) {
        EXPECT_LE(w->second, e.cycle);
      }
    } else if (e.kind == TimelineEvent::WaitBegin) {
      EXPECT_EQ(e.queue_index, issued[e.queue]) << "the head waits";
      wait_began.emplace(std::make_pair(e.queue, e.queue_index), e.cycle);
    }
  }
}

// mxu_busy counts the cycles a row entered the array: every row of every MATMUL once, and at most
// one per cycle, each inside its MATMUL's [issue, done]. So the MATMUL intervals cover at least
// mxu_busy cycles (their union; the rtl backend overlaps consecutive MATMULs), and every MATMUL
// lasts at least its rows. The fake backend runs one instruction at a time for `rows` cycles:
// there the intervals add up to mxu_busy exactly.
TEST_P(Timeline, MatmulIntervalsAccountForMxuBusy) {
  const Recorded& r = recorded(GetParam());
  std::vector<std::pair<std::uint64_t, std::uint64_t>> intervals;
  std::uint64_t rows = 0, sum = 0;
  for (const InstructionSpan& s : r.spans) {
    if (s.opcode != spec::Opcode::Matmul) continue;
    const std::uint32_t n = spec::instr::matmul::rows.get(words_of(r.report.program, s.program_index));
    rows += n;
    EXPECT_GE(*s.done - *s.issue, n) << "pc " << s.program_index;
    intervals.emplace_back(*s.issue, *s.done);
    sum += *s.done - *s.issue;
  }
  ASSERT_FALSE(intervals.empty());
  EXPECT_EQ(rows, r.report.counters.mxu_busy);
  std::sort(intervals.begin(), intervals.end());
  std::uint64_t covered = 0, end = 0;
  for (const auto& [b, e] : intervals) {
    const std::uint64_t from = std::max(b, end);
    if (e > from) covered += e - from;
    end = std::max(end, e);
  }
  EXPECT_GE(covered, r.report.counters.mxu_busy);
  if (GetParam() == "fake") {
    EXPECT_EQ(sum, r.report.counters.mxu_busy);
  }
  // and nothing happens after the run: the last completion is within its cycles
  std::uint64_t last_done = 0;
  for (const InstructionSpan& s : r.spans) last_done = std::max(last_done, *s.done);
  EXPECT_LE(last_done, r.report.run.cycles);
}

TEST_P(Timeline, HbmChannelsThatMovedDataAreBusyAndRefresh) {
  const Recorded& r = recorded(GetParam());
  const auto& hbm = r.report.run.hbm_timeline;
  if (GetParam() == "fake") {
    EXPECT_TRUE(hbm.empty()) << "the fake backend has no HBM model";
    return;
  }
  ASSERT_TRUE(r.report.hbm.has_value());
  const MemoryStatistics& stats = *r.report.hbm;
  const HbmTimingSet set = load_hbm_timing_set(r.preset.hbm.timing_set);
  const auto channels = static_cast<std::size_t>(set.geometry.channels);
  std::vector<std::uint64_t> busy(channels), refreshes(channels);
  std::vector<std::uint64_t> last_end(channels);
  for (const HbmInterval& h : hbm) {
    ASSERT_LT(h.channel, channels);
    EXPECT_LT(h.begin, h.end);
    if (h.kind == HbmInterval::Busy) {
      if (last_end[h.channel] > 0) {
        EXPECT_GT(h.begin, last_end[h.channel]) << "coalesced: a gap between two";
      }
      last_end[h.channel] = h.end;
      busy[h.channel] += h.end - h.begin;
    } else {
      ++refreshes[h.channel];
    }
  }
  std::size_t used = 0;
  for (std::size_t c = 0; c < channels; ++c) {
    const double bursts = stats.channel("reads", c) + stats.channel("writes", c);
    if (bursts == 0) continue;
    ++used;
    EXPECT_GT(busy[c], 0u) << "channel " << c << " moved " << bursts << " bursts";
  }
  EXPECT_GT(used, 0u);
  // tREFI in core cycles: tREFI tCK at tck_ns, the core at clock_ghz
  const double trefi_core = set.timings.tREFI * set.tck_ns() * r.preset.clock_ghz;
  ASSERT_GT(static_cast<double>(r.report.run.cycles), 2 * trefi_core) << "the run is long enough to refresh";
  for (std::size_t c = 0; c < channels; ++c) EXPECT_GT(refreshes[c], 0u) << "channel " << c;
}


TEST_P(Timeline, NotRecordedUnlessAsked) {
  RunSettings s;
  s.backend = GetParam();
  const WorkloadReport r = run_workload(load_preset("small"), make_matmul_workload(16, 16, 16, false, 1), s);
  EXPECT_TRUE(r.run.timeline.empty());
  EXPECT_TRUE(r.run.hbm_timeline.empty());
  EXPECT_TRUE(r.program.empty());
}

// A stoppable run (RunSettings::interrupted set) is made of RUN ... RESUME slices; the core is not
// clocked between two, so the cycles, the counters, the timeline and the HBM intervals are those
// of one RUN. 256^3 on default is about 70 000 cycles: several slices of the first 4 096.
TEST_P(Timeline, ARunInSlicesIsTheSameAsOneRun) {
  const Preset preset = load_preset("default");
  RunSettings whole;
  whole.backend = GetParam();
  whole.record_timeline = true;
  RunSettings sliced = whole;
  std::size_t asked = 0;
  sliced.interrupted = [&asked] {
    ++asked;
    return false;
  };
  const WorkloadReport a = run_workload(preset, make_matmul_workload(256, 256, 256, true, 5), whole);
  const WorkloadReport b = run_workload(preset, make_matmul_workload(256, 256, 256, true, 5), sliced);
  ASSERT_TRUE(a.bit_exact && b.bit_exact);
  EXPECT_GT(asked, 3u) << "the run was not sliced";
  EXPECT_EQ(a.run.cycles, b.run.cycles);
  EXPECT_EQ(a.counters, b.counters);
  EXPECT_EQ(a.run.timeline, b.run.timeline);
  EXPECT_EQ(a.run.hbm_timeline, b.run.hbm_timeline);
}

INSTANTIATE_TEST_SUITE_P(Backends, Timeline, ::testing::Values("rtl", "fake"),
                         [](const auto& info) { return std::string(info.param); });

}  // namespace
}  // namespace tpuemu
