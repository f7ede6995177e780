// SPDX-License-Identifier: Apache-2.0
// The bridge's rules (sim/src/hbm/beat_bridge.cpp, hbm_memory.cpp) over HbmBurstTiming.
#include "tpuemu/tlm/hbm_beat_timing.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "cycle_counts.h"
#include "tpuemu/tlm/hbm_timing.h"

namespace tpuemu::tlm {
namespace {

constexpr std::uint32_t kBurstBytes = 64;
constexpr std::size_t kMaxBeatsInFlight = 256;  // BeatBridge's default
constexpr std::size_t kBurstIds = 256;          // the controller's 8-bit ids

class HbmBeatTimingModel final : public HbmBeatTiming {
 public:
  HbmBeatTimingModel(const sim::hbm::HbmSetup& setup, double ratio, std::uint32_t beat_bytes,
                     std::uint64_t capacity, HbmTimingShortcuts shortcuts)
      : bursts_(setup, shortcuts), ratio_(ratio), beat_bytes_(beat_bytes), capacity_(capacity),
        bursts_per_beat_(std::max<std::uint32_t>(1, beat_bytes / kBurstBytes)) {
    if (!(ratio > 0) || !std::isfinite(ratio)) {
      throw std::invalid_argument("hbm timing: dram_cycles_per_core_cycle must be positive, got " +
                                  std::to_string(ratio));
    }
    if (beat_bytes == 0 || (beat_bytes % kBurstBytes != 0 && kBurstBytes % beat_bytes != 0)) {
      throw std::invalid_argument("hbm timing: beat_bytes must divide or be a multiple of 64, got " +
                                  std::to_string(beat_bytes));
    }
    if (capacity == 0 || capacity > setup.dram.capacity_bytes()) {
      throw std::invalid_argument("hbm timing: capacity " + std::to_string(capacity) +
                                  " is zero or beyond the stack's " +
                                  std::to_string(setup.dram.capacity_bytes()));
    }
  }

  BeatTiming access(std::uint64_t cycle, bool write, std::uint64_t addr) override {
    const std::uint64_t accept = bridge_accepts_from(cycle);
    // a read past the end is instruction prefetch beyond END (HbmMemory wraps it the same way)
    if (addr >= capacity_ || addr + beat_bytes_ > capacity_) addr %= capacity_;

    std::uint64_t ready = accept + 1;
    const std::uint32_t first_offset = static_cast<std::uint32_t>(addr % kBurstBytes);
    if (first_offset + beat_bytes_ <= kBurstBytes) {
      // within one burst
      const std::uint64_t burst = addr - first_offset;
      ready = std::max(ready, write ? write_part(accept, burst, first_offset + beat_bytes_, true)
                                    : read_part(accept, burst));
    } else if (first_offset == 0) {
      // whole bursts (a beat of a multiple of 64 bytes at an aligned address)
      for (std::uint32_t i = 0; i < bursts_per_beat_; ++i) {
        const std::uint64_t burst = addr + std::uint64_t{i} * kBurstBytes;
        ready = std::max(ready, write ? write_part(accept, burst, kBurstBytes, i + 1 == bursts_per_beat_)
                                      : read_part(accept, burst));
      }
    } else {
      for (std::uint32_t off = 0; off < beat_bytes_;) {
        const std::uint64_t a = addr + off;
        const std::uint64_t burst = a & ~std::uint64_t{kBurstBytes - 1};
        const std::uint32_t boff = static_cast<std::uint32_t>(a - burst);
        const std::uint32_t len = std::min(beat_bytes_ - off, kBurstBytes - boff);
        const bool last_part = off + len == beat_bytes_;
        ready = std::max(ready, write ? write_part(accept, burst, boff + len, last_part) : read_part(accept, burst));
        off += len;
      }
    }
    if (write) {
      open_read_.valid = false;  // a later read of the burst must not share an older RD
    } else {
      open_write_.valid = false;  // the bridge sends the open write burst before a read
    }
    std::uint64_t& last = write ? last_write_done_ : last_read_done_;
    const std::uint64_t done = std::max(ready, last + 1);  // in order, one per core cycle
    last = done;
    bridge_.add(kBeatsLeave, done);
    return BeatTiming{accept, done};
  }

  void finish(std::uint64_t cycle) override { bursts_.finish(dram_tick_of(cycle)); }
  sim::hbm::Statistics statistics() const override { return bursts_.statistics(); }

 private:
  struct OpenBurst {
    bool valid = false;
    std::uint64_t addr = 0;
    std::uint64_t ready = 0;      // core cycle its response reaches the bridge's output
    std::uint64_t done_tick = 0;  // DRAM tick of its response
    std::uint64_t last_beat = 0;  // core cycle of the last beat that joined it (writes)
  };

