// SPDX-License-Identifier: Apache-2.0
// HBM traces and patterns (host/src/hbm_replay/, docs/hbm-trace.md): the trace parser and
// its one-line errors, the pattern generators, the report, and replays through the RTL
// controller + DRAM device model (HbmSystem): exact counts, data checked, stream near the peak,
// random far below it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <random>
#include <tuple>
#include <vector>
#include <filesystem>
#include <string>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "tpuemu/base/error.h"
#include "tpuemu/config/hbm_config.h"
#include "tpuemu/hbm_replay/hbm_trace.h"

namespace tpuemu {
namespace {

namespace fs = std::filesystem;

const fs::path kRoot = fs::path(TPUEMU_TEST_PRESET_DIR).parent_path().parent_path();
const fs::path kTraces = kRoot / "tests" / "data" / "traces";

const HbmTimingSet& hbm2() {
  static const HbmTimingSet set = load_hbm_timing_set_file(kRoot / "configs/hbm/hbm2-2000.json");
  return set;
}

std::string parse_error(std::string_view text) {
  try {
    parse_hbm_trace(text, "t.trace", hbm2());
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

// ---------------------------------------------------------------------------------------------
// Parser
// ---------------------------------------------------------------------------------------------
TEST(HbmTraceParse, AcceptsTheFormatVariants) {
  const auto r = parse_hbm_trace(
      "# header comment\n"
      "0x40 READ 0\n"
      "\n"
      "80 write 1\n"
      "   0X1f Read 2   # trailing comment\n"
      "\t0xC0\tWRITE\t5\r\n"
      "0x3ffffffc0 READ 5\n",  // the last burst of the 16 GiB hbm3-6400 stack
      "t.trace", load_hbm_timing_set_file(kRoot / "configs/hbm/hbm3-6400.json"));
  ASSERT_EQ(r.size(), 5u);
  EXPECT_EQ(r[0], (HbmTraceRequest{0x40, false, 0}));
  EXPECT_EQ(r[1], (HbmTraceRequest{0x80, true, 1}));
  EXPECT_EQ(r[2], (HbmTraceRequest{0x1f, false, 2}));
  EXPECT_EQ(r[3], (HbmTraceRequest{0xc0, true, 5}));
  EXPECT_EQ(r[4], (HbmTraceRequest{0x3ffffffc0, false, 5}));
  EXPECT_TRUE(parse_hbm_trace("", "t", hbm2()).empty());
  EXPECT_TRUE(parse_hbm_trace("# nothing\n\n   \n", "t", hbm2()).empty());
}

TEST(HbmTraceParse, MalformedLinesGiveFileLineWhatAndTheLine) {
  EXPECT_EQ(parse_error("0x0 READ 0\n0xg0 READ 1\n"),
            "t.trace:2: bad hex address '0xg0' in '0xg0 READ 1'");
  EXPECT_EQ(parse_error("0x READ 1"), "t.trace:1: bad hex address '0x' in '0x READ 1'");
  EXPECT_EQ(parse_error("0x11112222333344445 READ 1"),
            "t.trace:1: hex address '0x11112222333344445' does not fit in 64 bits in "
            "'0x11112222333344445 READ 1'");
  EXPECT_EQ(parse_error("\n\n0x40 FETCH 3   # x\n"),
            "t.trace:3: unknown operation 'FETCH' (expected READ or WRITE) in '0x40 FETCH 3   # x'");
  EXPECT_EQ(parse_error("0x40\n"),
            "t.trace:1: missing operation (READ or WRITE) after the address in '0x40'");
  EXPECT_EQ(parse_error("0x40 WRITE\n"), "t.trace:1: missing cycle after the operation in '0x40 WRITE'");
  EXPECT_EQ(parse_error("0x40 WRITE # 12\n"),
            "t.trace:1: missing cycle after the operation in '0x40 WRITE # 12'");
  EXPECT_EQ(parse_error("0x40 READ -5\n"), "t.trace:1: negative cycle -5 in '0x40 READ -5'");
  EXPECT_EQ(parse_error("0x40 READ 1e3\n"),
            "t.trace:1: bad cycle '1e3' (expected a decimal count of tCK) in '0x40 READ 1e3'");
  EXPECT_EQ(parse_error("0x40 READ 99999999999999999999\n"),
            "t.trace:1: cycle '99999999999999999999' does not fit in 64 bits in "
            "'0x40 READ 99999999999999999999'");
  EXPECT_EQ(parse_error("0x40 READ 3 4\n"),
            "t.trace:1: unexpected '4' after the cycle in '0x40 READ 3 4'");
  EXPECT_EQ(parse_error("0x0 READ 10\n0x40 READ 12\r\n0x80 WRITE 11\r\n"),
            "t.trace:3: cycle 11 goes backwards (the previous request is at cycle 12) in "
            "'0x80 WRITE 11'");
}

TEST(HbmTraceParse, AddressBeyondTheCapacity) {
  EXPECT_EQ(parse_error("0xffffffc0 READ 0\n0x100000000 READ 1\n"),
            "t.trace:2: address 0x100000000 is beyond the capacity 0x100000000 of hbm2-2000");
  EXPECT_EQ(parse_error("0xffffffff READ 0"), "(no error)");  // the last byte
}

// Cycles that a replay could not count are refused with their line; the last one it can is read.
TEST(HbmTraceParse, CycleLimit) {
  static_assert(kMaxHbmTraceCycle == 281474976710655u);
  EXPECT_EQ(parse_error("0x40 READ 281474976710655\n"), "(no error)");
  EXPECT_EQ(parse_error("0x0 READ 0\n0x40 READ 281474976710656\n"),
            "t.trace:2: cycle 281474976710656 is beyond the last the replay can count, 281474976710655 (2^48 - 1) "
            "in '0x40 READ 281474976710656'");
  EXPECT_EQ(parse_error("0x40 READ 18446744073709551615\n"),
            "t.trace:1: cycle 18446744073709551615 is beyond the last the replay can count, 281474976710655 "
            "(2^48 - 1) in '0x40 READ 18446744073709551615'");
  // A source that is not a parsed file is refused by the replay itself.
  auto far = hbm_trace_source({{0x40, false, kMaxHbmTraceCycle + 1}}, "api");
  std::string error = "(no error)";
  try {
    replay_hbm(hbm2(), *far);
  } catch (const Error& e) {
    error = e.what();
  }
  EXPECT_EQ(error,
            "api: request at cycle 281474976710656 is beyond the last the replay can count, 281474976710655 (2^48 - 1)");
}

TEST(HbmTraceParse, FilesAndTheirErrors) {
  EXPECT_EQ(load_hbm_trace(kTraces / "small.trace", hbm2()).size(), 16u);
  const auto error_of = [](const fs::path& p) {
    try {
      load_hbm_trace(p, hbm2());
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  const std::string dir = kTraces.string();
  EXPECT_EQ(error_of(kTraces / "bad_op.trace"),
            dir + "/bad_op.trace:2: unknown operation 'FETCH' (expected READ or WRITE) in "
                  "'0x40 FETCH 1'");
  EXPECT_EQ(error_of(kTraces / "backwards.trace"),
            dir + "/backwards.trace:3: cycle 11 goes backwards (the previous request is at cycle "
                  "12) in '0x80 WRITE 11'");
  EXPECT_EQ(error_of(kTraces / "beyond.trace"),
            dir + "/beyond.trace:3: address 0x100000000 is beyond the capacity 0x100000000 of "
                  "hbm2-2000");
  EXPECT_EQ(error_of(kTraces / "no-such.trace"), dir + "/no-such.trace: cannot open: No such file or directory");
}

// ---------------------------------------------------------------------------------------------
// Patterns and write data
// ---------------------------------------------------------------------------------------------
std::vector<HbmTraceRequest> drain(HbmRequestSource& s) {
  std::vector<HbmTraceRequest> out;
  while (auto r = s.next()) out.push_back(*r);
  return out;
}

TEST(HbmPatterns, StreamIsSequentialBurstsFromZero) {
  auto s = hbm_pattern_source(hbm2(), {.pattern = HbmPattern::Stream, .requests = 1000});
  EXPECT_EQ(s->size(), 1000u);
  const auto r = drain(*s);
  ASSERT_EQ(r.size(), 1000u);
  for (std::size_t i = 0; i < r.size(); ++i) {
    EXPECT_EQ(r[i], (HbmTraceRequest{64 * i, false, 0})) << i;
  }
  EXPECT_EQ(s->describe(), "stream (1000 requests, read ratio 1.00, seed 1)");
}

TEST(HbmPatterns, RandomIsUniformOverTheCapacityAndSeeded) {
  const HbmPatternOptions o{.pattern = HbmPattern::Random, .requests = 20000, .read_ratio = 0.7,
                            .seed = 42};
  const auto a = drain(*hbm_pattern_source(hbm2(), o));
  const auto b = drain(*hbm_pattern_source(hbm2(), o));
  EXPECT_EQ(a, b);
  auto other = o;
  other.seed = 43;
  EXPECT_NE(a, drain(*hbm_pattern_source(hbm2(), other)));
  std::size_t writes = 0;
  std::vector<std::size_t> per_channel(8), per_quarter(4);
  for (const auto& r : a) {
    EXPECT_EQ(r.address % 64, 0u);
    ASSERT_LT(r.address, hbm2().capacity_bytes());
    writes += r.write;
    ++per_channel[hbm2().decode(r.address).channel];
    ++per_quarter[r.address / (hbm2().capacity_bytes() / 4)];
  }
  EXPECT_NEAR(static_cast<double>(writes) / 20000, 0.3, 0.02);
  for (auto n : per_channel) EXPECT_NEAR(static_cast<double>(n), 2500, 250);
  for (auto n : per_quarter) EXPECT_NEAR(static_cast<double>(n), 5000, 400);
}

TEST(HbmPatterns, BadOptions) {
  EXPECT_THROW(hbm_pattern_source(hbm2(), {.requests = 0}), Error);
  EXPECT_THROW(hbm_pattern_source(hbm2(), {.read_ratio = 1.5}), Error);
  EXPECT_THROW(hbm_pattern_source(hbm2(), {.read_ratio = -0.1}), Error);
  EXPECT_EQ(parse_hbm_pattern("random"), HbmPattern::Random);
  try {
    parse_hbm_pattern("zigzag");
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "unknown pattern 'zigzag' (expected stream, random or stream-add)");
  }
}

TEST(HbmPatterns, WriteDataIsDeterministicAndDistinct) {
  std::uint8_t a[64], b[64], c[64], d[64];
  hbm_write_data(0x40, 1, a);
  hbm_write_data(0x40, 1, b);
  hbm_write_data(0x40, 2, c);
  hbm_write_data(0x80, 1, d);
  EXPECT_EQ(0, std::memcmp(a, b, 64));
  EXPECT_NE(0, std::memcmp(a, c, 64));
  EXPECT_NE(0, std::memcmp(a, d, 64));
}

// ---------------------------------------------------------------------------------------------
// Report (no simulation)
// ---------------------------------------------------------------------------------------------
HbmReplayReport made_up_report(std::uint64_t hits, std::uint64_t conflicts) {
  HbmReplayReport r;
  r.config = "hbm2-2000";
  r.source = "made up";
  r.page_policy = "open";
  r.tck_ns = 1.0;
  r.peak_gbps = 256;
  r.peak_gbps_per_channel = 32;
  r.tRCD = 14;
  r.tRP = 14;
  r.tRC = 48;
  r.tFAW = 30;
  r.tRRD_S = 4;
  r.tBURST = 2;
  r.banks = 16;
  r.cycles = 1000;
  r.channels.resize(8);
  for (auto& c : r.channels) {
    c.reads = (hits + conflicts) / 8;
    c.row_hits = hits / 8;
    c.row_conflicts = conflicts / 8;
    c.queue_occupancy_sum = 4000;
    c.refreshes = 1;
    c.refresh_cycles = 260;
    r.total += c;
  }
  r.requests = r.reads = r.total.reads;
  r.read_latency = {r.reads, 40.5, 38, 90};
  r.read_latency_offer = {r.reads, 42.5, 40, 95};
  r.reads_checked = r.reads;
  r.wall_seconds = 0.01;
  r.cpu_seconds = 0.005;
  return r;
}

TEST(HbmReport, TextHasEveryFigureAndExplainsRowMisses) {
  // 3200 bursts of 64 B in 1000 cycles of 1 ns: 204.8 GB/s = 80% of 256.
  const auto r = made_up_report(3200, 0);
  const std::string text = format_hbm_report(r);
  EXPECT_NE(text.find("bandwidth   204.8 GB/s = 80.0% of the 256.0 GB/s peak"), std::string::npos) << text;
  EXPECT_NE(text.find("mean 40.5 tCK (40.5 ns), p50 38 tCK (38.0 ns), p99 90 tCK (90.0 ns)"),
            std::string::npos) << text;
  EXPECT_NE(text.find("hit rate 100.0%: 3200 hits, 0 misses, 0 conflicts"), std::string::npos);
  EXPECT_NE(text.find("refresh     8 REF, 2080 cycles (26.0% of channel time)"), std::string::npos);
  EXPECT_NE(text.find("mean occupancy 4.0 requests per channel"), std::string::npos) << text;
  EXPECT_NE(text.find("100000 DRAM cycles per wall second"), std::string::npos) << text;
  EXPECT_NE(text.find("\n  total "), std::string::npos);
  EXPECT_EQ(text.find("why"), std::string::npos);  // all hits: nothing to explain

  const std::string random = format_hbm_report(made_up_report(800, 2400));
  // The ACT rate bound of hbm2-2000 is tFAW's: 4 / 30 per tCK, one burst per 7.5 tCK.
  EXPECT_NE(random.find("why         75% of requests found their row closed: each needs an ACT "
                        "(and a conflict a PRE first: tRP 14 + tRCD 14 tCK before its column "
                        "command), and a channel can ACT at most min(16 banks / tRC 48, 4 / tFAW "
                        "30, 1 / tRRD_S 4) = 0.133 times per tCK: 26.7% of the peak if every "
                        "burst needs one, against one column command per burst (tBURST 2 tCK) for "
                        "row hits\n"),
            std::string::npos)
      << random;
}

TEST(HbmReport, JsonHasTheSameFigures) {
  const auto j = hbm_report_to_json(made_up_report(2400, 800));
  EXPECT_EQ(j["config"], "hbm2-2000");
  EXPECT_EQ(j["cycles"], 1000);
  EXPECT_DOUBLE_EQ(j["total"]["gbps"].get<double>(), 204.8);
  EXPECT_DOUBLE_EQ(j["total"]["peak_fraction"].get<double>(), 0.8);
  EXPECT_DOUBLE_EQ(j["total"]["row_hit_rate"].get<double>(), 0.75);
  EXPECT_DOUBLE_EQ(j["channels"][3]["peak_fraction"].get<double>(), 0.8);
  EXPECT_EQ(j["channels"].size(), 8u);
  EXPECT_EQ(j["read_latency"]["p99_tck"], 90);
  EXPECT_DOUBLE_EQ(j["read_latency"]["mean_ns"].get<double>(), 40.5);
  EXPECT_EQ(j["total"]["refreshes"], 8);
  EXPECT_DOUBLE_EQ(j["total"]["mean_queue_occupancy"].get<double>(), 4.0);
  EXPECT_DOUBLE_EQ(j["simulation"]["cycles_per_second"].get<double>(), 100000.0);
}

// ---------------------------------------------------------------------------------------------
// Replays through the RTL controller and the DRAM device model
// ---------------------------------------------------------------------------------------------
TEST(HbmReplay, SmallTraceExactCountsAndData) {
  auto source = hbm_trace_source(load_hbm_trace(kTraces / "small.trace", hbm2()), "small.trace");
  const HbmReplayReport r = replay_hbm(hbm2(), *source);
  EXPECT_EQ(r.requests, 16u);
  EXPECT_EQ(r.reads, 11u);
  EXPECT_EQ(r.writes, 5u);
  EXPECT_EQ(r.total.reads, 11u);
  EXPECT_EQ(r.total.writes, 5u);
  EXPECT_EQ(r.reads_checked, 11u);  // and every one returned what was written (or zeros)
  EXPECT_EQ(r.total.row_hits + r.total.row_misses + r.total.row_conflicts, 16u);
  EXPECT_EQ(r.read_latency.count, 11u);
  EXPECT_EQ(r.read_latency_offer.count, 11u);
  // From arrival (the trace cycle) counts every wait before the offer: never less.
  EXPECT_EQ(r.read_latency_arrival.count, 11u);
  EXPECT_GE(r.read_latency_arrival.mean, r.read_latency_offer.mean);
  EXPECT_GE(r.read_latency_arrival.p99, r.read_latency_offer.p99);
  // Per channel: channel = address bits 11..13 (2 KiB pages, ro-ba-bg-ch-co).
  std::vector<std::uint64_t> expected(8);
  for (const auto& q : load_hbm_trace(kTraces / "small.trace", hbm2())) {
    ++expected[hbm2().decode(q.address).channel];
  }
  ASSERT_EQ(r.channels.size(), 8u);
  for (unsigned c = 0; c < 8; ++c) EXPECT_EQ(r.channels[c].requests(), expected[c]) << c;
  EXPECT_EQ(expected[0], 6u);  // 0x0, 0x40 and 0x7c0, each written and read
  // The last requests wait for cycle 100; then a few tens of cycles.
  EXPECT_GT(r.cycles, 100u);
  EXPECT_LT(r.cycles, 400u);
  EXPECT_GT(r.read_latency.mean, 14.0);  // at least CL
}

// Every order of the five address fields (120 permutations, named or custom) replays a mixed
// sequential stream through the RTL controller with no timing violation (the device model throws
// on one) and every read checked, at the row-hit rate the map implies: the rate of a bank seeing
// its requests in address order, computed here from the map's own decoder. The controller may
// reorder within its queue, so the check is by class: maps with the column field lowest stream
// through rows (>= 90 % hits), maps with the row field lowest never hit (<= 5 %), and every map
// lies within 15 points of its in-order rate.
TEST(HbmReplay, EveryAddressMapOrderReplaysAtItsRowHitRate) {
  constexpr std::uint64_t kRequests = 1024;
  std::vector<std::string> fields = {"ba", "bg", "ch", "co", "ro"};  // sorted: next_permutation
  int column_lowest = 0, row_lowest = 0, maps = 0;
  do {
    HbmTimingSet set = hbm2();
    const std::string order = fmt::format("{}", fmt::join(fields, "-"));  // most significant first
    set.address_map = HbmAddressMap::parse(order);
    // In-order row hits: per bank, a request to the row of its bank's previous request.
    std::map<std::tuple<std::uint32_t, std::uint32_t, std::uint32_t>, std::uint32_t> open_row;
    std::uint64_t in_order_hits = 0;
    for (std::uint64_t k = 0; k < kRequests; ++k) {
      const HbmAddress a = set.decode(k * set.burst_bytes());
      const auto bank = std::make_tuple(a.channel, a.bank_group, a.bank);
      const auto it = open_row.find(bank);
      in_order_hits += it != open_row.end() && it->second == a.row;
      open_row[bank] = a.row;
    }
    const double implied = static_cast<double>(in_order_hits) / kRequests;
    auto source = hbm_pattern_source(set, {.pattern = HbmPattern::Stream, .requests = kRequests, .read_ratio = 0.5});
    const HbmReplayReport r = replay_hbm(set, *source);  // throws on a timing violation
    ASSERT_EQ(r.requests, kRequests) << order;
    EXPECT_EQ(r.reads_checked, r.reads) << order;
    const double hits = r.total.row_hit_rate();
    EXPECT_NEAR(hits, implied, 0.15) << order;
    if (fields.back() == "co") {
      ++column_lowest;
      EXPECT_GE(hits, 0.9) << order;
    }
    if (fields.back() == "ro") {
      ++row_lowest;
      EXPECT_LE(hits, 0.05) << order;
    }
    ++maps;
  } while (std::next_permutation(fields.begin(), fields.end()));
  EXPECT_EQ(maps, 120);
  EXPECT_EQ(column_lowest, 24);
  EXPECT_EQ(row_lowest, 24);
}

// tpuemu hbm --probe: one read alone per case. The floors are the protocol's (CL + tBURST, + tRCD,
// + tRP); the controller adds exactly its four pipeline cycles to each (docs/hbm.md "Pipeline
// latency": input register, queue insert, registered command bus, registered response), on every
// shipped timing set, and nothing waits upstream of it.
TEST(HbmProbe, HitMissConflictAreTheFloorPlusThePipeline) {
  for (const char* name : {"hbm2-2000", "hbm2e-3200", "hbm3-6400"}) {
    const HbmTimingSet set = load_hbm_timing_set_file(kRoot / "configs/hbm" / (std::string(name) + ".json"));
    const HbmProbeReport r = probe_hbm(set);
    ASSERT_EQ(r.cases.size(), 3u);
    const auto& t = set.timings;
    const std::uint64_t read = t.CL + set.tBURST();
    const std::uint64_t floors[] = {t.tRCD + read, read, t.tRP + t.tRCD + read};
    const char* names[] = {"miss", "hit", "conflict"};
    for (std::size_t k = 0; k < 3; ++k) {
      EXPECT_EQ(r.cases[k].name, names[k]);
      EXPECT_EQ(r.cases[k].floor, floors[k]) << name << " " << names[k];
      EXPECT_EQ(r.cases[k].latency, floors[k] + 4) << name << " " << names[k];
      EXPECT_EQ(r.cases[k].controller, r.cases[k].latency) << name << " " << names[k];
    }
  }
  const nlohmann::json j = hbm_probe_to_json(probe_hbm(hbm2()));
  EXPECT_EQ(j["probe"]["hit"]["jedec_floor_tck"], 16);
  EXPECT_EQ(j["probe"]["conflict"]["latency_tck"], 48);
}

TEST(HbmReplay, StreamReadsNearThePeakRandomFarBelow) {
  constexpr std::uint64_t kRequests = 8000;
  auto stream = hbm_pattern_source(hbm2(), {.pattern = HbmPattern::Stream, .requests = kRequests});
  const HbmReplayReport s = replay_hbm(hbm2(), *stream);
  auto random = hbm_pattern_source(hbm2(), {.pattern = HbmPattern::Random, .requests = kRequests});
  const HbmReplayReport r = replay_hbm(hbm2(), *random);
  std::printf("[ stream ] %.1f%% of peak, row hits %.1f%%, read latency %.1f tCK; "
              "[ random ] %.1f%% of peak, row hits %.1f%%, read latency %.1f tCK\n",
              100 * s.peak_fraction(s.total, true), 100 * s.total.row_hit_rate(),
              s.read_latency.mean, 100 * r.peak_fraction(r.total, true),
              100 * r.total.row_hit_rate(), r.read_latency.mean);
  EXPECT_EQ(s.total.reads, kRequests);
  EXPECT_EQ(r.total.reads, kRequests);
  EXPECT_EQ(s.reads_checked, kRequests);
  EXPECT_GE(s.peak_fraction(s.total, true), 0.85);
  // All 8000 are due at cycle 0: from arrival, a read waits for the ones before it, so its mean
  // is about half the run, far above what the controller sees of it.
  EXPECT_GT(s.read_latency_arrival.mean, 0.3 * static_cast<double>(s.cycles));
  EXPECT_LT(s.read_latency_arrival.mean, 0.7 * static_cast<double>(s.cycles));
  EXPECT_GT(s.read_latency_arrival.mean, 10 * s.read_latency.mean);
  EXPECT_GT(static_cast<double>(s.read_latency_arrival.p99), 0.9 * static_cast<double>(s.cycles));
  EXPECT_GE(s.total.row_hit_rate(), 0.9);
  EXPECT_LT(r.peak_fraction(r.total, true), 0.5 * s.peak_fraction(s.total, true));
  EXPECT_LT(r.total.row_hit_rate(), 0.2);
  // Nearly every random burst needs an ACT: the ACT rate bound (tFAW's here) caps the bandwidth.
  EXPECT_LE(r.peak_fraction(r.total, true),
            r.act_rate_bound() * static_cast<double>(r.tBURST) + 0.005);
  EXPECT_GT(r.read_latency.mean, s.read_latency.mean);
  EXPECT_NE(format_hbm_report(r).find("\nwhy "), std::string::npos);
}

// ---------------------------------------------------------------------------------------------
// Write batching and queue depths (docs/hbm.md "Queues and write batching"): the acceptance
// figures of the controller's default queue sizes, measured by replay.
// ---------------------------------------------------------------------------------------------
HbmTimingSet with_queues(HbmTimingSet set, spec::hbm::QueueSizes q) {
  set.queues = q;
  return set;
}

HbmReplayReport replay_pattern(const HbmTimingSet& set, HbmPatternOptions p, HbmReplayOptions o = {}) {
  auto source = hbm_pattern_source(set, p);
  return replay_hbm(set, *source, o);
}

// Sequential bursts, one due per cycle, reads with probability read_ratio (fixed seed).
std::vector<HbmTraceRequest> sequential_trace(std::size_t n, double read_ratio) {
  std::mt19937_64 rng(5);
  std::vector<HbmTraceRequest> out;
  for (std::size_t i = 0; i < n; ++i) {
    const bool write = read_ratio < 1 && static_cast<double>(rng() >> 11) * 0x1.0p-53 >= read_ratio;
    out.push_back({.address = i * 64, .write = write, .cycle = i});
  }
  return out;
}

TEST(HbmQueues, StreamAddReachesEightyPercentWithTheWriteQueue) {
  const HbmReplayReport r = replay_pattern(hbm2(), {.pattern = HbmPattern::StreamAdd, .requests = 60000});
  std::printf("[ stream-add ] %.1f%% of peak, %llu turnarounds\n", 100 * r.peak_fraction(r.total, true),
              static_cast<unsigned long long>(r.total.turnarounds));
  EXPECT_EQ(r.reads, 40000u);
  EXPECT_EQ(r.writes, 20000u);
  EXPECT_EQ(r.total.writes, 20000u);  // every posted write issued before the run ended
  EXPECT_GE(r.peak_fraction(r.total, true), 0.80);
  // Without batching (a write drain at every other write) the same pattern turns the bus around
  // several times as often and loses a fifth of the bandwidth.
  const HbmTimingSet small = with_queues(hbm2(), {.read_queue = 28, .write_queue = 4, .write_high = 2, .write_low = 1});
  const HbmReplayReport u = replay_pattern(small, {.pattern = HbmPattern::StreamAdd, .requests = 60000});
  EXPECT_GT(u.total.turnarounds, 3 * r.total.turnarounds);
  EXPECT_LT(u.peak_fraction(u.total, true), 0.8 * r.peak_fraction(r.total, true));
  EXPECT_EQ(u.reads_checked, u.reads);
}

TEST(HbmQueues, PureStreamStaysNearThePeakRandomWithinTheActivationBound) {
  const HbmReplayReport s = replay_pattern(hbm2(), {.pattern = HbmPattern::Stream, .requests = 40000});
  EXPECT_GE(s.peak_fraction(s.total, true), 0.90);
  const HbmReplayReport r = replay_pattern(hbm2(), {.pattern = HbmPattern::Random, .requests = 20000});
  EXPECT_LE(r.peak_fraction(r.total, true), r.act_rate_bound() * static_cast<double>(r.tBURST));
  EXPECT_GE(r.peak_fraction(r.total, true), 0.85 * r.act_rate_bound() * static_cast<double>(r.tBURST));
}

TEST(HbmQueues, MixedTrafficCostsReadsLittleLatencyFromArrival) {
  // One request per cycle, sequential: the reads of a 50/50 mix wait no more than 10 tCK longer
  // (mean, from arrival) than the same trace with every request a read.
  auto mixed = hbm_trace_source(sequential_trace(30000, 0.5), "seq 50/50");
  auto reads = hbm_trace_source(sequential_trace(30000, 1.0), "seq reads");
  const HbmReplayReport m = replay_hbm(hbm2(), *mixed);
  const HbmReplayReport r = replay_hbm(hbm2(), *reads);
  std::printf("[ sequential 1/cycle ] read latency from arrival: 50/50 %.1f tCK, reads only %.1f tCK\n",
              m.read_latency_arrival.mean, r.read_latency_arrival.mean);
  EXPECT_EQ(m.reads_checked, m.reads);
  EXPECT_GT(m.writes, 14000u);
  EXPECT_LE(m.read_latency_arrival.mean, r.read_latency_arrival.mean + 10);
}

TEST(HbmQueues, InOrderSequentialReadsDrainNearTheIdeal) {
  // A blocking requester (strict order) over a channel-interleaved map: the queues must absorb a
  // refresh and still keep every channel busy. Ideal: requests x tBURST / channels stretched by
  // the refresh share tRFC / tREFI (no DRAM serves reads while it refreshes), plus one read's
  // latency.
  HbmTimingSet set = hbm2();
  set.address_map = HbmAddressMap::parse("ro-ba-bg-co-ch");
  constexpr std::uint64_t kRequests = 60000;
  HbmReplayOptions o;
  o.in_order = true;
  const HbmReplayReport r = replay_pattern(set, {.pattern = HbmPattern::Stream, .requests = kRequests}, o);
  const double refresh = 1.0 - static_cast<double>(set.timings.tRFC) / set.timings.tREFI;
  const double ideal = kRequests * set.tBURST() / static_cast<double>(set.geometry.channels) / refresh + 20;
  std::printf("[ in order ] %llu cycles, ideal %.0f\n", static_cast<unsigned long long>(r.cycles), ideal);
  EXPECT_EQ(r.reads_checked, kRequests);
  EXPECT_LE(static_cast<double>(r.cycles), 1.05 * ideal);
  // The default map sends 32 bursts in a row to one channel: strictly in order, the port's one
  // request per channel per cycle is the bound (about a quarter of the peak here).
  const HbmReplayReport d = replay_pattern(hbm2(), {.pattern = HbmPattern::Stream, .requests = 20000}, o);
  EXPECT_GE(static_cast<double>(d.cycles), 0.95 * 20000);
  // In order never beats a FIFO per channel.
  const HbmReplayReport f = replay_pattern(hbm2(), {.pattern = HbmPattern::Stream, .requests = 20000});
  EXPECT_LT(f.cycles, d.cycles);
}

TEST(HbmQueues, QueueSizesComeFromTheTimingSetAndAreChecked) {
  EXPECT_EQ(hbm2().queues.read_queue, 28u);
  EXPECT_EQ(hbm2().queues.write_high, 32u);
  const auto error_of = [](const std::string& controller) {
    const std::string text = R"({"name": "q", "source": "test", "tck_ps": 1000,
  "geometry": { "channels": 8, "bank_groups": 4, "banks_per_group": 4, "rows": 16384,
                "columns": 32, "bus_bytes": 16, "burst_length": 4 },
  "timing": { "CL": 14, "CWL": 4, "tRCD": 14, "tRP": 14, "tRAS": 34, "tRC": 48, "tRRD_S": 4,
              "tRRD_L": 6, "tFAW": 30, "tCCD_S": 1, "tCCD_L": 2, "tWTR_S": 6, "tWTR_L": 8,
              "tWR": 16, "tRTP": 6, "tRFC": 260, "tREFI": 3900 },
  "controller": )" + controller + "}";
    try {
      hbm_timing_set_from_json(JsonDocument::parse(text, "q.json"));
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_NE(error_of(R"({"read_queue": 40, "write_queue": 32})").find("q.json:7:"), std::string::npos);
  EXPECT_NE(error_of(R"({"read_queue": 40, "write_queue": 32})").find("exceeds the 64 slots"), std::string::npos)
      << error_of(R"({"read_queue": 40, "write_queue": 32})");
  EXPECT_NE(error_of(R"({"write_low": 32})").find("/controller/write_low"), std::string::npos);
  EXPECT_NE(error_of(R"({"write_high": 40})").find("write_high: 40 > write_queue = 36"), std::string::npos);
  EXPECT_NE(error_of(R"({"read_queue": 0})").find("/controller/read_queue"), std::string::npos);
  EXPECT_NE(error_of(R"({"read_qeue": 8})").find("read_qeue"), std::string::npos);
  EXPECT_EQ(error_of(R"({"read_queue": 16, "write_queue": 16, "write_high": 12, "write_low": 4})"), "(no error)");
}

TEST(HbmReplay, MixedWritesAndReadsClosedPage) {
  auto source = hbm_pattern_source(
      hbm2(), {.pattern = HbmPattern::Random, .requests = 3000, .read_ratio = 0.5, .seed = 7});
  HbmReplayOptions o;
  o.closed_page = true;
  const HbmReplayReport r = replay_hbm(hbm2(), *source, o);
  EXPECT_EQ(r.page_policy, "closed");
  EXPECT_EQ(r.total.requests(), 3000u);
  EXPECT_EQ(r.reads + r.writes, 3000u);
  EXPECT_EQ(r.reads_checked, r.reads);
  EXPECT_GT(r.total.turnarounds, 0u);
}

TEST(HbmReplay, CommandErrors) {
  const auto error_of = [](HbmCommandOptions o) {
    try {
      run_hbm_command(o);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_EQ(error_of({}), "hbm: give either --requests-file FILE or --pattern stream|random|stream-add");
  EXPECT_EQ(error_of({.trace_file = "x", .pattern = "stream"}),
            "hbm: give either --requests-file FILE or --pattern stream|random|stream-add");
  EXPECT_EQ(error_of({.pattern = "stream", .page_policy = "ajar"}),
            "hbm: --page-policy must be open or closed, got 'ajar'");
  EXPECT_NE(error_of({.pattern = "stream", .config = "hbm9-1"}).find("hbm9-1"), std::string::npos);
}

}  // namespace
}  // namespace tpuemu

namespace tpuemu {
namespace {

// Hardening: an RTL assertion failure ($error + $stop in the controller) is an Error with
// one line, not text on stdout and abort(). The timing set is broken after validation, which
// refuses it on load (tREFI > tRFC + tRC + tWR + CWL).
TEST(HbmReplay, RtlAssertionBecomesAnErrorNotAnAbort) {
  HbmTimingSet broken = hbm2();
  broken.timings.tRFC = 1;
  broken.timings.tREFI = 2;
  HbmPatternOptions p;
  p.pattern = HbmPattern::Stream;
  p.requests = 2000;
  auto source = hbm_pattern_source(broken, p);
  ::testing::internal::CaptureStdout();
  std::string msg = "(no error)";
  try {
    (void)replay_hbm(broken, *source);
  } catch (const Error& e) {
    msg = e.what();
  }
  const std::string printed = ::testing::internal::GetCapturedStdout();
  EXPECT_NE(msg.find("RTL: hbm_refresh_timer.sv:"), std::string::npos) << msg;
  EXPECT_NE(msg.find("8 REFs postponed"), std::string::npos) << msg;
  EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  EXPECT_EQ(printed, "");  // nothing of the model's text reached stdout
  // the next system starts clean: a valid replay after the failure succeeds
  auto good = hbm_pattern_source(hbm2(), p);
  EXPECT_EQ(replay_hbm(hbm2(), *good).requests, 2000u);
}

}  // namespace
}  // namespace tpuemu

namespace tpuemu {
namespace {

// Hardening: idle gaps are fast-forwarded by whole refresh periods, and the figures are
// those of clocking every cycle: the same cycles, refreshes, precharges and refresh time.
TEST(HbmReplay, IdleFastForwardMatchesClockingEveryCycle) {
  const std::string text = "0x0 READ 0\n0x40 WRITE 30000\n0x1000 READ 30001\n0x0 READ 90000\n0x40 READ 150007\n";
  const auto requests = parse_hbm_trace(text, "gaps.trace", hbm2());
  HbmReplayOptions slow;
  slow.fast_forward_idle = false;
  auto a = hbm_trace_source(requests, "gaps");
  const HbmReplayReport clocked = replay_hbm(hbm2(), *a, slow);
  auto b = hbm_trace_source(requests, "gaps");
  const HbmReplayReport fast = replay_hbm(hbm2(), *b);
  EXPECT_EQ(clocked.idle_cycles_skipped, 0u);
  EXPECT_GT(fast.idle_cycles_skipped, 100000u);
  EXPECT_EQ(fast.cycles, clocked.cycles);
  EXPECT_EQ(fast.total.refreshes, clocked.total.refreshes);
  EXPECT_EQ(fast.total.refresh_cycles, clocked.total.refresh_cycles);
  EXPECT_EQ(fast.total.precharges, clocked.total.precharges);
  EXPECT_EQ(fast.total.acts, clocked.total.acts);
  EXPECT_EQ(fast.reads_checked, clocked.reads_checked);
  EXPECT_EQ(fast.read_latency.mean, clocked.read_latency.mean);
  // a trillion-cycle gap finishes (the defect: it never did)
  auto c = hbm_trace_source(parse_hbm_trace("0x0 READ 1000000000000\n", "far.trace", hbm2()), "far");
  const HbmReplayReport far = replay_hbm(hbm2(), *c);
  EXPECT_GT(far.cycles, 1000000000000u);
  EXPECT_GT(far.total.refreshes, 2000000000u);
}

// At the last cycle a trace may hold, every figure is counted without wrapping: the run ends after
// the request, nearly all of it fast-forwarded, and the shares stay within 0..100 %. Before the
// limit, 2^64 - 1 reported "idle 18446744073709536000 of the 279 cycles" and refresh at 4e17 %.
TEST(HbmReplay, LargestCycleReportsSaneFigures) {
  auto source = hbm_trace_source(
      parse_hbm_trace("0x0 WRITE 0\n0x40 READ 281474976710655\n", "limit.trace", hbm2()), "limit");
  const HbmReplayReport r = replay_hbm(hbm2(), *source);
  EXPECT_EQ(r.requests, 2u);
  EXPECT_EQ(r.reads_checked, 1u);
  EXPECT_GT(r.cycles, kMaxHbmTraceCycle);
  EXPECT_LT(r.cycles, kMaxHbmTraceCycle + 100000);
  EXPECT_LE(r.idle_cycles_skipped, r.cycles);
  EXPECT_GT(r.idle_cycles_skipped, kMaxHbmTraceCycle - 100000);
  const double refresh_share = static_cast<double>(r.total.refresh_cycles) /
                               (static_cast<double>(r.cycles) * static_cast<double>(r.channels.size()));
  EXPECT_GT(refresh_share, 0.0);
  EXPECT_LT(refresh_share, 0.2);  // tRFC / tREFI on every channel
  for (const HbmChannelFigures& c : r.channels) EXPECT_LE(c.refresh_cycles, r.cycles);
  EXPECT_LT(r.read_latency_arrival.mean, 1000.0);  // due at the last cycle, served at once
  const std::string text = format_hbm_report(r);
  const auto at = text.find("\nrefresh ");
  ASSERT_NE(at, std::string::npos) << text;
  const auto open = text.find('(', at);
  const double percent = std::stod(text.substr(open + 1));
  EXPECT_NEAR(percent, 100 * refresh_share, 0.1) << text;
  EXPECT_NE(text.find(fmt::format("idle        {} of the {} cycles", r.idle_cycles_skipped, r.cycles)),
            std::string::npos) << text;
}

}  // namespace
}  // namespace tpuemu
