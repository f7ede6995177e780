// SPDX-License-Identifier: Apache-2.0
// The interconnect between the core's memory port and the HBM controller's burst port.
//
// The core moves beats of DIM bytes, in order, one per cycle; the controller moves 64-byte bursts
// tagged with ids and completes them out of order across channels. The bridge splits or merges
// beats into bursts (consecutive beats of one burst become one burst request: reads share one
// RD, writes are combined under a byte mask), and returns read data and write acknowledgements to
// the core in request order.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <optional>
#include <span>
#include <vector>

namespace tpuemu::sim::hbm {

inline constexpr std::uint32_t kBurstBytes = 64;

struct BurstRequest {
  bool write = false;
  std::uint64_t addr = 0;  // burst aligned
  std::uint8_t id = 0;
  std::array<std::uint8_t, kBurstBytes> wdata{};
  std::uint64_t wmask = 0;  // bit i: byte i is written
};

class BeatBridge {
 public:
  explicit BeatBridge(std::uint32_t beat_bytes, std::size_t max_beats_in_flight = 256);

  // ---- core side (once per core cycle, in this order: accept, then responses)
  bool can_accept() const;
  void accept(bool write, std::uint64_t addr, std::span<const std::uint8_t> wdata);
  // Ends the core cycle: a partially combined write burst is sent when no write beat continued it.
  void end_core_cycle(bool wrote_this_cycle);
  // The next read beat, in order, once all its data arrived (at most one per core cycle).
  const std::uint8_t* pop_read_response();
  bool pop_write_ack();

  // ---- burst side (DRAM clock)
  const BurstRequest* next_request() const;  // nullptr when nothing waits
  void request_accepted();
  void read_done(std::uint8_t id, std::span<const std::uint8_t> data);
  void write_done(std::uint8_t id);

  bool idle() const;
  std::uint64_t bursts_read() const { return bursts_read_; }
  std::uint64_t bursts_written() const { return bursts_written_; }

 private:
  struct BeatEntry {
    std::vector<std::uint8_t> data;
    std::uint32_t parts_left = 0;
  };
  struct Piece {  // part of a beat served by one burst
    std::uint64_t entry;  // sequence number of the beat entry
    std::uint32_t beat_offset, burst_offset, len;
  };
  struct InFlight {
    bool used = false;
    bool write = false;
    std::vector<Piece> pieces;
  };

  std::optional<std::uint8_t> allocate_id();
  void flush_write();
  BeatEntry& entry(std::deque<BeatEntry>& q, std::uint64_t base, std::uint64_t seq) { return q[seq - base]; }

  std::uint32_t beat_bytes_;
  std::size_t max_beats_;
  std::deque<BeatEntry> reads_, writes_;  // in core order
  std::uint64_t reads_base_ = 0, writes_base_ = 0;  // sequence number of the front entries
  std::deque<BurstRequest> outgoing_;
  std::array<InFlight, 256> in_flight_{};
  std::vector<std::uint8_t> free_ids_;
  // the last read burst still open for merging (queued or in flight), and the open write burst
  std::optional<std::uint8_t> open_read_;
  std::uint64_t open_read_addr_ = 0;
  std::optional<std::uint8_t> open_write_;
  BurstRequest open_write_req_{};
  std::vector<std::uint8_t> response_;
  std::uint64_t bursts_read_ = 0, bursts_written_ = 0;
};

}  // namespace tpuemu::sim::hbm
