// SPDX-License-Identifier: Apache-2.0
// The beat <-> burst bridge between the core's memory port and the HBM controller: random beat
// traffic against a burst memory that answers out of order must read back exactly what a byte
// array holds, with responses and acknowledgements in request order and consecutive beats of a
// burst merged into one burst request.
#include <gtest/gtest.h>

#include <random>

#include "hbm/beat_bridge.h"

namespace tpuemu::sim::hbm {
namespace {

struct Pending {
  BurstRequest req;
  int delay;
};

// Answers bursts after random delays, out of order across bursts.
class BurstMemory {
 public:
  explicit BurstMemory(std::size_t bytes) : bytes_(bytes) {}
  void step(BeatBridge& bridge, std::mt19937& rng) {
    while (const BurstRequest* r = bridge.next_request()) {
      pending_.push_back({*r, static_cast<int>(rng() % 20)});
      bridge.request_accepted();
      if (rng() % 2) break;
    }
    for (std::size_t i = 0; i < pending_.size();) {
      // like the controller: requests to one burst complete in order, others in any order
      bool older_same_burst = false;
      for (std::size_t j = 0; j < i; ++j) older_same_burst |= pending_[j].req.addr == pending_[i].req.addr;
      if (--pending_[i].delay > 0 || older_same_burst) { ++i; continue; }
      const BurstRequest r = pending_[i].req;
      pending_.erase(pending_.begin() + static_cast<long>(i));
      if (r.write) {
        for (unsigned b = 0; b < kBurstBytes; ++b) {
          if ((r.wmask >> b) & 1) bytes_[r.addr + b] = r.wdata[b];
        }
        bridge.write_done(r.id);
      } else {
        bridge.read_done(r.id, std::span<const std::uint8_t>(bytes_.data() + r.addr, kBurstBytes));
      }
    }
  }
  bool idle() const { return pending_.empty(); }
  std::vector<std::uint8_t> bytes_;
  std::vector<Pending> pending_;
};

void random_traffic(std::uint32_t beat, unsigned seed) {
  std::mt19937 rng(seed);
  constexpr std::size_t kBytes = 1 << 16;
  BurstMemory mem(kBytes);
  std::vector<std::uint8_t> model(kBytes);
  BeatBridge bridge(beat);
  std::deque<std::vector<std::uint8_t>> expected_reads;
  std::size_t writes_outstanding = 0;
  std::uint64_t next_seq_addr = 0;
  for (int cycle = 0; cycle < 20000 || !bridge.idle() || !mem.idle(); ++cycle) {
    bool wrote = false;
    // reads only after all writes are acknowledged (the core fences with semaphores)
    if (cycle < 20000 && bridge.can_accept()) {
      const bool sequential = rng() % 4 != 0;
      const std::uint64_t addr = sequential ? next_seq_addr : (rng() % (kBytes / beat)) * beat;
      next_seq_addr = (addr + beat) % kBytes;
      const bool write = (rng() % 3 == 0);
      if (write) {
        std::vector<std::uint8_t> data(beat);
        for (auto& b : data) b = static_cast<std::uint8_t>(rng());
        bridge.accept(true, addr, data);
        std::copy(data.begin(), data.end(), model.begin() + static_cast<long>(addr));
        ++writes_outstanding;
        wrote = true;
      } else if (writes_outstanding == 0) {
        bridge.accept(false, addr, {});
        expected_reads.emplace_back(model.begin() + static_cast<long>(addr),
                                    model.begin() + static_cast<long>(addr + beat));
      }
    }
    bridge.end_core_cycle(wrote);
    if (const std::uint8_t* r = bridge.pop_read_response()) {
      ASSERT_FALSE(expected_reads.empty());
      ASSERT_TRUE(std::equal(r, r + beat, expected_reads.front().begin())) << "cycle " << cycle;
      expected_reads.pop_front();
    }
    if (bridge.pop_write_ack()) {
      ASSERT_GT(writes_outstanding, 0u);
      --writes_outstanding;
    }
    mem.step(bridge, rng);
    ASSERT_LT(cycle, 200000) << "traffic never drained";
  }
  EXPECT_TRUE(expected_reads.empty());
  EXPECT_EQ(writes_outstanding, 0u);
  EXPECT_EQ(mem.bytes_, model);
}

TEST(BeatBridge, SmallBeatsMatchAByteArray) { random_traffic(16, 1); }
TEST(BeatBridge, EightByteBeatsMatchAByteArray) { random_traffic(8, 2); }
TEST(BeatBridge, BeatsOfTwoBurstsMatchAByteArray) { random_traffic(128, 3); }
TEST(BeatBridge, BurstSizedBeatsMatchAByteArray) { random_traffic(64, 4); }

TEST(BeatBridge, ConsecutiveBeatsOfABurstShareOneRequest) {
  BeatBridge bridge(16);
  for (int i = 0; i < 8; ++i) bridge.accept(false, 0x1000 + 16 * i, {});
  int requests = 0;
  while (bridge.next_request()) {
    ++requests;
    bridge.request_accepted();
  }
  EXPECT_EQ(requests, 2);  // 128 bytes = two bursts
  std::vector<std::uint8_t> w(16, 7);
  for (int i = 0; i < 4; ++i) bridge.accept(true, 0x2000 + 16 * i, w);
  bridge.end_core_cycle(false);
  ASSERT_NE(bridge.next_request(), nullptr);
  EXPECT_TRUE(bridge.next_request()->write);
  EXPECT_EQ(bridge.next_request()->wmask, ~std::uint64_t{0});
}

}  // namespace
}  // namespace tpuemu::sim::hbm
