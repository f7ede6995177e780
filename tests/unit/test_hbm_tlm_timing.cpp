// The burst-level HBM timing model of the tlm backend (sim/tlm, docs/hbm-tlm-timing.md) against
// what it mimics: the Verilated controller driving the DRAM device model (sim::hbm::HbmSystem),
// and, a level up, the RTL backend's HBM memory behind a core port (make_core_memory). Same
// request sequences (fixed seeds) through both; bandwidth within 5 %, mean read latency within
// 10 %, beat completion latency and total time within 5 %.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <functional>
#include <queue>
#include <random>
#include <string>
#include <vector>

#include "core_memory.h"
#include "tpuemu/config/hbm_config.h"
#include "tpuemu/sim/hbm_system.h"
#include "tpuemu/sim_setup/hbm_setup.h"
#include "tpuemu/tlm/hbm_beat_timing.h"
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
  f.bytes_per_cycle = static_cast<double>(reqs.size()) * 64 / static_cast<double>(last_response + 1);
  f.read_latency = st.read_latency_mean;
  f.ns_per_request = secs * 1e9 / static_cast<double>(reqs.size());
  f.refreshes = st.total.refreshes;
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
  f.bytes_per_cycle = static_cast<double>(reqs.size()) * 64 / static_cast<double>(last + 1);
  f.read_latency = reads ? latency_sum / static_cast<double>(reads) : 0;
  EXPECT_NEAR(f.read_latency, st.read_latency_mean, 1e-6);
  f.ns_per_request = secs * 1e9 / static_cast<double>(reqs.size());
  f.refreshes = st.total.refreshes;
  return f;
}

double error(double model, double rtl) { return (model - rtl) / rtl; }

struct Case {
  std::string set;
  Pattern pattern;
  double read_ratio;
  const char* name;
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
  EXPECT_NEAR(error(model.bytes_per_cycle, rtl.bytes_per_cycle), 0, 0.05)
      << "bandwidth B/tCK: model " << model.bytes_per_cycle << ", rtl " << rtl.bytes_per_cycle;
  if (c.read_ratio > 0) {
    EXPECT_NEAR(error(model.read_latency, rtl.read_latency), 0, 0.10)
        << "mean read latency tCK: model " << model.read_latency << ", rtl " << rtl.read_latency;
  }
  EXPECT_GT(model.refreshes, 0u);
  EXPECT_NEAR(static_cast<double>(model.refreshes), static_cast<double>(rtl.refreshes),
              static_cast<double>(s.dram.channels));  // the same refreshes, give or take one per channel
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
                      Case{"hbm3-6400", Pattern::Random, 0.5, "random, read ratio 0.5"}),
    [](const ::testing::TestParamInfo<Case>& i) {
      std::string n = i.param.set + "_" + (i.param.pattern == Pattern::Stream ? "stream" : "random") +
                      (i.param.read_ratio < 1 ? "_mixed" : "");
      for (char& ch : n) ch = (ch == '-') ? '_' : ch;
      return n;
    });

}  // namespace
