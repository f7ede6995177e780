// SPDX-License-Identifier: Apache-2.0
// The board top's memory system (rtl/board/hbm_board_mem: the RTL beat bridge in front of the
// controller on the gated target clock, behind the DRAM shim and a backing store of random
// latency) against the simulation top (the C++ beat bridge, the controller driving the C++ DRAM
// device model): the same beats give the same readiness, responses and data in the same target
// cycles, and the same HBM counters, for every backing-store seed and latency (docs/fpga.md
// "The host-decoupled DRAM model"). Inside, the board system checks every read burst the shim
// hands the controller against the device model, and the device model checks every command's
// timing.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "core_memory.h"
#include "tpuemu/config/hbm_config.h"
#include "tpuemu/sim/hbm_system.h"
#include "tpuemu/sim_setup/hbm_setup.h"

namespace tpuemu::sim {
namespace {

hbm::HbmSetup hbm2() {
  return hbm_setup_from(load_hbm_timing_set_file(std::string(TPUEMU_SOURCE_DIR) + "/configs/hbm/hbm2-2000.json"));
}

// hbm2-2000 with small controller queues: the controller then holds its port, and the bridge
// fills up to its limit (the backpressure the cycle-for-cycle test must reach). The default
// queues (64 slots, posted writes: docs/hbm.md) absorb that test's traffic on some seeds.
hbm::HbmSetup hbm2_small_queues() {
  hbm::HbmSetup s = hbm2();
  s.queues.read_queue = 4;
  s.queues.write_queue = 4;
  s.queues.write_high = 4;
  s.queues.write_low = 1;
  return s;
}

TEST(BoardShim, NeedsTheHbm2Geometry) {
  hbm::HbmSetup s = hbm_setup_from(
      load_hbm_timing_set_file(std::string(TPUEMU_SOURCE_DIR) + "/configs/hbm/hbm3-6400.json"));
  s.board = hbm::BoardShim{.core_beat_bytes = 16};
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

struct BeatRequest {
  bool write = false;
  std::uint64_t addr = 0;
  std::array<std::uint8_t, 16> data{};
};

// A core's beat traffic (seeded): sequential runs of reads and of writes (beats share RDs and
// combine into WRs), the same beat read again and again, single random beats, idle cycles.
class BeatTraffic {
 public:
  explicit BeatTraffic(std::uint64_t seed) : rng_(seed) {}
  std::optional<BeatRequest> next() {
    if (run_left_ == 0) {
      const unsigned kind = static_cast<unsigned>(rng_() % 6);
      run_left_ = 1 + static_cast<unsigned>(rng_() % 40);
      write_ = kind == 1 || kind == 4;
      repeat_ = kind == 2;
      idle_ = kind == 5;
      addr_ = (rng_() % (1u << 20)) * 16;  // 16 MiB, beat aligned
    }
    --run_left_;
    if (idle_) return std::nullopt;
    BeatRequest r;
    r.write = write_;
    r.addr = addr_;
    for (unsigned i = 0; i < 16; ++i) r.data[i] = static_cast<std::uint8_t>(serial_ * 13 + i);
    ++serial_;
    if (!repeat_) addr_ += 16;
    return r;
  }

 private:
  std::mt19937_64 rng_;
  unsigned run_left_ = 0;
  bool write_ = false, repeat_ = false, idle_ = false;
  std::uint64_t addr_ = 0, serial_ = 0;
};

MemoryModelConfig memory(const hbm::HbmSetup& setup) {
  MemoryModelConfig m;
  m.capacity_bytes = 256ull << 20;
  m.hbm = setup;
  m.dram_cycles_per_core_cycle = 1.0;
  return m;
}

TEST(BoardMemory, TheRtlBeatBridgeMatchesTheCppBridgeCycleForCycle) {
  constexpr std::uint64_t kBeats = 40000;
  for (const std::uint32_t latency : {0u, 200u}) {
    for (const std::uint64_t seed : {1u, 2u, 3u}) {
      SCOPED_TRACE("latency " + std::to_string(latency) + " seed " + std::to_string(seed));
      hbm::HbmSetup board_setup = hbm2_small_queues();
      board_setup.board = hbm::BoardShim{.max_latency = latency, .seed = seed};
      const auto sim = make_core_memory(memory(hbm2_small_queues()), 16);
      const auto board = make_core_memory(memory(board_setup), 16);
      std::vector<std::uint8_t> init((16u << 20) + 64 * 16);  // runs may pass the end a little
      for (std::size_t i = 0; i < init.size(); ++i) init[i] = static_cast<std::uint8_t>(i * 31 + (i >> 9));
      sim->backdoor_write(0, init);
      board->backdoor_write(0, init);
      BeatTraffic traffic(seed);
      std::optional<BeatRequest> pending;
      std::uint64_t offered = 0, reads = 0, acks = 0, reads_sent = 0, writes_sent = 0, cycle = 0;
      std::uint64_t not_ready = 0;
      while (reads + acks < kBeats) {
        ASSERT_LT(cycle, 20 * kBeats) << "the traffic does not drain";
        const std::uint8_t* a = sim->read_response(cycle);
        const std::uint8_t* b = board->read_response(cycle);
        ASSERT_EQ(a != nullptr, b != nullptr) << "read response at cycle " << cycle;
        if (a) {
          ASSERT_TRUE(std::equal(a, a + 16, b)) << "read data of beat " << reads << " at cycle " << cycle;
          ++reads;
        }
        const bool ack = sim->write_ack(cycle);
        ASSERT_EQ(ack, board->write_ack(cycle)) << "write ack at cycle " << cycle;
        acks += ack;
        const bool ready = sim->ready();
        ASSERT_EQ(ready, board->ready()) << "readiness at cycle " << cycle;
        if (!pending && offered < kBeats) pending = traffic.next();
        bool wrote = false;
        if (pending && ready) {
          sim->accept(cycle, pending->write, pending->addr, pending->data);
          board->accept(cycle, pending->write, pending->addr, pending->data);
          wrote = pending->write;
          (pending->write ? writes_sent : reads_sent)++;
          ++offered;
          pending.reset();
        } else if (pending) {
          ++not_ready;
        }
        ++cycle;
        sim->end_cycle(cycle, wrote);
        board->end_cycle(cycle, wrote);
        ASSERT_FALSE(sim->fault()) << *sim->fault();
        ASSERT_FALSE(board->fault()) << *board->fault();
      }
      EXPECT_EQ(reads, reads_sent);
      EXPECT_EQ(acks, writes_sent);
      EXPECT_GT(not_ready, 0u) << "the bridge never filled up: the test does not reach backpressure";
      const hbm::Statistics s = *sim->hbm_statistics(), t = *board->hbm_statistics();
      EXPECT_EQ(t.cycles, s.cycles);
      EXPECT_EQ(t.total.counters, s.total.counters);
      EXPECT_EQ(t.read_latency_mean, s.read_latency_mean);
      EXPECT_EQ(s.host_cycles, 0u);
      // the backing store really was late: the target clock was held, more so the slower it is
      EXPECT_EQ(t.host_cycles, t.cycles + t.held_host_cycles);
      if (latency >= 200) EXPECT_GT(t.held_host_cycles, t.cycles);
      // beats shared RDs and combined into WRs
      EXPECT_LT(s.total.reads, reads_sent);
      EXPECT_LT(s.total.writes, writes_sent);
      std::printf("latency %3u seed %llu: %llu beats in %llu cycles, %llu RDs, %llu WRs, %llu host cycles\n", latency,
                  static_cast<unsigned long long>(seed), static_cast<unsigned long long>(kBeats),
                  static_cast<unsigned long long>(cycle), static_cast<unsigned long long>(s.total.reads),
                  static_cast<unsigned long long>(s.total.writes), static_cast<unsigned long long>(t.host_cycles));
    }
  }
}

TEST(BoardShim, HasNoBurstPort) {
  hbm::HbmSetup s = hbm2();
  s.board = hbm::BoardShim{};
  try {
    (void)hbm::make_hbm_system(s);
    FAIL() << "a board system without the core's beats was made";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("takes the core's beats"), std::string::npos) << e.what();
  }
}

TEST(BoardMemory, IsBuiltForTheDefaultBeat) {
  hbm::HbmSetup s = hbm2();
  s.board = hbm::BoardShim{};
  EXPECT_THROW(
      {
        try {
          (void)make_core_memory(memory(s), 8);
        } catch (const std::invalid_argument& e) {
          EXPECT_NE(std::string(e.what()).find("built for 16-byte beats"), std::string::npos) << e.what();
          throw;
        }
      },
      std::invalid_argument);
  MemoryModelConfig m = memory(s);
  m.dram_cycles_per_core_cycle = 1.6;
  EXPECT_THROW(
      {
        try {
          (void)make_core_memory(m, 16);
        } catch (const std::invalid_argument& e) {
          EXPECT_NE(std::string(e.what()).find("one target clock"), std::string::npos) << e.what();
          throw;
        }
      },
      std::invalid_argument);
}

}  // namespace
}  // namespace tpuemu::sim
