// SPDX-License-Identifier: Apache-2.0
// The HBM subsystem behind a core's memory port: beat<->burst bridge, then the RTL controller and
// the DRAM device model, clocked at the DRAM clock (a fractional number of ticks per core cycle).
// On the board top (HbmSetup::board) the bridge is the RTL one of the board's memory system
// (hbm_board_mem), which takes the core's beats itself, on the one target clock of core and DRAM.
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "core_memory.h"
#include "hbm/beat_bridge.h"
#include "memory_model.h"

namespace tpuemu::sim {
namespace {

class HbmMemory final : public CoreMemory {
 public:
  HbmMemory(const MemoryModelConfig& mem, std::uint32_t beat_bytes)
      : capacity_(mem.capacity_bytes),
        ratio_(mem.dram_cycles_per_core_cycle),
        bridge_(beat_bytes),
        system_(hbm::make_hbm_system(with_core_beats(*mem.hbm, beat_bytes))),
        port_(system_->core_port()) {
    if (!(ratio_ > 0)) throw std::invalid_argument("hbm: DRAM cycles per core cycle must be positive");
    if (port_ && ratio_ != 1.0) {
      throw std::invalid_argument("hbm: the board top runs the core and the DRAM on one target clock, but this "
                                  "preset and timing set have " + std::to_string(ratio_) + " DRAM cycles per core cycle");
    }
    const std::uint64_t stack = mem.hbm->dram.capacity_bytes();
    if (capacity_ > stack) {
      throw std::invalid_argument("hbm: the core's " + std::to_string(capacity_) +
                                  " bytes exceed the stack's " + std::to_string(stack));
    }
  }

  bool ready() const override { return !fault_ && (port_ ? port_->ready() : bridge_.can_accept()); }

  void accept(std::uint64_t cycle, bool write, std::uint64_t addr, std::span<const std::uint8_t> wdata) override {
    if (addr + wdata.size() > capacity_ || addr >= capacity_) {
      if (write && !fault_) {
        fault_ = "memory: core write at 0x" + hex(addr) + " (cycle " + std::to_string(cycle) +
                 ") is beyond the HBM capacity 0x" + hex(capacity_);
      }
      // a read past the end is instruction prefetch beyond END: its data are never used
      addr %= capacity_;
    }
    if (port_) port_->drive(write, addr, wdata);
    else bridge_.accept(write, addr, wdata);
  }

  const std::uint8_t* read_response(std::uint64_t) override {
    return port_ ? port_->read_response() : bridge_.pop_read_response();
  }
  bool write_ack(std::uint64_t) override { return port_ ? port_->write_ack() : bridge_.pop_write_ack(); }

  void end_cycle(std::uint64_t next_cycle, bool wrote) override {
    core_cycle_ = next_cycle;
    if (!port_) bridge_.end_core_cycle(wrote);
    credit_ += ratio_;
    while (credit_ >= 1.0) {
      credit_ -= 1.0;
      dram_tick();
    }
  }

  void backdoor_write(std::uint64_t addr, std::span<const std::uint8_t> data) override {
    check(addr, data.size(), "backdoor write");
    system_->backdoor_write(addr, data);
  }
  void backdoor_read(std::uint64_t addr, std::span<std::uint8_t> data) override {
    check(addr, data.size(), "backdoor read");
    system_->backdoor_read(addr, data);
  }
  std::uint64_t capacity() const override { return capacity_; }
  std::optional<std::string> fault() const override { return fault_ ? fault_ : system_->fault(); }
  void clear_fault() override { fault_.reset(); }
  std::optional<hbm::Statistics> hbm_statistics() const override { return system_->statistics(); }

  void record_channels(bool on) override {
    system_->record_activity(on);
    base_core_ = core_cycle_;
    base_dram_ = system_->cycle();
  }

  // DRAM cycle d ran in core cycle base_core_ + (d - base_dram_) / ratio (the fractional clock of
  // end_cycle): begins round down, ends up.
  std::vector<ChannelInterval> take_channel_intervals() override {
    std::vector<ChannelInterval> out;
    for (const hbm::ChannelActivity& a : system_->take_activity()) {
      const auto core = [&](std::uint64_t d, bool up) {
        const double c = static_cast<double>(d > base_dram_ ? d - base_dram_ : 0) / ratio_;
        return base_core_ + static_cast<std::uint64_t>(up ? std::ceil(c) : std::floor(c));
      };
      ChannelInterval i{.channel = a.channel, .refresh = a.refresh, .begin = core(a.begin, false), .end = core(a.end, true)};
      // bursts that were apart in DRAM cycles can touch in core cycles
      if (!out.empty() && !i.refresh && !out.back().refresh && out.back().channel == i.channel &&
          i.begin <= out.back().end) {
        out.back().end = std::max(out.back().end, i.end);
      } else {
        out.push_back(i);
      }
    }
    return out;
  }

 private:
  static std::string hex(std::uint64_t v) {
    char buf[24];
    std::snprintf(buf, sizeof buf, "%llx", static_cast<unsigned long long>(v));
    return buf;
  }
  void check(std::uint64_t addr, std::uint64_t len, const char* what) const {
    if (addr > capacity_ || len > capacity_ - addr) {
      throw std::out_of_range(std::string("memory: ") + what + " of " + std::to_string(len) + " bytes at 0x" +
                              hex(addr) + " is beyond the capacity 0x" + hex(capacity_));
    }
  }

  static hbm::HbmSetup with_core_beats(hbm::HbmSetup setup, std::uint32_t beat_bytes) {
    if (setup.board) setup.board->core_beat_bytes = beat_bytes;
    return setup;
  }

  void dram_tick() {
    if (port_) {  // the beat driven this cycle (if any) enters the RTL bridge at this target edge
      system_->tick();
      return;
    }
    // offer what the bridge has, on as many lanes as are free
    while (const hbm::BurstRequest* r = bridge_.next_request()) {
      hbm::Request q;
      q.write = r->write;
      q.addr = r->addr;
      q.id = r->id;
      q.wdata = r->wdata.data();
      q.wmask = r->wmask;
      if (!system_->offer(q)) break;
      bridge_.request_accepted();
    }
    system_->tick();
    for (const hbm::Response& rsp : system_->responses()) {
      if (rsp.write) bridge_.write_done(rsp.id);
      else bridge_.read_done(rsp.id, rsp.data);
    }
  }

  std::uint64_t capacity_;
  double ratio_;
  std::uint64_t core_cycle_ = 0, base_core_ = 0, base_dram_ = 0;
  double credit_ = 0;
  hbm::BeatBridge bridge_;
  std::unique_ptr<hbm::HbmSystem> system_;
  hbm::CorePort* port_;  // the board's RTL bridge, or nullptr: bridge_ is the bridge
  std::optional<std::string> fault_;
};

}  // namespace

std::unique_ptr<CoreMemory> make_core_memory(const MemoryModelConfig& mem, std::uint32_t beat_bytes) {
  if (mem.hbm) return std::make_unique<HbmMemory>(mem, beat_bytes);
  return std::make_unique<MemoryModel>(mem, beat_bytes);
}

}  // namespace tpuemu::sim
