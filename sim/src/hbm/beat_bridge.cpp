// SPDX-License-Identifier: Apache-2.0
#include "hbm/beat_bridge.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace tpuemu::sim::hbm {

BeatBridge::BeatBridge(std::uint32_t beat_bytes, std::size_t max_beats_in_flight)
    : beat_bytes_(beat_bytes), max_beats_(max_beats_in_flight) {
  if (beat_bytes == 0 || (beat_bytes % kBurstBytes != 0 && kBurstBytes % beat_bytes != 0)) {
    throw std::invalid_argument("beat bridge: beats must divide or be multiples of 64-byte bursts");
  }
  for (int id = 255; id >= 0; --id) free_ids_.push_back(static_cast<std::uint8_t>(id));
  response_.resize(beat_bytes);
}

bool BeatBridge::can_accept() const {
  const std::size_t bursts_per_beat = std::max<std::size_t>(1, beat_bytes_ / kBurstBytes);
  return reads_.size() + writes_.size() < max_beats_ && free_ids_.size() >= bursts_per_beat + 1;
}

std::optional<std::uint8_t> BeatBridge::allocate_id() {
  if (free_ids_.empty()) return std::nullopt;
  const std::uint8_t id = free_ids_.back();
  free_ids_.pop_back();
  in_flight_[id].used = true;
  in_flight_[id].pieces.clear();
  return id;
}

void BeatBridge::flush_write() {
  if (!open_write_) return;
  outgoing_.push_back(open_write_req_);
  open_write_.reset();
}

void BeatBridge::accept(bool write, std::uint64_t addr, std::span<const std::uint8_t> wdata) {
  if (write) {
    const std::uint64_t seq = writes_base_ + writes_.size();
    writes_.push_back(BeatEntry{{}, 0});
    BeatEntry& e = writes_.back();
    for (std::uint32_t off = 0; off < beat_bytes_;) {
      const std::uint64_t a = addr + off;
      const std::uint64_t burst = a & ~std::uint64_t{kBurstBytes - 1};
      const std::uint32_t boff = static_cast<std::uint32_t>(a - burst);
      const std::uint32_t len = std::min(beat_bytes_ - off, kBurstBytes - boff);
      if (!open_write_ || open_write_req_.addr != burst) {
        flush_write();
        open_write_ = allocate_id();
        if (!open_write_) throw std::logic_error("beat bridge: out of burst ids");
        open_write_req_ = BurstRequest{};
        open_write_req_.write = true;
        open_write_req_.addr = burst;
        open_write_req_.id = *open_write_;
        in_flight_[*open_write_].write = true;
      }
      std::memcpy(open_write_req_.wdata.data() + boff, wdata.data() + off, len);
      for (std::uint32_t i = 0; i < len; ++i) open_write_req_.wmask |= std::uint64_t{1} << (boff + i);
      in_flight_[*open_write_].pieces.push_back(Piece{seq, off, boff, len});
      ++e.parts_left;
      off += len;
    }
    open_read_.reset();  // a later read of this burst must not merge with an older RD
    return;
  }
  flush_write();  // reads are ordered after earlier writes
  const std::uint64_t seq = reads_base_ + reads_.size();
  reads_.push_back(BeatEntry{std::vector<std::uint8_t>(beat_bytes_), 0});
  BeatEntry& e = reads_.back();
  for (std::uint32_t off = 0; off < beat_bytes_;) {
    const std::uint64_t a = addr + off;
    const std::uint64_t burst = a & ~std::uint64_t{kBurstBytes - 1};
    const std::uint32_t boff = static_cast<std::uint32_t>(a - burst);
    const std::uint32_t len = std::min(beat_bytes_ - off, kBurstBytes - boff);
    if (!open_read_ || open_read_addr_ != burst) {
      open_read_ = allocate_id();
      if (!open_read_) throw std::logic_error("beat bridge: out of burst ids");
      open_read_addr_ = burst;
      BurstRequest r;
      r.addr = burst;
      r.id = *open_read_;
      in_flight_[*open_read_].write = false;
      outgoing_.push_back(r);
    }
    in_flight_[*open_read_].pieces.push_back(Piece{seq, off, boff, len});
    ++e.parts_left;
    off += len;
  }
}

void BeatBridge::end_core_cycle(bool wrote_this_cycle) {
  if (!wrote_this_cycle) flush_write();
}

const BurstRequest* BeatBridge::next_request() const {
  return outgoing_.empty() ? nullptr : &outgoing_.front();
}

void BeatBridge::request_accepted() {
  if (outgoing_.front().write) ++bursts_written_;
  else ++bursts_read_;
  outgoing_.pop_front();
}

void BeatBridge::read_done(std::uint8_t id, std::span<const std::uint8_t> data) {
  InFlight& f = in_flight_[id];
  if (!f.used || f.write) throw std::logic_error("beat bridge: read data for an unknown id");
  for (const Piece& p : f.pieces) {
    BeatEntry& e = entry(reads_, reads_base_, p.entry);
    std::memcpy(e.data.data() + p.beat_offset, data.data() + p.burst_offset, p.len);
    --e.parts_left;
  }
  f.used = false;
  free_ids_.push_back(id);
  // later beats of this burst need a new RD: its data has been handed out
  if (open_read_ && *open_read_ == id) open_read_.reset();
}

void BeatBridge::write_done(std::uint8_t id) {
  InFlight& f = in_flight_[id];
  if (!f.used || !f.write) throw std::logic_error("beat bridge: write response for an unknown id");
  for (const Piece& p : f.pieces) --entry(writes_, writes_base_, p.entry).parts_left;
  f.used = false;
  free_ids_.push_back(id);
}

const std::uint8_t* BeatBridge::pop_read_response() {
  if (reads_.empty() || reads_.front().parts_left != 0) return nullptr;
  std::memcpy(response_.data(), reads_.front().data.data(), beat_bytes_);
  reads_.pop_front();
  ++reads_base_;
  return response_.data();
}

bool BeatBridge::pop_write_ack() {
  if (writes_.empty() || writes_.front().parts_left != 0) return false;
  writes_.pop_front();
  ++writes_base_;
  return true;
}

bool BeatBridge::idle() const {
  return reads_.empty() && writes_.empty() && outgoing_.empty() && !open_write_;
}

}  // namespace tpuemu::sim::hbm
