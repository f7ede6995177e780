// SPDX-License-Identifier: Apache-2.0
// Pins the exact results of the tlm backend's HBM timing model (docs/hbm-trace.md): a fixed,
// seeded mix of a few thousand beats (streams and random accesses, reads and writes, idle gaps
// across refreshes) through make_hbm_beat_timing, hashed over every (accept, done) pair and the
// controller's counters. The expected hashes were recorded before the model was optimised for
// speed, so any change of its timing, however small, fails here: speed work must be result-
// identical, and a deliberate change of the rules has to update these values on purpose (last:
// the write drains: writes wait in the write queue for a drain, between the watermarks, instead
// of being placed when they arrive; every case mixes reads and writes, so all changed).
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <ostream>
#include <random>
#include <string>

#include "tpuemu/config/hbm_config.h"
#include "tpuemu/sim_setup/hbm_setup.h"
#include "tpuemu/tlm/hbm_beat_timing.h"

namespace {

namespace hbm = tpuemu::sim::hbm;

// FNV-1a over 64-bit words: simple, stable across platforms and compilers.
class Hash {
 public:
  void add(std::uint64_t v) {
    for (int i = 0; i < 8; ++i) {
      h_ ^= (v >> (8 * i)) & 0xff;
      h_ *= 0x100000001b3ull;
    }
  }
  std::uint64_t value() const { return h_; }

 private:
  std::uint64_t h_ = 0xcbf29ce484222325ull;
};

struct GoldenCase {
  std::string set;
  double ratio;  // the default preset's 1 GHz core over the set's tCK
  std::uint32_t beat_bytes;
  bool closed_page;
  std::uint64_t expected;
};

void PrintTo(const GoldenCase& c, std::ostream* os) {
  *os << c.set << " beat " << c.beat_bytes << (c.closed_page ? " closed page" : "");
}

// The beats of one run, presented like a core would: mostly the cycle after the previous accept,
// sometimes after a short pause, rarely after a long idle stretch (refreshes pass meanwhile).
// Segments are streams (reads or writes), random reads, random mixed beats, and read/write pairs
// to one beat. Only rng() is used (no distributions), so the sequence is the same everywhere.
std::uint64_t run_hash(const GoldenCase& c) {
  hbm::HbmSetup s = tpuemu::hbm_setup_from(tpuemu::load_hbm_timing_set_file(
      std::filesystem::path(TPUEMU_SOURCE_DIR) / ("configs/hbm/" + c.set + ".json")));
  s.closed_page = c.closed_page;
  const std::uint64_t capacity = 256ull << 20;
  const std::uint64_t beats_in = capacity / c.beat_bytes;
  const auto model = tpuemu::tlm::make_hbm_beat_timing(s, c.ratio, c.beat_bytes, capacity);
  std::mt19937_64 rng(2024);
  Hash h;
  std::uint64_t presented = 0, last = 0;
  int n = 0;
  constexpr int kBeats = 4000;
  while (n < kBeats) {
    const std::uint64_t kind = rng() % 5;
    const std::uint64_t len = 1 + rng() % (kind <= 1 ? 96 : 24);
    std::uint64_t addr = rng() % beats_in;
    for (std::uint64_t i = 0; i < len && n < kBeats; ++i, ++n) {
      bool write = false;
      std::uint64_t a = addr;
      switch (kind) {
        case 0: a = (addr + i) % beats_in; break;                       // read stream
        case 1: a = (addr + i) % beats_in; write = true; break;         // write stream
        case 2: a = rng() % beats_in; break;                            // random reads
        case 3: a = rng() % beats_in; write = (rng() & 1) != 0; break;  // random mixed
        default: write = (i & 1) != 0; break;                           // read, write, read ... one beat
      }
      const tpuemu::tlm::BeatTiming t = model->access(presented, write, a * c.beat_bytes);
      h.add(t.accept);
      h.add(t.done);
      last = std::max(last, t.done);
      presented = t.accept + 1;
      const std::uint64_t pause = rng() % 256;
      if (pause < 16) presented += 1 + rng() % 64;
      if (pause == 255) presented += rng() % 20'000;
    }
  }
  model->finish(last);
  const hbm::Statistics st = model->statistics();
  for (const std::uint64_t v : {st.total.reads, st.total.writes, st.total.row_hits, st.total.row_misses,
                                st.total.row_conflicts, st.total.acts, st.total.precharges, st.total.refreshes,
                                st.total.refresh_cycles, st.total.turnarounds, st.total.read_latency_sum,
                                st.read_latency_p50, st.read_latency_p99, st.cycles}) {
    h.add(v);
  }
  return h.value();
}

class HbmTimingGolden : public ::testing::TestWithParam<GoldenCase> {};

TEST_P(HbmTimingGolden, TimingsAreExactlyThoseRecorded) {
  const std::uint64_t got = run_hash(GetParam());
  EXPECT_EQ(got, GetParam().expected) << "hash 0x" << std::hex << got;
}

INSTANTIATE_TEST_SUITE_P(
    Mixed, HbmTimingGolden,
    ::testing::Values(GoldenCase{"hbm2-2000", 1.0, 16, false, 0xc554407dcc817732ull},
                      GoldenCase{"hbm2-2000", 1.0, 128, false, 0x37e944de9818aa02ull},
                      GoldenCase{"hbm2e-3200", 1.6, 16, false, 0xc45fce46efa8f18dull},
                      GoldenCase{"hbm2e-3200", 1.6, 128, false, 0x8b567997136b3154ull},
                      GoldenCase{"hbm2-2000", 1.0, 16, true, 0xc31b5581f62fce6aull},
                      GoldenCase{"hbm2e-3200", 1.6, 128, true, 0x222bde9d7f48a46aull}),
    [](const ::testing::TestParamInfo<GoldenCase>& i) {
      std::string n = i.param.set + "_dim" + std::to_string(i.param.beat_bytes) +
                      (i.param.closed_page ? "_closed_page" : "");
      for (char& ch : n) ch = (ch == '-') ? '_' : ch;
      return n;
    });

}  // namespace
