// SPDX-License-Identifier: Apache-2.0
// Properties of the tlm backend's HBM timing model alone (sim/tlm, docs/hbm-trace.md):
// no Verilator, fixed addresses and seeds.
#include <gtest/gtest.h>

#include <filesystem>
#include <random>
#include <stdexcept>
#include <string>

#include "tpuemu/config/hbm_config.h"
#include "tpuemu/sim/hbm_address.h"
#include "tpuemu/sim_setup/hbm_setup.h"
#include "tpuemu/tlm/hbm_beat_timing.h"
#include "tpuemu/tlm/hbm_timing.h"

namespace {

namespace hbm = tpuemu::sim::hbm;
using tpuemu::tlm::BurstTiming;
using tpuemu::tlm::HbmBurstTiming;

hbm::HbmSetup hbm2() {
  return tpuemu::hbm_setup_from(tpuemu::load_hbm_timing_set_file(
      std::filesystem::path(TPUEMU_SOURCE_DIR) / "configs/hbm/hbm2-2000.json"));
}

// The byte address of a coordinate under the setup's map.
std::uint64_t address(const hbm::HbmSetup& s, std::uint32_t ch, std::uint32_t bg, std::uint32_t ba,
                      std::uint32_t row, std::uint32_t col) {
  const hbm::AddressLayout l = hbm::address_layout(
      hbm::AddressLayout::named_order(static_cast<std::uint32_t>(s.order)), s.dram);
  hbm::FieldValues v{};
  namespace field = tpuemu::spec::hbm::field;
  v[field::ch] = ch;
  v[field::bg] = bg;
  v[field::ba] = ba;
  v[field::ro] = row;
  v[field::co] = col;
  return l.encode(v);
}

TEST(HbmTimingModel, IdleReadTakesTheControllerPipelinePlusActivation) {
  const hbm::HbmSetup s = hbm2();
  HbmBurstTiming m(s);
  const BurstTiming t = m.request(10, false, address(s, 0, 0, 0, 5, 0));
  EXPECT_EQ(t.accept, 10u);
  // accept, input register, queue, ACT, tRCD, RD on the bus a cycle later, CL + tBURST, out.
  EXPECT_EQ(t.done - t.accept, 2 + s.dram.tRCD + 1 + s.dram.CL + s.dram.tBURST() + 1);
}

TEST(HbmTimingModel, RowHitIsFasterThanMissIsFasterThanConflict) {
  const hbm::HbmSetup s = hbm2();
  HbmBurstTiming m(s);
  const std::uint64_t miss = [&] { const auto t = m.request(100, false, address(s, 1, 0, 0, 7, 0)); return t.done - t.accept; }();
  const std::uint64_t hit = [&] { const auto t = m.request(1000, false, address(s, 1, 0, 0, 7, 1)); return t.done - t.accept; }();
  const std::uint64_t conflict = [&] { const auto t = m.request(2000, false, address(s, 1, 0, 0, 8, 0)); return t.done - t.accept; }();
  EXPECT_LT(hit, miss);
  EXPECT_LT(miss, conflict);
  EXPECT_EQ(miss - hit, s.dram.tRCD);
  EXPECT_EQ(conflict - miss, s.dram.tRP);
  const hbm::Statistics st = m.statistics();
  EXPECT_EQ(st.total.row_hits, 1u);
  EXPECT_EQ(st.total.row_misses, 1u);
  EXPECT_EQ(st.total.row_conflicts, 1u);
  EXPECT_EQ(st.total.acts, 2u);
}

TEST(HbmTimingModel, EachChannelTakesOneRequestPerCycleInOrder) {
  const hbm::HbmSetup s = hbm2();
  HbmBurstTiming m(s);
  std::mt19937_64 rng(3);
  std::vector<std::uint64_t> last_accept(s.dram.channels, 0);
  for (int i = 0; i < 20'000; ++i) {
    const std::uint64_t a = (rng() % (s.dram.capacity_bytes() / 64)) * 64;
    const BurstTiming t = m.request(0, (rng() & 3) == 0, a);
    const std::uint32_t ch = hbm::coordinate_of(hbm::address_layout(hbm::AddressLayout::named_order(
        static_cast<std::uint32_t>(s.order)), s.dram).decode(a)).channel;
    EXPECT_GT(t.accept, last_accept[ch]);  // a channel takes one request per cycle, in order
    EXPECT_GT(t.done, t.accept);
    last_accept[ch] = t.accept;
  }
  const hbm::Statistics st = m.statistics();
  EXPECT_EQ(st.total.reads + st.total.writes, 20'000u);
  EXPECT_GT(st.bytes_per_cycle, 0.1 * st.peak_bytes_per_cycle);
  EXPECT_LT(st.bytes_per_cycle, st.peak_bytes_per_cycle);
}

TEST(HbmTimingModel, RefreshesEveryTrefiAndStallsTheChannel) {
  const hbm::HbmSetup s = hbm2();
  HbmBurstTiming m(s);
  // A request that becomes ready just when the first REF is due waits for tRFC.
  const std::uint64_t due = s.dram.tREFI + 2;
  const BurstTiming before = m.request(100, false, address(s, 2, 0, 0, 1, 0));
  const BurstTiming during = m.request(due - 2, false, address(s, 2, 1, 0, 1, 0));
  EXPECT_LT(before.done - before.accept, 50u);
  EXPECT_GE(during.done, due + s.dram.tRFC);
  m.finish(10 * s.dram.tREFI + 5);
  const hbm::Statistics st = m.statistics();
  EXPECT_EQ(st.total.refreshes, 10u * s.dram.channels);
  EXPECT_GE(st.total.refresh_cycles, 10u * s.dram.channels * s.dram.tRFC);
}

TEST(HbmTimingModel, WritesArePostedAndReadsPassThemUnlessTheyReadTheirBurst) {
  const hbm::HbmSetup s = hbm2();
  // A write is answered the cycle after it is queued (accept, input register, queue, answer).
  HbmBurstTiming lone(s);
  const BurstTiming w = lone.request(100, true, address(s, 3, 0, 0, 5, 0));
  EXPECT_EQ(w.done - w.accept, 2u);
  // A read of another burst goes ahead of the queued write (reads are served first, and the
  // write's drain ends when the read comes); a read of the same burst waits for the write's WR
  // and the bus turnaround after it.
  HbmBurstTiming passes(s), waits(s);
  passes.request(100, true, address(s, 3, 0, 0, 5, 0));
  waits.request(100, true, address(s, 3, 0, 0, 5, 0));
  const BurstTiming other = passes.request(101, false, address(s, 3, 0, 0, 5, 1));
  const BurstTiming same = waits.request(101, false, address(s, 3, 0, 0, 5, 0));
  EXPECT_EQ(other.done - other.accept, 2 + s.dram.tRCD + 1 + s.dram.CL + s.dram.tBURST() + 1);
  // The write, queued a cycle before the read, opens the row a cycle earlier than the read did.
  EXPECT_EQ(same.done, other.done - 1 + s.dram.derived().wr2rd_l);
  // Every write has issued by the end of the run.
  for (HbmBurstTiming* m : {&passes, &waits}) {
    m->finish(2000);
    EXPECT_EQ(m->statistics().total.writes, 1u);
    EXPECT_EQ(m->statistics().total.row_hits + m->statistics().total.row_misses, 2u);
  }
}

TEST(HbmBeatTiming, BeatsOfOneBurstShareItAndComeBackInOrder) {
  const hbm::HbmSetup s = hbm2();
  const auto m = tpuemu::tlm::make_hbm_beat_timing(s, 1.0, 16, 1u << 28);
  std::uint64_t cycle = 0, last = 0;
  for (int i = 0; i < 64; ++i) {
    const tpuemu::tlm::BeatTiming t = m->access(cycle, false, 16u * i);
    EXPECT_GE(t.accept, cycle);
    EXPECT_GT(t.done, last);
    last = t.done;
    cycle = t.accept + 1;
  }
  // 64 beats of 16 bytes are 16 bursts: four beats share each RD.
  EXPECT_EQ(m->statistics().total.reads, 16u);
  const auto wide = tpuemu::tlm::make_hbm_beat_timing(s, 1.0, 128, 1u << 28);
  wide->access(0, true, 0);
  EXPECT_EQ(wide->statistics().total.writes, 2u);  // a 128-byte beat spans two bursts
}

TEST(HbmBeatTiming, BackPressureWhenTheBridgeIsFull) {
  const hbm::HbmSetup s = hbm2();
  const auto m = tpuemu::tlm::make_hbm_beat_timing(s, 1.0, 128, 1u << 28);
  std::mt19937_64 rng(5);
  std::uint64_t cycle = 0;
  bool waited = false;
  for (int i = 0; i < 2000; ++i) {
    const tpuemu::tlm::BeatTiming t = m->access(cycle, false, (rng() % (1u << 21)) * 128);
    waited = waited || t.accept > cycle;
    cycle = t.accept + 1;
  }
  EXPECT_TRUE(waited);  // random 128-byte reads outrun the DRAM: ids run out, the port stalls
}

// The shortcuts (the stream path) must find exactly the slots of the general search: the same
// (accept, done) for every beat and the same counters, on seeded streams, streams that cross
// rows and refreshes, random and mixed beats, with open and closed page.
TEST(HbmBeatTiming, StreamPathFindsTheSlotsOfTheGeneralSearch) {
  namespace tlm = tpuemu::tlm;
  struct Case {
    const char* set;
    double ratio;
    std::uint32_t beat_bytes;
  };
  for (const Case c : {Case{"hbm2-2000", 1.0, 16}, Case{"hbm2-2000", 1.0, 128}, Case{"hbm2e-3200", 1.6, 16},
                       Case{"hbm2e-3200", 1.6, 128}, Case{"hbm3-6400", 3.2, 128}}) {
    for (const bool closed_page : {false, true}) {
      hbm::HbmSetup s = tpuemu::hbm_setup_from(tpuemu::load_hbm_timing_set_file(
          std::filesystem::path(TPUEMU_SOURCE_DIR) / "configs/hbm" / (std::string(c.set) + ".json")));
      s.closed_page = closed_page;
      const std::uint64_t capacity = 256ull << 20;
      const std::uint64_t beats_in = capacity / c.beat_bytes;
      const auto fast = tlm::make_hbm_beat_timing(s, c.ratio, c.beat_bytes, capacity, tlm::HbmTimingShortcuts::Taken);
      const auto general = tlm::make_hbm_beat_timing(s, c.ratio, c.beat_bytes, capacity, tlm::HbmTimingShortcuts::Off);
      std::mt19937_64 rng(17);
      std::uint64_t presented = 0;
      int beat = 0;
      // Streams (reads, writes, both by stretches or at random, two interleaved, one with random
      // reads among its beats), random beats, short pauses, and idle stretches that let
      // refreshes pass.
      while (beat < 40'000) {
        const std::uint64_t kind = rng() % 8;
        const std::uint64_t len = kind <= 2 || kind >= 6 ? 100 + rng() % 2000 : 1 + rng() % 200;
        const std::uint64_t addr = rng() % beats_in, other = rng() % beats_in;
        for (std::uint64_t i = 0; i < len; ++i, ++beat) {
          bool write = kind == 1;
          std::uint64_t a = (addr + i) % beats_in;
          if (kind == 2) write = (i / 64) % 2 == 1;
          if (kind == 3) a = rng() % beats_in;
          if (kind == 4) {
            a = rng() % beats_in;
            write = (rng() & 1) != 0;
          }
          if (kind == 5) write = (rng() & 3) == 0;
          if (kind == 6) a = (i % 2 == 0 ? addr + i / 2 : other + i / 2) % beats_in;
          if (kind == 7 && rng() % 4 == 0) a = rng() % beats_in;
          if (rng() % 16 == 0) presented += rng() % 24;  // a short pause
          const tlm::BeatTiming f = fast->access(presented, write, a * c.beat_bytes);
          const tlm::BeatTiming g = general->access(presented, write, a * c.beat_bytes);
          ASSERT_EQ(f.accept, g.accept) << c.set << " beat " << c.beat_bytes << " #" << beat;
          ASSERT_EQ(f.done, g.done) << c.set << " beat " << c.beat_bytes << " #" << beat;
          presented = f.accept + 1;
          if (rng() % 500 == 0) presented += rng() % 3000;  // sometimes idle, across refreshes
        }
      }
      fast->finish(presented + 10);
      general->finish(presented + 10);
      const hbm::Statistics fs = fast->statistics(), gs = general->statistics();
      EXPECT_EQ(fs.cycles, gs.cycles) << c.set;
      EXPECT_EQ(fs.total.reads, gs.total.reads) << c.set;
      EXPECT_EQ(fs.total.writes, gs.total.writes) << c.set;
      EXPECT_EQ(fs.total.row_hits, gs.total.row_hits) << c.set;
      EXPECT_EQ(fs.total.acts, gs.total.acts) << c.set;
      EXPECT_EQ(fs.total.refreshes, gs.total.refreshes) << c.set;
      EXPECT_EQ(fs.total.turnarounds, gs.total.turnarounds) << c.set;
      EXPECT_EQ(fs.total.read_latency_sum, gs.total.read_latency_sum) << c.set;
    }
  }
}

TEST(HbmBeatTiming, RejectsBadArguments) {
  const hbm::HbmSetup s = hbm2();
  EXPECT_THROW(tpuemu::tlm::make_hbm_beat_timing(s, 0.0, 16, 1u << 20), std::invalid_argument);
  EXPECT_THROW(tpuemu::tlm::make_hbm_beat_timing(s, 1.0, 48, 1u << 20), std::invalid_argument);
  EXPECT_THROW(tpuemu::tlm::make_hbm_beat_timing(s, 1.0, 16, s.dram.capacity_bytes() * 2), std::invalid_argument);
  hbm::HbmSetup bad = s;
  bad.dram.rows = 3;
  EXPECT_THROW(HbmBurstTiming{bad}, std::invalid_argument);
}

}  // namespace
