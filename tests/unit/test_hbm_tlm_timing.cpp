// SPDX-License-Identifier: Apache-2.0
// The burst-level HBM timing model of the tlm backend (sim/tlm, docs/hbm-trace.md) against
// what it mimics: the Verilated controller driving the DRAM device model (sim::hbm::HbmSystem),
// and, a level up, the RTL backend's HBM memory behind a core port (make_core_memory). Same
// request sequences (fixed seeds) through both. The targets are bandwidth within 5 %, mean read
// latency within 10 %, beat completion latency and total time within 5 %; each case is held to
// what the model meets, with a small margin, so a regression fails.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <functional>
#include <ostream>
#include <queue>
#include <random>
#include <stdexcept>
#include <utility>
#include <string>
#include <vector>

#include "core_memory.h"
#include "tpuemu/config/hbm_config.h"
#include "tpuemu/sim/hbm_system.h"
#include "tpuemu/sim_setup/hbm_setup.h"
#include "tpuemu/tlm/hbm_beat_timing.h"
#include "tpuemu/tlm/hbm_target.h"
#include "tpuemu/tlm/hbm_timing.h"

namespace {

namespace hbm = tpuemu::sim::hbm;
const std::filesystem::path kRoot = TPUEMU_SOURCE_DIR;

hbm::HbmSetup setup_of(const std::string& name) {
  return tpuemu::hbm_setup_from(tpuemu::load_hbm_timing_set_file(kRoot / "configs/hbm" / (name + ".json")));
}

struct BurstRequest {
  bool write;
  std::uint64_t addr;
};

enum class Pattern { Stream, Random };

// As tpuemu hbm --pattern makes them: sequential bursts, or uniform burst addresses; writes with
// probability 1 - read_ratio.
std::vector<BurstRequest> pattern(const hbm::HbmSetup& s, Pattern p, double read_ratio, std::size_t n,
                                  std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  const std::uint64_t bursts = s.dram.capacity_bytes() / 64;
  std::vector<BurstRequest> out;
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t b = p == Pattern::Stream ? i % bursts : rng() & (bursts - 1);
    const bool write = read_ratio < 1.0 && static_cast<double>(rng() >> 11) * 0x1.0p-53 >= read_ratio;
    out.push_back({write, b * 64});
  }
  return out;
}

struct Figures {
  double bytes_per_cycle = 0;
  double read_latency = 0;  // tCK, accepted -> response
  double ns_per_request = 0;
  std::uint64_t refreshes = 0;
  std::uint64_t cycles = 0;  // until the last response
};

constexpr unsigned kIds = 256;  // requests offered and unanswered at most (the 8-bit ids)

