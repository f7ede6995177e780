// SPDX-License-Identifier: Apache-2.0
// The HBM DRAM device model (sim/src/dram/device.*, docs/hbm.md):
// one test per timing constraint (an injected violation is caught, and the same command one
// cycle later is accepted), state errors, refresh deadline, read-data timing, sparse storage,
// statistics, and data integrity under random legal command sequences on every channel.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "dram/device.h"
#include "tpuemu/sim_setup/hbm_setup.h"

namespace tpuemu::sim::dram {
namespace {

// A small device whose timings are all different, so that each rule can be broken alone:
// tRC > tRAS + tRP, tCCD_S > tBURST, tFAW > 3 * tRRD_S, ...
Config test_config() {
  Config c;
  c.channels = 2;
  c.bank_groups = 4;
  c.banks_per_group = 4;
  c.rows = 64;
  c.columns = 8;
  c.bus_bytes = 16;
  c.burst_length = 4;  // tBURST 2, 64-byte bursts
  c.CL = 10;
  c.CWL = 3;
  c.tRCD = 7;
  c.tRP = 6;
  c.tRAS = 15;
  c.tRC = 25;
  c.tRRD_S = 3;
  c.tRRD_L = 5;
  c.tFAW = 20;
  c.tCCD_S = 3;
  c.tCCD_L = 5;
  c.tWTR_S = 2;
  c.tWTR_L = 4;
  c.tWR = 5;
  c.tRTP = 4;
  c.tRFC = 30;
  c.tREFI = 200;  // refresh deadline 9 * 200 = 1800
  return c;
}

// The HBM2-2000 reference set, loaded from configs/hbm/hbm2-2000.json as the emulator loads it.
Config hbm2_config() {
  const auto root = std::filesystem::path(TPUEMU_TEST_PRESET_DIR).parent_path().parent_path();
  return hbm_setup_from(load_hbm_timing_set_file(root / "configs/hbm/hbm2-2000.json")).dram;
}

std::array<std::uint8_t, 64> pattern(std::uint8_t seed) {
  std::array<std::uint8_t, 64> d{};
  for (std::size_t i = 0; i < d.size(); ++i) d[i] = static_cast<std::uint8_t>(seed * 31 + i);
  return d;
}

const std::array<std::uint8_t, 64> kData = pattern(1);

TimingViolation violation_of(auto&& f) {
  try {
    f();
  } catch (const TimingViolation& v) {
    return v;
  }
  ADD_FAILURE() << "no TimingViolation";
  return TimingViolation({.constraint = "(none)"});
}

// `cmd` at first_ok - 1 breaks `constraint` by exactly one cycle; at first_ok it is accepted.
void expect_boundary(Device& d, std::uint32_t channel, const Command& cmd, std::uint64_t first_ok,
                     const std::string& constraint, std::int64_t required) {
  SCOPED_TRACE(constraint);
  const auto v = violation_of([&] { d.command(first_ok - 1, channel, cmd); });
  EXPECT_EQ(v.constraint(), constraint) << v.what();
  EXPECT_EQ(v.required(), required) << v.what();
  EXPECT_EQ(v.measured(), required - 1) << v.what();
  EXPECT_EQ(v.cycle(), first_ok - 1);
  EXPECT_EQ(v.channel(), channel);
  EXPECT_EQ(v.command(), cmd.op);
  EXPECT_NO_THROW(d.command(first_ok, channel, cmd));
}

// ---------------------------------------------------------------------------------------------
// One test per timing constraint
// ---------------------------------------------------------------------------------------------

TEST(DramTiming, tRCD) {
  Device d(test_config());
  d.command(0, 0, Command::act(1, 2, 5));
  expect_boundary(d, 0, Command::rd(1, 2, 0), 7, "tRCD", 7);
  d.command(20, 1, Command::act(0, 0, 1));
  expect_boundary(d, 1, Command::wr(0, 0, 0, kData.data()), 27, "tRCD", 7);
}

TEST(DramTiming, tRP) {
  Device d(test_config());
  d.command(0, 0, Command::act(0, 0, 1));
  d.command(20, 0, Command::pre(0, 0));
  expect_boundary(d, 0, Command::act(0, 0, 2), 26, "tRP", 6);
  // PREA starts tRP for every bank it closes.
  d.command(60, 0, Command::prea());
  expect_boundary(d, 0, Command::act(0, 0, 3), 66, "tRP", 6);
}

TEST(DramTiming, tRAS) {
  Device d(test_config());
  d.command(0, 0, Command::act(2, 1, 9));
  expect_boundary(d, 0, Command::pre(2, 1), 15, "tRAS", 15);
  d.command(100, 0, Command::act(3, 3, 9));
  expect_boundary(d, 0, Command::prea(), 115, "tRAS", 15);
}

TEST(DramTiming, tRC) {
  Device d(test_config());
  d.command(0, 0, Command::act(0, 1, 1));
  d.command(15, 0, Command::pre(0, 1));
  // tRP is met from cycle 21; tRC (25) is the binding rule.
  expect_boundary(d, 0, Command::act(0, 1, 2), 25, "tRC", 25);
}

TEST(DramTiming, tRRD_L) {
  Device d(test_config());
  d.command(0, 0, Command::act(2, 0, 1));
  expect_boundary(d, 0, Command::act(2, 1, 1), 5, "tRRD_L", 5);
}

TEST(DramTiming, tRRD_S) {
  Device d(test_config());
  d.command(0, 0, Command::act(2, 0, 1));
  expect_boundary(d, 0, Command::act(3, 0, 1), 3, "tRRD_S", 3);
}

TEST(DramTiming, tFAW) {
  Device d(test_config());
  d.command(0, 0, Command::act(0, 0, 1));
  d.command(4, 0, Command::act(1, 0, 1));
  d.command(8, 0, Command::act(2, 0, 1));
  d.command(12, 0, Command::act(3, 0, 1));
  // The fifth ACT: tRRD_S and tRRD_L are met, but four ACTs already fall in the window.
  expect_boundary(d, 0, Command::act(0, 1, 1), 20, "tFAW", 20);
  // The window rolls: the next ACT is measured from the ACT at 4.
  expect_boundary(d, 0, Command::act(1, 1, 1), 24, "tFAW", 20);
  // Other channels have their own window.
  EXPECT_NO_THROW(d.command(24, 1, Command::act(0, 0, 1)));
}

TEST(DramTiming, tCCD_L) {
  Device d(test_config());
  d.command(0, 0, Command::act(1, 0, 1));
  d.command(5, 0, Command::act(1, 1, 1));
  d.command(12, 0, Command::rd(1, 0, 0));
  expect_boundary(d, 0, Command::rd(1, 1, 0), 17, "tCCD_L", 5);
  d.command(40, 0, Command::wr(1, 0, 0, kData.data()));
  expect_boundary(d, 0, Command::wr(1, 1, 0, kData.data()), 45, "tCCD_L", 5);
}

TEST(DramTiming, tCCD_S) {
  Device d(test_config());
  d.command(0, 0, Command::act(0, 0, 1));
  d.command(3, 0, Command::act(1, 0, 1));
  d.command(10, 0, Command::rd(0, 0, 0));
  // 2 cycles satisfy tBURST but not tCCD_S = 3.
  expect_boundary(d, 0, Command::rd(1, 0, 0), 13, "tCCD_S", 3);
  d.command(40, 0, Command::wr(0, 0, 0, kData.data()));
  expect_boundary(d, 0, Command::wr(1, 0, 0, kData.data()), 43, "tCCD_S", 3);
}

TEST(DramTiming, tBURST) {
  // As on HBM2: tCCD_S (1) shorter than a burst on the data bus (2).
  Config c = test_config();
  c.tCCD_S = 1;
  Device d(c);
  d.command(0, 0, Command::act(0, 0, 1));
  d.command(3, 0, Command::act(1, 0, 1));
  d.command(10, 0, Command::rd(0, 0, 0));
  expect_boundary(d, 0, Command::rd(1, 0, 1), 12, "tBURST", 2);
  d.command(40, 0, Command::wr(0, 0, 0, kData.data()));
  expect_boundary(d, 0, Command::wr(1, 0, 1, kData.data()), 42, "tBURST", 2);
}

TEST(DramTiming, tWTR_L) {
  Device d(test_config());
  d.command(0, 0, Command::act(2, 2, 1));
  d.command(7, 0, Command::wr(2, 2, 0, kData.data()));
  // Same bank group: CWL 3 + tBURST 2 + tWTR_L 4 = 9.
  expect_boundary(d, 0, Command::rd(2, 2, 0), 16, "tWTR_L", 9);
}

TEST(DramTiming, tWTR_S) {
  Device d(test_config());
  d.command(0, 0, Command::act(0, 0, 1));
  d.command(3, 0, Command::act(1, 0, 1));
  d.command(10, 0, Command::wr(0, 0, 0, kData.data()));
  // Other bank group: CWL 3 + tBURST 2 + tWTR_S 2 = 7.
  expect_boundary(d, 0, Command::rd(1, 0, 0), 17, "tWTR_S", 7);
}

TEST(DramTiming, tWR) {
  Device d(test_config());
  d.command(0, 0, Command::act(0, 3, 1));
  d.command(10, 0, Command::wr(0, 3, 0, kData.data()));
  // CWL 3 + tBURST 2 + tWR 5 = 10 after the WR (tRAS is met at 15).
  expect_boundary(d, 0, Command::pre(0, 3), 20, "tWR", 10);
  d.command(40, 0, Command::act(0, 3, 2));
  d.command(55, 0, Command::wr(0, 3, 0, kData.data()));
  expect_boundary(d, 0, Command::prea(), 65, "tWR", 10);
}

TEST(DramTiming, tRTP) {
  Device d(test_config());
  d.command(0, 0, Command::act(3, 0, 1));
  d.command(12, 0, Command::rd(3, 0, 0));
  expect_boundary(d, 0, Command::pre(3, 0), 16, "tRTP", 4);
}

TEST(DramTiming, ReadToWriteTurnaround) {
  Device d(test_config());
  d.command(0, 0, Command::act(0, 0, 1));
  d.command(3, 0, Command::act(1, 0, 1));
  d.command(7, 0, Command::rd(0, 0, 0));
  // Any bank: CL 10 + tBURST 2 + 2 - CWL 3 = 11 after the RD.
  expect_boundary(d, 0, Command::wr(1, 0, 0, kData.data()), 18, "tRTW", 11);
}

TEST(DramTiming, tRFC) {
  Device d(test_config());
  d.command(0, 0, Command::ref());
  expect_boundary(d, 0, Command::act(0, 0, 1), 30, "tRFC", 30);
}

TEST(DramTiming, tRFCBlocksEveryCommand) {
  Device d(test_config());
  d.command(0, 0, Command::ref());
  for (const Command& c : {Command::pre(0, 0), Command::prea(), Command::ref()}) {
    const auto v = violation_of([&] { d.command(29, 0, c); });
    EXPECT_EQ(v.constraint(), "tRFC") << v.what();
  }
  EXPECT_NO_THROW(d.command(1, 1, Command::act(0, 0, 1)));
  EXPECT_NO_THROW(d.command(30, 0, Command::ref()));
}

TEST(DramTiming, tRPBeforeRefresh) {
  Device d(test_config());
  d.command(0, 0, Command::act(2, 3, 1));
  d.command(15, 0, Command::pre(2, 3));
  const auto v = violation_of([&] { d.command(20, 0, Command::ref()); });
  EXPECT_EQ(v.constraint(), "tRP");
  EXPECT_EQ(v.bank_group(), 2);
  EXPECT_EQ(v.bank(), 3);
  EXPECT_EQ(v.measured(), 5);
  EXPECT_EQ(v.required(), 6);
  EXPECT_NO_THROW(d.command(21, 0, Command::ref()));
}

TEST(DramTiming, CommandBusOneCommandPerCycle) {
  Device d(test_config());
  d.command(5, 0, Command::act(0, 0, 1));
  const auto v = violation_of([&] { d.command(5, 0, Command::act(1, 0, 1)); });
  EXPECT_EQ(v.constraint(), "command bus");
  EXPECT_EQ(v.measured(), 0);
  EXPECT_EQ(v.required(), 1);
  EXPECT_EQ(violation_of([&] { d.command(4, 0, Command::act(1, 0, 1)); }).constraint(),
            "command bus");
  EXPECT_NO_THROW(d.command(5, 1, Command::act(1, 0, 1)));  // another channel's bus
  d.command(8, 0, Command::act(1, 0, 1));
  EXPECT_NO_THROW(d.command(8, 0, Command{}));  // NOP: no effect, not a second command
}

TEST(DramTiming, MessageIsOneLineWithEverything) {
  Device d(test_config());
  d.command(0, 1, Command::act(2, 3, 4));
  const auto v = violation_of([&] { d.command(6, 1, Command::rd(2, 3, 0)); });
  EXPECT_STREQ(v.what(),
               "tRCD violated: RD at cycle 6 channel 1 bank group 2 bank 3: 6 cycles after ACT, "
               "needs 7");
  d.command(7, 1, Command::wr(2, 3, 0, kData.data()));
  const auto w = violation_of([&] { d.command(16, 1, Command::pre(2, 3)); });
  EXPECT_STREQ(w.what(),
               "tWR violated: PRE at cycle 16 channel 1 bank group 2 bank 3: 9 cycles after WR, "
               "needs 10 (CWL + tBURST + tWR)");
}

TEST(DramTiming, ViolationLeavesStateUnchanged) {
  Device d(test_config());
  d.command(0, 0, Command::act(0, 0, 1));
  EXPECT_THROW(d.command(3, 0, Command::pre(0, 0)), TimingViolation);
  EXPECT_TRUE(d.bank_open(0, 0, 0));
  EXPECT_EQ(d.stats(0).pre, 0u);
  EXPECT_THROW(d.command(3, 0, Command::rd(0, 0, 0)), TimingViolation);
  EXPECT_EQ(d.reads_in_flight(0), 0u);
}

// ---------------------------------------------------------------------------------------------
// State errors
// ---------------------------------------------------------------------------------------------

TEST(DramState, ActToOpenBank) {
  Device d(test_config());
  d.command(0, 0, Command::act(1, 1, 3));
  const auto v = violation_of([&] { d.command(100, 0, Command::act(1, 1, 4)); });
  EXPECT_EQ(v.constraint(), "ACT to open bank");
  EXPECT_EQ(v.bank_group(), 1);
  EXPECT_EQ(v.bank(), 1);
  EXPECT_STREQ(v.what(), "ACT to open bank violated: ACT at cycle 100 channel 0 bank group 1 "
                         "bank 1: row 3 is open");
}

TEST(DramState, ColumnCommandToClosedBank) {
  Device d(test_config());
  EXPECT_EQ(violation_of([&] { d.command(0, 0, Command::rd(0, 0, 0)); }).constraint(),
            "RD to closed bank");
  EXPECT_EQ(violation_of([&] { d.command(0, 0, Command::wr(0, 0, 0, kData.data())); })
                .constraint(),
            "WR to closed bank");
  d.command(0, 0, Command::act(0, 0, 1));
  d.command(20, 0, Command::pre(0, 0));
  EXPECT_EQ(violation_of([&] { d.command(40, 0, Command::rd(0, 0, 0)); }).constraint(),
            "RD to closed bank");
}

TEST(DramState, ColumnCommandToWrongRow) {
  Device d(test_config());
  d.command(0, 0, Command::act(3, 2, 10));
  const auto v = violation_of([&] { d.command(10, 0, Command::rd(3, 2, 0, 11)); });
  EXPECT_EQ(v.constraint(), "RD to wrong row");
  EXPECT_STREQ(v.what(), "RD to wrong row violated: RD at cycle 10 channel 0 bank group 3 bank 2: "
                         "row 10 is open, not row 11");
  EXPECT_EQ(violation_of([&] {
              d.command(10, 0, Command::wr(3, 2, 0, kData.data(), ~0ull, 9));
            }).constraint(),
            "WR to wrong row");
  EXPECT_NO_THROW(d.command(10, 0, Command::rd(3, 2, 0, 10)));
  EXPECT_NO_THROW(d.command(20, 0, Command::rd(3, 2, 1)));  // kAnyRow: not checked
}

TEST(DramState, RefreshWithOpenBank) {
  Device d(test_config());
  d.command(0, 0, Command::act(0, 0, 1));
  d.command(5, 0, Command::act(3, 1, 7));
  d.command(20, 0, Command::pre(0, 0));
  const auto v = violation_of([&] { d.command(100, 0, Command::ref()); });
  EXPECT_EQ(v.constraint(), "REF with open bank");
  EXPECT_EQ(v.bank_group(), 3);
  EXPECT_EQ(v.bank(), 1);
  d.command(101, 0, Command::prea());
  EXPECT_FALSE(d.bank_open(0, 3, 1));
  EXPECT_NO_THROW(d.command(107, 0, Command::ref()));
}

TEST(DramState, PrechargeOfClosedBankIsANop) {
  Device d(test_config());
  EXPECT_NO_THROW(d.command(0, 0, Command::pre(1, 1)));
  EXPECT_NO_THROW(d.command(1, 0, Command::prea()));
  // ... and does not restart tRP.
  EXPECT_NO_THROW(d.command(2, 0, Command::act(1, 1, 0)));
  EXPECT_EQ(d.stats(0).pre, 1u);
  EXPECT_EQ(d.stats(0).prea, 1u);
}

TEST(DramState, AddressRange) {
  Device d(test_config());
  EXPECT_EQ(violation_of([&] { d.command(0, 0, Command::act(4, 0, 0)); }).constraint(),
            "address range");
  EXPECT_EQ(violation_of([&] { d.command(0, 0, Command::act(0, 4, 0)); }).constraint(),
            "address range");
  EXPECT_EQ(violation_of([&] { d.command(0, 0, Command::act(0, 0, 64)); }).constraint(),
            "address range");
  d.command(0, 0, Command::act(0, 0, 63));
  EXPECT_EQ(violation_of([&] { d.command(10, 0, Command::rd(0, 0, 8)); }).constraint(),
            "address range");
  EXPECT_THROW(d.command(10, 2, Command::act(0, 0, 0)), std::out_of_range);
}

// ---------------------------------------------------------------------------------------------
// Refresh deadline
// ---------------------------------------------------------------------------------------------

TEST(DramRefresh, DeadlineIsNineRefreshIntervals) {
  Device d(test_config());  // 9 * tREFI = 1800
  const auto v = violation_of([&] { d.command(1801, 0, Command::act(0, 0, 1)); });
  EXPECT_EQ(v.constraint(), "refresh deadline");
  EXPECT_EQ(v.measured(), 1801);
  EXPECT_EQ(v.required(), 1800);
  EXPECT_STREQ(v.what(), "refresh deadline violated: ACT at cycle 1801 channel 0 bank group 0 "
                         "bank 0: 1801 cycles since the last REF, allowed at most 1800 "
                         "(9 x tREFI)");
  EXPECT_NO_THROW(d.command(1800, 0, Command::act(0, 0, 1)));
  // A late REF is itself flagged.
  EXPECT_EQ(violation_of([&] { d.command(1801, 1, Command::ref()); }).constraint(),
            "refresh deadline");
  EXPECT_NO_THROW(d.command(1800, 1, Command::ref()));
  // Each REF restarts the count for its channel.
  EXPECT_NO_THROW(d.command(3600, 1, Command::act(0, 0, 1)));
  EXPECT_EQ(violation_of([&] { d.command(3601, 1, Command::act(1, 0, 1)); }).constraint(),
            "refresh deadline");
}

TEST(DramRefresh, FinishChecksEveryChannel) {
  Device d(test_config());
  EXPECT_NO_THROW(d.finish(1800));
  d.command(1000, 0, Command::ref());
  const auto v = violation_of([&] { d.finish(1801); });
  EXPECT_EQ(v.channel(), 1u);  // channel 0 refreshed at 1000
  EXPECT_STREQ(v.what(), "refresh deadline violated: check at cycle 1801 channel 1: 1801 cycles "
                         "since the last REF, allowed at most 1800 (9 x tREFI)");
  d.command(1001, 1, Command::ref());
  EXPECT_NO_THROW(d.finish(2800));
  EXPECT_THROW(d.finish(2802), TimingViolation);
}

TEST(DramRefresh, DeadlineCanBeDisabled) {
  Config c = test_config();
  c.refresh_deadline_trefi = 0;
  Device d(c);
  EXPECT_NO_THROW(d.command(1'000'000, 0, Command::act(0, 0, 1)));
  EXPECT_NO_THROW(d.finish(2'000'000));
}

// ---------------------------------------------------------------------------------------------
// Read-data timing and storage
// ---------------------------------------------------------------------------------------------

TEST(DramData, ReadDataArrivesExactlyClPlusTburstAfterRd) {
  Device d(hbm2_config());  // CL 14, tBURST 2
  const auto a = pattern(7);
  const auto b = pattern(9);
  d.command(0, 3, Command::act(1, 2, 100));
  d.command(14, 3, Command::wr(1, 2, 5, a.data()));
  d.command(16, 3, Command::wr(1, 2, 6, b.data()));
  // WR -> RD same bank group: CWL 4 + tBURST 2 + tWTR_L 8 = 14 after the last WR.
  const std::uint64_t rd1 = 30;
  d.command(rd1, 3, Command::rd(1, 2, 5));
  d.command(rd1 + 2, 3, Command::rd(1, 2, 6));
  d.command(rd1 + 4, 3, Command::rd(1, 2, 7));  // never written: zeros
  EXPECT_EQ(d.reads_in_flight(3), 3u);
  std::vector<std::uint64_t> arrivals;
  std::vector<std::vector<std::uint8_t>> got;
  for (std::uint64_t t = rd1; t < rd1 + 40; ++t) {
    for (std::uint32_t ch = 0; ch < 8; ++ch) {
      const auto data = d.read_data(t, ch);
      if (data.empty()) continue;
      EXPECT_EQ(ch, 3u);
      arrivals.push_back(t);
      got.emplace_back(data.begin(), data.end());
    }
  }
  ASSERT_EQ(arrivals.size(), 3u);
  EXPECT_EQ(arrivals[0], rd1 + 14 + 2);
  EXPECT_EQ(arrivals[1], rd1 + 2 + 16);
  EXPECT_EQ(arrivals[2], rd1 + 4 + 16);
  EXPECT_TRUE(std::equal(a.begin(), a.end(), got[0].begin()));
  EXPECT_TRUE(std::equal(b.begin(), b.end(), got[1].begin()));
  EXPECT_TRUE(std::all_of(got[2].begin(), got[2].end(), [](std::uint8_t x) { return x == 0; }));
  EXPECT_EQ(d.reads_in_flight(3), 0u);
}

TEST(DramData, MissedReadDataIsAHarnessError) {
  Device d(hbm2_config());
  d.command(0, 0, Command::act(0, 0, 0));
  d.command(14, 0, Command::rd(0, 0, 0));
  EXPECT_TRUE(d.read_data(29, 0).empty());
  EXPECT_THROW(d.read_data(31, 0), std::logic_error);
}

TEST(DramData, WriteMaskKeepsUnmaskedBytes) {
  Device d(hbm2_config());
  const auto a = pattern(1);
  const auto b = pattern(2);
  d.command(0, 0, Command::act(0, 0, 0));
  d.command(14, 0, Command::wr(0, 0, 3, a.data()));
  const std::uint64_t mask = 0xF0F0'0000'FFFF'0001ull;
  d.command(18, 0, Command::wr(0, 0, 3, b.data(), mask));
  std::array<std::uint8_t, 64> out{};
  d.backdoor_read(0, 0, 0, 0, 3, out);
  for (std::size_t i = 0; i < 64; ++i) {
    EXPECT_EQ(out[i], ((mask >> i) & 1) ? b[i] : a[i]) << "byte " << i;
  }
  // A masked write to a never-written row keeps zeros in the unmasked bytes.
  d.command(19, 0, Command::act(1, 0, 5));
  d.command(33, 0, Command::wr(1, 0, 0, b.data(), 0x1));
  d.backdoor_read(0, 1, 0, 5, 0, out);
  EXPECT_EQ(out[0], b[0]);
  EXPECT_TRUE(std::all_of(out.begin() + 1, out.end(), [](std::uint8_t x) { return x == 0; }));
}

TEST(DramData, StorageCostsOnlyWhatIsTouched) {
  // The 4 GiB reference stack: writing a handful of bursts allocates a handful of rows'
  // directories and one 64-byte block per burst written.
  Device d(hbm2_config());
  EXPECT_EQ(d.config().capacity_bytes(), std::uint64_t{4} << 30);
  EXPECT_EQ(d.allocated_rows(), 0u);
  EXPECT_EQ(d.allocated_bursts(), 0u);
  const auto a = pattern(3);
  d.command(0, 7, Command::act(3, 3, 16383));
  d.command(14, 7, Command::wr(3, 3, 31, a.data()));
  d.command(16, 7, Command::wr(3, 3, 0, a.data()));
  d.backdoor_write(0, 0, 0, 0, 0, a);
  d.backdoor_write(5, 2, 1, 8000, 17, a);
  EXPECT_EQ(d.allocated_rows(), 3u);
  EXPECT_EQ(d.allocated_bursts(), 4u);
  d.command(18, 7, Command::wr(3, 3, 31, a.data()));  // rewriting a burst allocates nothing
  EXPECT_EQ(d.allocated_bursts(), 4u);
  // Reads allocate nothing.
  d.command(40, 7, Command::rd(3, 3, 5));
  d.command(40, 6, Command::act(0, 0, 1));
  d.command(54, 6, Command::rd(0, 0, 5));
  std::array<std::uint8_t, 64> out{};
  d.backdoor_read(1, 1, 1, 1, 1, out);
  EXPECT_EQ(d.allocated_rows(), 3u);
  EXPECT_EQ(d.allocated_bursts(), 4u);
  // The backdoor and the command path see the same bytes.
  d.backdoor_read(7, 3, 3, 16383, 31, out);
  EXPECT_EQ(out, a);
}

TEST(DramData, BackdoorWriteToTheOpenRowIsVisibleToRd) {
  Device d(hbm2_config());
  d.command(0, 0, Command::act(0, 0, 9));
  const auto a = pattern(5);
  d.backdoor_write(0, 0, 0, 9, 2, a);
  d.command(14, 0, Command::rd(0, 0, 2));
  const auto data = d.read_data(30, 0);
  ASSERT_EQ(data.size(), 64u);
  EXPECT_TRUE(std::equal(a.begin(), a.end(), data.begin()));
}

TEST(DramStats, CountsPerChannelAndBank) {
  Device d(hbm2_config());
  d.command(0, 2, Command::act(1, 3, 0));
  d.command(14, 2, Command::rd(1, 3, 0));
  d.command(16, 2, Command::rd(1, 3, 1));
  d.command(18, 2, Command::rd(1, 3, 2));
  d.command(34, 2, Command::wr(1, 3, 3, kData.data()));  // RD -> WR: 14 + 2 + 2 - 4 = 14
  d.command(56, 2, Command::pre(1, 3));                  // WR -> PRE: 4 + 2 + 16 = 22
  d.command(70, 2, Command::ref());
  for (std::uint64_t t = 0; t < 80; ++t) d.read_data(t, 2);
  const ChannelStats& s = d.stats(2);
  EXPECT_EQ(s.act, 1u);
  EXPECT_EQ(s.rd, 3u);
  EXPECT_EQ(s.wr, 1u);
  EXPECT_EQ(s.pre, 1u);
  EXPECT_EQ(s.ref, 1u);
  EXPECT_EQ(s.data_bus_busy_cycles, 8u);
  const std::size_t bank = 1 * 4 + 3;
  EXPECT_EQ(s.act_per_bank[bank], 1u);
  EXPECT_EQ(s.rd_per_bank[bank], 3u);
  EXPECT_EQ(s.wr_per_bank[bank], 1u);
  EXPECT_DOUBLE_EQ(s.row_hit_rate(), 0.75);
  EXPECT_EQ(d.total_stats().rd, 3u);
  EXPECT_EQ(d.stats(0).act, 0u);
}

TEST(DramConfig, ValidateRejectsBadGeometry) {
  Config c = test_config();
  c.rows = 1000;
  EXPECT_THROW(Device{c}, std::invalid_argument);
  c = test_config();
  c.bus_bytes = 32;  // 128-byte burst: wider than the 64-bit write mask
  EXPECT_THROW(Device{c}, std::invalid_argument);
  c = test_config();
  c.tRCD = 0;
  EXPECT_THROW(Device{c}, std::invalid_argument);
  EXPECT_NO_THROW(Device{hbm2_config()});
}

// ---------------------------------------------------------------------------------------------
// Data integrity under random legal command sequences on every channel
// ---------------------------------------------------------------------------------------------

// Drives every channel of the HBM2 reference device cycle by cycle with random commands that are
// legal by bank state; a command refused for timing is retried exactly when the violation says it
// becomes legal. Every read burst is compared with a plain byte-array model of the rows in use.
TEST(DramData, RandomLegalSequencesMatchAByteArrayModel) {
  const Config cfg = hbm2_config();
  Device d(cfg);
  constexpr std::uint32_t kRows = 4;  // rows in use per bank, so the model stays small
  const std::uint32_t banks = cfg.banks();
  const std::size_t burst = cfg.burst_bytes();
  const std::size_t row_bytes = cfg.row_bytes();
  std::vector<std::uint8_t> model(std::size_t{cfg.channels} * banks * kRows * row_bytes, 0);
  auto model_at = [&](std::uint32_t ch, std::uint32_t bank, std::uint32_t row, std::uint32_t col) {
    return model.data() + ((std::size_t{ch} * banks + bank) * kRows + row) * row_bytes +
           std::size_t{col} * burst;
  };

  struct Expected {
    std::uint64_t due;
    std::vector<std::uint8_t> data;
  };
  struct Chan {
    std::uint64_t retry_at = 0;
    std::uint64_t last_ref = 0;
    bool want_refresh = false;
    Command pending;  // the command being retried, Nop when none
    std::deque<Expected> expected;
  };
  std::vector<Chan> chans(cfg.channels);
  std::mt19937_64 rng(20240611);
  std::vector<std::uint8_t> wdata(burst);
  std::uint64_t compared = 0, issued = 0, timing_refusals = 0;
  const std::uint64_t kCycles = 12'000;  // > 3 tREFI: every channel refreshes several times

  auto random_command = [&](std::uint32_t ch, Chan& c) -> Command {
    if (c.want_refresh) {
      for (std::uint32_t i = 0; i < banks; ++i) {
        if (d.bank_open(ch, i / cfg.banks_per_group, i % cfg.banks_per_group)) {
          return Command::prea();
        }
      }
      return Command::ref();
    }
    const auto bank = static_cast<std::uint32_t>(rng() % banks);
    const std::uint32_t bg = bank / cfg.banks_per_group, ba = bank % cfg.banks_per_group;
    if (!d.bank_open(ch, bg, ba)) return Command::act(bg, ba, static_cast<std::uint32_t>(rng() % kRows));
    const auto col = static_cast<std::uint32_t>(rng() % cfg.columns);
    const std::uint32_t row = (rng() & 1) ? d.open_row(ch, bg, ba) : Command::kAnyRow;
    const auto r = rng() % 100;
    if (r < 40) return Command::rd(bg, ba, col, row);
    if (r < 85) {
      const std::uint64_t mask = (rng() & 3) == 0 ? ~0ull : rng();
      return Command::wr(bg, ba, col, nullptr, mask, row);  // data filled in when issued
    }
    if (r < 97) return Command::pre(bg, ba);
    return Command::prea();
  };

  for (std::uint64_t t = 0; t < kCycles; ++t) {
    for (std::uint32_t ch = 0; ch < cfg.channels; ++ch) {
      Chan& c = chans[ch];
      // Read data first: exactly the expected burst, exactly on time.
      const auto got = d.read_data(t, ch);
      if (!c.expected.empty() && c.expected.front().due == t) {
        ASSERT_EQ(got.size(), burst) << "cycle " << t << " channel " << ch;
        ASSERT_TRUE(std::equal(got.begin(), got.end(), c.expected.front().data.begin()))
            << "cycle " << t << " channel " << ch;
        c.expected.pop_front();
        ++compared;
      } else {
        ASSERT_TRUE(got.empty()) << "unexpected read data at cycle " << t << " channel " << ch;
      }

      if (t < c.retry_at || (rng() % 4) == 0) continue;  // idle cycles too
      if (t - c.last_ref >= cfg.tREFI) c.want_refresh = true;
      if (c.pending.op == Op::Nop) c.pending = random_command(ch, c);
      Command cmd = c.pending;
      if (cmd.op == Op::Wr) {
        for (auto& b : wdata) b = static_cast<std::uint8_t>(rng());
        cmd.wdata = wdata.data();
      }
      try {
        d.command(t, ch, cmd);
      } catch (const TimingViolation& v) {
        ASSERT_EQ(v.constraint()[0], 't') << "not a timing refusal: " << v.what();
        ASSERT_GT(v.required(), v.measured());
        c.retry_at = t + static_cast<std::uint64_t>(v.required() - v.measured());
        ++timing_refusals;
        continue;
      }
      ++issued;
      c.pending = Command{};
      const std::uint32_t bank = cmd.bank_group * cfg.banks_per_group + cmd.bank;
      if (cmd.op == Op::Rd) {
        const std::uint8_t* src = model_at(ch, bank, d.open_row(ch, cmd.bank_group, cmd.bank), cmd.column);
        c.expected.push_back({t + cfg.CL + cfg.tBURST(), std::vector<std::uint8_t>(src, src + burst)});
      } else if (cmd.op == Op::Wr) {
        std::uint8_t* dst = model_at(ch, bank, d.open_row(ch, cmd.bank_group, cmd.bank), cmd.column);
        for (std::size_t i = 0; i < burst; ++i) {
          if ((cmd.wmask >> i) & 1) dst[i] = cmd.wdata[i];
        }
      } else if (cmd.op == Op::Ref) {
        c.last_ref = t;
        c.want_refresh = false;
      }
    }
  }
  EXPECT_NO_THROW(d.finish(kCycles));
  const ChannelStats total = d.total_stats();
  EXPECT_GT(compared, 2000u);
  EXPECT_GT(total.wr, 2000u);
  EXPECT_GE(total.ref, 3u * cfg.channels);
  EXPECT_GT(timing_refusals, 1000u);  // the sequences were tight, not padded
  EXPECT_EQ(total.act + total.pre + total.prea + total.rd + total.wr + total.ref, issued);
  for (std::uint32_t ch = 0; ch < cfg.channels; ++ch) EXPECT_GT(d.stats(ch).rd, 100u);
  // Final contents through the backdoor equal the model everywhere in use.
  std::vector<std::uint8_t> out(burst);
  for (std::uint32_t ch = 0; ch < cfg.channels; ++ch) {
    for (std::uint32_t bank = 0; bank < banks; ++bank) {
      for (std::uint32_t row = 0; row < kRows; ++row) {
        for (std::uint32_t col = 0; col < cfg.columns; ++col) {
          d.backdoor_read(ch, bank / cfg.banks_per_group, bank % cfg.banks_per_group, row, col, out);
          ASSERT_TRUE(std::equal(out.begin(), out.end(), model_at(ch, bank, row, col)))
              << "channel " << ch << " bank " << bank << " row " << row << " column " << col;
        }
      }
    }
  }
}

}  // namespace
}  // namespace tpuemu::sim::dram