  // The first DRAM tick after core cycle c's accept: HbmMemory runs the ticks of a core cycle
  // in end_cycle, after the core's request, floor(c * ratio) of them before.
  std::uint64_t dram_tick_of(std::uint64_t c) const {
    // At ratio 1 the formula below is the identity for every cycle a run reaches (< 2^52): skip
    // its double arithmetic, which is a good part of a beat's cost.
    if (unit_ratio_) return c;
    return static_cast<std::uint64_t>(std::floor(static_cast<double>(c) * ratio_ + 1e-9));
  }
  // The core cycle in which a response of DRAM tick d can be taken: the one after the core
  // cycle whose end_cycle ran tick d, i.e. the smallest n with dram_tick_of(n) > d.
  std::uint64_t core_cycle_seeing(std::uint64_t d) const {
    if (unit_ratio_) return d + 1;  // the smallest n with n > d
    auto n = static_cast<std::uint64_t>(std::ceil(static_cast<double>(d + 1) / ratio_));
    while (n > 0 && dram_tick_of(n - 1) > d) --n;
    while (dram_tick_of(n) <= d) ++n;
    return n;
  }

  // BeatBridge::can_accept: fewer than 256 beats held, and a burst id for each part plus one.
  std::uint64_t bridge_accepts_from(std::uint64_t cycle) {
    std::uint64_t at = cycle;
    const std::size_t max_bursts = kBurstIds - bursts_per_beat_ - 1;
    for (bool moved = true; moved;) {
      moved = false;
      bridge_.drop_through(at);
      if (bridge_.size(kBeatsLeave) >= kMaxBeatsInFlight) {
        at = bridge_.earliest(kBeatsLeave);
        moved = true;
      } else if (bridge_.size(kIdsBack) > max_bursts) {
        at = bridge_.earliest(kIdsBack);
        moved = true;
      }
    }
    return at;
  }

  std::uint64_t read_part(std::uint64_t accept, std::uint64_t burst) {
    // Consecutive read beats of one burst share its RD while its data have not been handed out.
    if (open_read_.valid && open_read_.addr == burst && open_read_.done_tick >= dram_tick_of(accept)) {
      return open_read_.ready;
    }
    const BurstTiming t = bursts_.request(dram_tick_of(accept), false, burst);
    open_read_ = OpenBurst{true, burst, core_cycle_seeing(t.done), t.done, accept};
    bridge_.add(kIdsBack, open_read_.ready);
    return open_read_.ready;
  }

  // `end` is the byte offset in the burst where this beat's part ends.
  std::uint64_t write_part(std::uint64_t accept, std::uint64_t burst, std::uint32_t end, bool last_part) {
    // Write beats of one burst in consecutive core cycles are combined under one mask.
    if (open_write_.valid && open_write_.addr == burst && open_write_.last_beat + 1 == accept) {
      open_write_.last_beat = accept;
      return open_write_.ready;
    }
    // The bridge sends a burst when a beat leaves it (the first part of a DIM-128 beat: at once)
    // or when a cycle passes without a write beat to it. The model has to time it now, so it
    // assumes the burst's remaining beats follow in consecutive cycles, as streams do; when they
    // do not, the real burst leaves earlier and the model is pessimistic by those cycles.
    std::uint64_t sent = accept;
    if (last_part) sent = accept + 1 + (kBurstBytes - end) / beat_bytes_;
    const BurstTiming t = bursts_.request(dram_tick_of(sent), true, burst);
    open_write_ = OpenBurst{true, burst, core_cycle_seeing(t.done), t.done, accept};
    if (!last_part) open_write_.valid = false;  // the next part is another burst
    bridge_.add(kIdsBack, open_write_.ready);
    return open_write_.ready;
  }

  HbmBurstTiming bursts_;
  double ratio_;
  bool unit_ratio_ = ratio_ == 1.0;
  std::uint32_t beat_bytes_;
  std::uint64_t capacity_;
  std::uint32_t bursts_per_beat_;
  // Core cycles at which held beats leave the bridge, and at which burst ids in use come back.
  static constexpr std::size_t kBeatsLeave = 0, kIdsBack = 1;
  detail::CycleCounts<2> bridge_;
  OpenBurst open_read_, open_write_;
  std::uint64_t last_read_done_ = 0, last_write_done_ = 0;
};

}  // namespace

std::unique_ptr<HbmBeatTiming> make_hbm_beat_timing(const sim::hbm::HbmSetup& setup,
                                                    double dram_cycles_per_core_cycle,
                                                    std::uint32_t beat_bytes, std::uint64_t capacity,
                                                    HbmTimingShortcuts shortcuts) {
  return std::make_unique<HbmBeatTimingModel>(setup, dram_cycles_per_core_cycle, beat_bytes, capacity, shortcuts);
}

}  // namespace tpuemu::tlm