// The RTL: requests in order onto the lanes as HbmMemory offers them (at most kIds unanswered).
Figures run_rtl(const hbm::HbmSetup& s, const std::vector<BurstRequest>& reqs) {
  const auto sys = hbm::make_hbm_system(s);
  std::vector<std::uint8_t> free_ids;
  for (int id = kIds - 1; id >= 0; --id) free_ids.push_back(static_cast<std::uint8_t>(id));
  std::array<std::uint8_t, 64> zeros{};
  std::size_t next = 0, answered = 0;
  std::uint64_t last_response = 0;
  const auto t0 = std::chrono::steady_clock::now();
  while (answered < reqs.size()) {
    while (next < reqs.size() && !free_ids.empty()) {
      hbm::Request r{.write = reqs[next].write, .addr = reqs[next].addr, .id = free_ids.back()};
      r.wdata = zeros.data();
      if (!sys->offer(r)) break;
      free_ids.pop_back();
      ++next;
    }
    sys->tick();
    if (sys->fault()) throw std::runtime_error(*sys->fault());
    for (const hbm::Response& r : sys->responses()) {
      free_ids.push_back(r.id);
      ++answered;
      last_response = sys->cycle() - 1;  // the tick that produced it
    }
    if (sys->cycle() > 100'000'000) throw std::runtime_error("rtl run does not end");
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  sys->finish();
  const hbm::Statistics st = sys->statistics();
  Figures f;
  f.cycles = last_response + 1;
  f.bytes_per_cycle = static_cast<double>(reqs.size()) * 64 / static_cast<double>(f.cycles);
  f.read_latency = st.read_latency_mean;
  f.ns_per_request = secs * 1e9 / static_cast<double>(reqs.size());
  f.refreshes = st.total.refreshes;
  if (std::getenv("TPUEMU_TLM_DEBUG")) {
    std::printf("rtl: turns %llu hits %llu miss %llu conf %llu acts %llu refs %llu occ %.2f\n",
                (unsigned long long)st.total.turnarounds, (unsigned long long)st.total.row_hits,
                (unsigned long long)st.total.row_misses, (unsigned long long)st.total.row_conflicts,
                (unsigned long long)st.total.acts, (unsigned long long)st.total.refreshes,
                double(st.total.queue_occupancy_sum) / double(st.cycles) / s.dram.channels);
  }
  return f;
}

// The model, with the same id window: an id comes back the tick after its response.
Figures run_model(const hbm::HbmSetup& s, const std::vector<BurstRequest>& reqs, hbm::Statistics* stats = nullptr) {
  tpuemu::tlm::HbmBurstTiming model(s);
  std::priority_queue<std::uint64_t, std::vector<std::uint64_t>, std::greater<>> ids_back;
  std::uint64_t last = 0, offer = 0;
  double latency_sum = 0;
  std::size_t reads = 0;
  const auto t0 = std::chrono::steady_clock::now();
  for (const BurstRequest& r : reqs) {
    if (ids_back.size() == kIds) {
      offer = std::max(offer, ids_back.top());
      ids_back.pop();
    }
    const tpuemu::tlm::BurstTiming t = model.request(offer, r.write, r.addr);
    ids_back.push(t.done + 1);
    last = std::max(last, t.done);
    if (!r.write) {
      latency_sum += static_cast<double>(t.done - t.accept);
      ++reads;
    }
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  model.finish(last);
  const hbm::Statistics st = model.statistics();
  if (stats) *stats = st;
  Figures f;
  f.cycles = last + 1;
  f.bytes_per_cycle = static_cast<double>(reqs.size()) * 64 / static_cast<double>(f.cycles);
  f.read_latency = reads ? latency_sum / static_cast<double>(reads) : 0;
  EXPECT_NEAR(f.read_latency, st.read_latency_mean, 1e-6);
  f.ns_per_request = secs * 1e9 / static_cast<double>(reqs.size());
  f.refreshes = st.total.refreshes;
  if (std::getenv("TPUEMU_TLM_DEBUG")) {
    std::printf("model: turns %llu hits %llu miss %llu conf %llu acts %llu refs %llu\n",
                (unsigned long long)st.total.turnarounds, (unsigned long long)st.total.row_hits,
                (unsigned long long)st.total.row_misses, (unsigned long long)st.total.row_conflicts,
                (unsigned long long)st.total.acts, (unsigned long long)st.total.refreshes);
  }
  return f;
}

double error(double model, double rtl) { return (model - rtl) / rtl; }

struct Case {
  std::string set;
  Pattern pattern;
  double read_ratio;
  const char* name;
  // What the model meets on every set and pattern (docs/hbm-trace.md): bandwidth within 3.8 %,
  // mean read latency within 5.6 %; the bounds leave a small margin, so a regression fails.
  double bandwidth_tolerance = 0.045;
  double latency_tolerance = 0.07;
};

class BurstModelVsRtl : public ::testing::TestWithParam<Case> {};

TEST_P(BurstModelVsRtl, BandwidthAndReadLatencyMatch) {
  const Case& c = GetParam();
  const hbm::HbmSetup s = setup_of(c.set);
  const std::vector<BurstRequest> reqs = pattern(s, c.pattern, c.read_ratio, 30'000, 7);
  const Figures rtl = run_rtl(s, reqs);
  const Figures model = run_model(s, reqs);
  std::printf("| %s | %s | %.1f | %.1f | %.1f | %.1f | %+.1f %% | %+.1f %% | %.0f | %.0f |\n", c.set.c_str(),
              c.name, rtl.bytes_per_cycle, rtl.read_latency, model.bytes_per_cycle, model.read_latency,
              100 * error(model.bytes_per_cycle, rtl.bytes_per_cycle),
              c.read_ratio > 0 ? 100 * error(model.read_latency, rtl.read_latency) : 0.0, rtl.ns_per_request,
              model.ns_per_request);
  EXPECT_NEAR(error(model.bytes_per_cycle, rtl.bytes_per_cycle), 0, c.bandwidth_tolerance)
      << "bandwidth B/tCK: model " << model.bytes_per_cycle << ", rtl " << rtl.bytes_per_cycle;
  if (c.read_ratio > 0) {
    EXPECT_NEAR(error(model.read_latency, rtl.read_latency), 0, c.latency_tolerance)
        << "mean read latency tCK: model " << model.read_latency << ", rtl " << rtl.read_latency;
  }
  // Both refresh every channel once per tREFI, never postponing (the RTL's REF is due from
  // tREFI + 2 on): as many REFs as whole intervals in the run, give or take one per channel.
  const auto intervals = [&](std::uint64_t cycles) {
    return static_cast<double>(s.dram.channels * ((cycles + s.dram.tREFI - 1) / s.dram.tREFI - 1));
  };
  EXPECT_GT(model.refreshes, 0u);
  EXPECT_NEAR(static_cast<double>(rtl.refreshes), intervals(rtl.cycles), s.dram.channels);
  EXPECT_NEAR(static_cast<double>(model.refreshes), intervals(model.cycles), s.dram.channels);
}

INSTANTIATE_TEST_SUITE_P(
    Patterns, BurstModelVsRtl,
    ::testing::Values(Case{"hbm2-2000", Pattern::Stream, 1.0, "stream"},
                      Case{"hbm2-2000", Pattern::Random, 1.0, "random"},
                      Case{"hbm2-2000", Pattern::Random, 0.5, "random, read ratio 0.5"},
                      Case{"hbm2-2000", Pattern::Stream, 0.5, "stream, read ratio 0.5"},
                      Case{"hbm2e-3200", Pattern::Stream, 1.0, "stream"},
                      Case{"hbm2e-3200", Pattern::Random, 1.0, "random"},
                      Case{"hbm2e-3200", Pattern::Random, 0.5, "random, read ratio 0.5"},
                      Case{"hbm2e-3200", Pattern::Stream, 0.5, "stream, read ratio 0.5"},
                      Case{"hbm3-6400", Pattern::Stream, 1.0, "stream"},
                      Case{"hbm3-6400", Pattern::Random, 1.0, "random"},
                      Case{"hbm3-6400", Pattern::Random, 0.5, "random, read ratio 0.5"},
                      Case{"hbm3-6400", Pattern::Stream, 0.5, "stream, read ratio 0.5"}),
    [](const ::testing::TestParamInfo<Case>& i) {
      std::string n = i.param.set + "_" + (i.param.pattern == Pattern::Stream ? "stream" : "random") +
                      (i.param.read_ratio < 1 ? "_mixed" : "");
      for (char& ch : n) ch = (ch == '-') ? '_' : ch;
      return n;
    });

// ---------------------------------------------------------------------------------------------
// Beat level: the adapter against the RTL backend's HBM memory (bridge + controller + device)
// ---------------------------------------------------------------------------------------------
struct Beat {
  bool write;
  std::uint64_t addr;
};

struct BeatFigures {
  double mean_latency = 0;  // core cycles from presented to response / ack
  std::uint64_t total = 0;  // core cycle of the last response
};

std::vector<Beat> beats(std::uint32_t beat_bytes, int kind, std::size_t n, std::uint64_t capacity) {
  std::mt19937_64 rng(11);
  std::vector<Beat> out;
  bool burst_writes = false;  // kind 4: the direction of the current 64-byte burst
  for (std::size_t i = 0; i < n; ++i) {
    if (kind == 4 && i * beat_bytes % 64 == 0) burst_writes = (rng() & 1) != 0;
    switch (kind) {
      case 0: out.push_back({false, i * beat_bytes % capacity}); break;           // sequential reads
      case 1: out.push_back({true, i * beat_bytes % capacity}); break;            // sequential writes
      case 2: out.push_back({false, (rng() % (capacity / beat_bytes)) * beat_bytes}); break;  // random reads
      case 3: out.push_back({(rng() & 1) != 0, (rng() % (capacity / beat_bytes)) * beat_bytes}); break;  // random mixed
      case 4: out.push_back({burst_writes, i * beat_bytes % capacity}); break;  // sequential, a direction per burst
      case 6:  // a read stream with every fifth beat from a second, slower one in another row of the
               // same bank (the core's instruction fetch beside a DMA read: the program at 3 MiB)
        out.push_back({false, i % 5 == 4 ? ((3u << 20) + i / 5 * beat_bytes) % capacity : (i - i / 5) * beat_bytes % capacity});
        break;
      default: out.push_back({(rng() & 1) != 0, i * beat_bytes % capacity}); break;  // sequential, a direction per beat
    }
  }
  return out;
}

// A core that presents a beat every cycle its port is free (the next cycle after an accept).
BeatFigures run_core_memory(const hbm::HbmSetup& s, double ratio, std::uint32_t beat_bytes,
                            std::uint64_t capacity, const std::vector<Beat>& seq) {
  tpuemu::sim::MemoryModelConfig cfg;
  cfg.capacity_bytes = capacity;
  cfg.hbm = s;
  cfg.dram_cycles_per_core_cycle = ratio;
  const auto mem = tpuemu::sim::make_core_memory(cfg, beat_bytes);
  const std::vector<std::uint8_t> wdata(beat_bytes, 0);
  std::deque<std::uint64_t> reads, writes;  // presented cycles, in order
  std::size_t next = 0, answered = 0;
  std::uint64_t presented = 0;
  double sum = 0;
  BeatFigures f;
  for (std::uint64_t c = 0; answered < seq.size(); ++c) {
    if (mem->read_response(c)) {
      sum += static_cast<double>(c - reads.front());
      reads.pop_front();
      ++answered;
      f.total = c;
    }
    if (mem->write_ack(c)) {
      sum += static_cast<double>(c - writes.front());
      writes.pop_front();
      ++answered;
      f.total = c;
    }
    bool wrote = false;
    if (next < seq.size() && c >= presented && mem->ready()) {
      mem->accept(c, seq[next].write, seq[next].addr, wdata);
      (seq[next].write ? writes : reads).push_back(presented);
      wrote = seq[next].write;
      ++next;
      presented = c + 1;
    }
    mem->end_cycle(c + 1, wrote);
    if (mem->fault()) throw std::runtime_error(*mem->fault());
    if (c > 50'000'000) throw std::runtime_error("core memory run does not end");
  }
  f.mean_latency = sum / static_cast<double>(seq.size());
  return f;
}

BeatFigures run_adapter(const hbm::HbmSetup& s, double ratio, std::uint32_t beat_bytes, std::uint64_t capacity,
                        const std::vector<Beat>& seq, double* ns_per_beat) {
  const auto model = tpuemu::tlm::make_hbm_beat_timing(s, ratio, beat_bytes, capacity);
  std::uint64_t presented = 0, last_read = 0, last_write = 0;
  double sum = 0;
  BeatFigures f;
  const auto t0 = std::chrono::steady_clock::now();
  for (const Beat& b : seq) {
    const tpuemu::tlm::BeatTiming t = model->access(presented, b.write, b.addr);
    EXPECT_GE(t.accept, presented);
    EXPECT_GT(t.done, t.accept);
    std::uint64_t& last = b.write ? last_write : last_read;
    EXPECT_GT(t.done, last);  // in order, one per cycle
    last = t.done;
    sum += static_cast<double>(t.done - presented);
    f.total = std::max(f.total, t.done);
    presented = t.accept + 1;
  }
  *ns_per_beat = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count() /
                 static_cast<double>(seq.size());
  model->finish(f.total);
  EXPECT_EQ(model->fault(), nullptr);
  f.mean_latency = sum / static_cast<double>(seq.size());
  return f;
}

struct BeatCase {
  std::string set;
  double ratio;  // the default preset's 1 GHz core over the set's tCK
  std::uint32_t beat_bytes;
  int kind;
  const char* name;
  // The target (docs/hbm-trace.md), met by every case but those marked below.
  double latency_tolerance = 0.05;
  double total_tolerance = 0.05;
};

constexpr const char* kBeatKindNames[] = {"seq_reads", "seq_writes", "random_reads", "random_mixed", "seq_mixed",
                                          "seq_mixed_in_bursts", "two_streams_one_bank"};

void PrintTo(const BeatCase& c, std::ostream* os) { *os << c.set << " beat " << c.beat_bytes << " " << c.name; }

class BeatModelVsRtl : public ::testing::TestWithParam<BeatCase> {};

TEST_P(BeatModelVsRtl, CompletionLatencyAndTotalTimeMatch) {
  const BeatCase& c = GetParam();
  const hbm::HbmSetup s = setup_of(c.set);
  const std::uint64_t capacity = 256ull << 20;
  const std::vector<Beat> seq = beats(c.beat_bytes, c.kind, 20'000, capacity);
  const auto t0 = std::chrono::steady_clock::now();
  const BeatFigures rtl = run_core_memory(s, c.ratio, c.beat_bytes, capacity, seq);
  const double rtl_ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count() /
                        static_cast<double>(seq.size());
  double model_ns = 0;
  const BeatFigures model = run_adapter(s, c.ratio, c.beat_bytes, capacity, seq, &model_ns);
  std::printf("| %s | %u | %s | %.1f | %llu | %.1f | %llu | %+.1f %% | %+.1f %% | %.0f | %.0f |\n", c.set.c_str(),
              c.beat_bytes, c.name, rtl.mean_latency, static_cast<unsigned long long>(rtl.total),
              model.mean_latency, static_cast<unsigned long long>(model.total),
              100 * error(model.mean_latency, rtl.mean_latency),
              100 * error(static_cast<double>(model.total), static_cast<double>(rtl.total)), rtl_ns, model_ns);
  EXPECT_NEAR(error(model.mean_latency, rtl.mean_latency), 0, c.latency_tolerance)
      << "mean beat latency: model " << model.mean_latency << ", rtl " << rtl.mean_latency;
  EXPECT_NEAR(error(static_cast<double>(model.total), static_cast<double>(rtl.total)), 0, c.total_tolerance)
      << "total core cycles: model " << model.total << ", rtl " << rtl.total;
}

INSTANTIATE_TEST_SUITE_P(
    Beats, BeatModelVsRtl,
    ::testing::Values(BeatCase{"hbm2-2000", 1.0, 16, 0, "sequential reads"},
                      BeatCase{"hbm2-2000", 1.0, 16, 1, "sequential writes"},
                      BeatCase{"hbm2-2000", 1.0, 16, 2, "random reads"},
                      BeatCase{"hbm2-2000", 1.0, 128, 0, "sequential reads"},
                      BeatCase{"hbm2-2000", 1.0, 128, 1, "sequential writes"},
                      BeatCase{"hbm2-2000", 1.0, 128, 2, "random reads"},
                      BeatCase{"hbm2e-3200", 1.6, 16, 0, "sequential reads"},
                      BeatCase{"hbm2e-3200", 1.6, 16, 2, "random reads"},
                      BeatCase{"hbm2e-3200", 1.6, 128, 0, "sequential reads"},
                      BeatCase{"hbm2e-3200", 1.6, 128, 1, "sequential writes"},
                      BeatCase{"hbm2e-3200", 1.6, 128, 2, "random reads"},
                      BeatCase{"hbm2-2000", 1.0, 16, 3, "random, read ratio 0.5"},
                      BeatCase{"hbm2-2000", 1.0, 16, 4, "sequential, read ratio 0.5"},
                      // +5.2 % total time (docs/hbm-trace.md)
                      BeatCase{"hbm2-2000", 1.0, 128, 3, "random, read ratio 0.5", 0.05, 0.06},
                      BeatCase{"hbm2-2000", 1.0, 128, 4, "sequential, read ratio 0.5"},
                      BeatCase{"hbm2e-3200", 1.6, 16, 3, "random, read ratio 0.5"},
                      BeatCase{"hbm2e-3200", 1.6, 16, 4, "sequential, read ratio 0.5"},
                      BeatCase{"hbm2e-3200", 1.6, 128, 3, "random, read ratio 0.5"},
                      BeatCase{"hbm2e-3200", 1.6, 128, 4, "sequential, read ratio 0.5"},
                      // A read right behind a write of its burst waits for it (no forwarding). The
                      // controller lets later reads of other bursts pass the blocked one and
                      // batches the writes; the model places each read when it arrives, so it
                      // alternates write and read with a turnaround each (docs/hbm-trace.md,
                      // "Known gaps"). Held to what it achieves, to fail if it gets worse.
                      BeatCase{"hbm2-2000", 1.0, 16, 5, "sequential, reads and writes within bursts", 3.6, 0.70},
                      BeatCase{"hbm2e-3200", 1.6, 16, 5, "sequential, reads and writes within bursts", 2.8, 0.60},
                      // A read that hits the open row passes earlier conflicting reads of its
                      // bank in the controller's queue (first-ready first); the model has placed
                      // each read when it arrived, so the two streams close each other's row
                      // (docs/hbm-trace.md, "Known gaps"). Held to what it achieves.
                      BeatCase{"hbm2-2000", 1.0, 16, 6, "two read streams in one bank", 0.14, 0.14},
                      BeatCase{"hbm2-2000", 1.0, 128, 6, "two read streams in one bank", 0.07, 0.035},
                      BeatCase{"hbm2e-3200", 1.6, 16, 6, "two read streams in one bank", 0.14, 0.145},
                      BeatCase{"hbm2e-3200", 1.6, 128, 6, "two read streams in one bank", 0.15, 0.04}),
    [](const ::testing::TestParamInfo<BeatCase>& i) {
      std::string n = i.param.set + "_dim" + std::to_string(i.param.beat_bytes) + "_" +
                      kBeatKindNames[i.param.kind];
      for (char& ch : n) ch = (ch == '-') ? '_' : ch;
      return n;
    });

}  // namespace

namespace {

// The SystemC door (hbm_target.h) takes the address map by name: any order of the five fields
// (a custom order of the controller), and refuses a string that is not one, naming it.
tpuemu::tlm::HbmTargetConfig target_config(const std::string& address_map) {
  const hbm::HbmSetup s = setup_of("hbm2-2000");
  tpuemu::tlm::HbmTargetConfig c;
  c.channels = s.dram.channels;
  c.bank_groups = s.dram.bank_groups;
  c.banks_per_group = s.dram.banks_per_group;
  c.rows = s.dram.rows;
  c.columns = s.dram.columns;
  c.bus_bytes = s.dram.bus_bytes;
  c.burst_length = s.dram.burst_length;
#define TPUEMU_TARGET_TIMING(name, doc) c.timings.emplace_back(#name, s.dram.name);
  TPUEMU_SPEC_HBM_TIMINGS(TPUEMU_TARGET_TIMING)
#undef TPUEMU_TARGET_TIMING
  c.address_map = address_map;
  c.beat_bytes = 64;
  c.capacity_bytes = std::uint64_t{1} << 24;
  return c;
}

TEST(HbmTarget, AnyOrderOfTheFiveFieldsAndNothingElse) {
  for (const char* order : {"ro-ba-bg-ch-co", "co-ro-ba-bg-ch", "ch-co-ba-ro-bg"}) {
    EXPECT_NE(tpuemu::tlm::make_hbm_target_timing(target_config(order)), nullptr) << order;
  }
  // The reasons are the host parser's (one parser: spec::hbm::parse_address_order).
  const std::pair<const char*, const char*> bad[] = {{"ro-ba-bg-ch", "fewer than five fields"},
                                                     {"ro-ro-bg-ch-co", "field \"ro\" twice"},
                                                     {"ro-ba-bg-ch-co-co", "field \"co\" twice"},
                                                     {"ro-ba-bg-ch-xx", "unknown field \"xx\""},
                                                     {"ro-ba-bg-ch-co-", "unknown field \"\""}};
  for (const auto& [order, reason] : bad) {
    try {
      (void)tpuemu::tlm::make_hbm_target_timing(target_config(order));
      ADD_FAILURE() << order << " was accepted";
    } catch (const std::invalid_argument& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find(std::string("address map '") + order + "': " + reason), std::string::npos) << what;
    }
  }
}

}  // namespace
