// The board top's HBM side (rtl/board: the controller on the gated target clock behind the DRAM
// shim and a backing store of random latency) against the simulation top (the controller driving
// the C++ DRAM device model): the same requests give the same responses in the same target
// cycles, with the same data and counters, for every backing-store seed and latency
// (docs/fpga.md "The host-decoupled DRAM model"). Inside, the board system checks every read
// burst the shim hands the controller against the device model, and the device model checks every
// command's timing.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "tpuemu/config/hbm_config.h"
#include "tpuemu/sim/hbm_system.h"
#include "tpuemu/sim_setup/hbm_setup.h"

namespace tpuemu::sim {
namespace {

struct Event {
  std::uint64_t cycle;
  bool write;
  std::uint8_t id;
  std::array<std::uint8_t, 64> data;
  bool operator==(const Event&) const = default;
};

struct Outcome {
  std::vector<Event> events;
  hbm::Statistics stats;
};

// A fixed mix of reads and writes (seeded): streams and random rows, so that rows hit, miss and
// conflict, refreshes happen and every channel is busy. Writes carry distinct data, so a read
// that returned the wrong burst or an old one is caught.
Outcome run(const hbm::HbmSetup& setup, std::uint32_t requests) {
  const auto sys = hbm::make_hbm_system(setup);
  std::mt19937_64 rng(11);
  std::vector<std::uint8_t> free_ids;
  for (int id = 255; id >= 0; --id) free_ids.push_back(static_cast<std::uint8_t>(id));
  std::array<std::uint8_t, 64> wdata{};
  Outcome out;
  std::uint32_t offered = 0, answered = 0;
  std::uint64_t stream = 0;
  std::optional<hbm::Request> pending;
  while (answered < requests) {
    while (offered < requests && !free_ids.empty()) {
      if (!pending) {
        hbm::Request r;
        r.write = rng() % 3 == 0;
        // half a stream over 4 MiB (row hits), half random in 64 MiB (misses and conflicts)
        r.addr = (rng() & 1) ? (stream++ % (4u << 14)) * 64 : (rng() % (1u << 20)) * 64;
        r.id = free_ids.back();
        for (unsigned i = 0; i < 64; ++i) wdata[i] = static_cast<std::uint8_t>(offered * 7 + i);
        r.wdata = wdata.data();
        pending = r;
      }
      if (!sys->offer(*pending)) break;
      free_ids.pop_back();
      pending.reset();
      ++offered;
    }
    sys->tick();
    if (sys->fault()) throw std::runtime_error(*sys->fault());
    for (const hbm::Response& r : sys->responses()) {
      out.events.push_back({sys->cycle(), r.write, r.id, r.write ? std::array<std::uint8_t, 64>{} : r.data});
      free_ids.push_back(r.id);
      ++answered;
    }
    if (sys->cycle() > 5'000'000) throw std::runtime_error("the run does not end");
  }
  sys->finish();
  if (sys->fault()) throw std::runtime_error(*sys->fault());
  out.stats = sys->statistics();
  return out;
}

hbm::HbmSetup hbm2() {
  return hbm_setup_from(load_hbm_timing_set_file(std::string(TPUEMU_SOURCE_DIR) + "/configs/hbm/hbm2-2000.json"));
}

TEST(BoardShim, TargetCyclesDataAndCountersMatchTheSimulationTop) {
  constexpr std::uint32_t kRequests = 6000;
  const Outcome sim = run(hbm2(), kRequests);
  ASSERT_EQ(sim.events.size(), kRequests);
  EXPECT_GT(sim.stats.total.refreshes, 0u);
  EXPECT_GT(sim.stats.total.row_conflicts, 0u);
  EXPECT_EQ(sim.stats.host_cycles, 0u);
  for (const std::uint32_t latency : {0u, 20u, 200u}) {
    for (const std::uint64_t seed : {1u, 2u, 3u}) {
      SCOPED_TRACE("latency " + std::to_string(latency) + " seed " + std::to_string(seed));
      hbm::HbmSetup s = hbm2();
      s.board = hbm::BoardShim{.max_latency = latency, .seed = seed};
      const Outcome board = run(s, kRequests);
      EXPECT_EQ(board.stats.cycles, sim.stats.cycles);
      ASSERT_EQ(board.events.size(), sim.events.size());
      for (std::size_t i = 0; i < sim.events.size(); ++i) {
        ASSERT_EQ(board.events[i], sim.events[i]) << "response " << i << " at target cycle " << sim.events[i].cycle;
      }
      EXPECT_EQ(board.stats.total.counters, sim.stats.total.counters);
      for (std::size_t ch = 0; ch < sim.stats.channels.size(); ++ch) {
        EXPECT_EQ(board.stats.channels[ch].counters, sim.stats.channels[ch].counters) << "channel " << ch;
      }
      // the backing store really was late: the target clock was held, more so the slower it is
      EXPECT_EQ(board.stats.host_cycles, board.stats.cycles + board.stats.held_host_cycles);
      if (latency >= 20) {
        EXPECT_GT(board.stats.held_host_cycles, board.stats.cycles / 10);
      }
      std::printf("latency %3u seed %llu: %llu target cycles, %llu host cycles (%.2f per target cycle)\n", latency,
                  static_cast<unsigned long long>(seed), static_cast<unsigned long long>(board.stats.cycles),
                  static_cast<unsigned long long>(board.stats.host_cycles),
                  static_cast<double>(board.stats.host_cycles) / static_cast<double>(board.stats.cycles));
    }
  }
}

TEST(BoardShim, NeedsTheHbm2Geometry) {
  hbm::HbmSetup s = hbm_setup_from(
      load_hbm_timing_set_file(std::string(TPUEMU_SOURCE_DIR) + "/configs/hbm/hbm3-6400.json"));
  s.board = hbm::BoardShim{};
  EXPECT_THROW(
      {
        try {
          (void)hbm::make_hbm_system(s);
        } catch (const std::invalid_argument& e) {
          EXPECT_NE(std::string(e.what()).find("board top is built for 8 channels"), std::string::npos) << e.what();
          throw;
        }
      },
      std::invalid_argument);
}

}  // namespace
}  // namespace tpuemu::sim
