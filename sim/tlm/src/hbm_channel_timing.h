// SPDX-License-Identifier: Apache-2.0
// One HBM channel of the burst-level timing model (docs/hbm-trace.md): the controller's
// input register and request queue, its bank and bank-group state, refresh, and the command bus,
// as *reservations*. Each request is scheduled when it enters the queue: its commands (PRE, ACT,
// RD/WR) take the earliest cycles that satisfy every timing rule against all commands already
// reserved, before or after them. So an earlier request is never delayed by a later one, and a
// later one may still fill an earlier gap (the "first ready" of FR-FCFS).
//
// All times are the controller's scheduler cycles (now_q of hbm_ctrl, = the HbmSystem tick).
#pragma once

#include <cstdint>
#include <deque>
#include <queue>
#include <vector>

#include "time_window.h"
#include "tpuemu/sim/dram_config.h"
#include "tpuemu/sim/hbm_system.h"

namespace tpuemu::tlm::detail {

// The controller's derived timings (hbm_ctrl.sv, tderiv_t), in tCK.
struct DerivedTimings {
  std::uint32_t rcd, rp, ras, rc, rrd_s, rrd_l, faw, rfc, refi;
  std::uint32_t ccd_s, ccd_l, rd2wr_s, rd2wr_l, wr2rd_s, wr2rd_l, rd2pre, wr2pre;
  std::uint32_t cl, burst;
  static DerivedTimings from(const sim::dram::Config& c);
  std::uint32_t max_column_gap() const;
};

// What the scheduler decided for one request.
struct ChannelOutcome {
  std::uint64_t accept = 0;  // cycle the channel took it from a lane
  std::uint64_t queued = 0;  // cycle it entered its queue (a write is answered one cycle later)
  std::uint64_t column = 0;  // cycle its RD/WR was chosen (on the command bus one cycle later)
  enum class Row : std::uint8_t { Hit, Miss, Conflict } row = Row::Hit;
};

// The controller's statistics the model counts, by the contract's index (spec::hbm::stat): the
// queue occupancy and the read-latency sums stay 0 per channel.
using ChannelCounters = sim::hbm::StatCounters;

class ChannelTiming {
 public:
  ChannelTiming(const DerivedTimings& t, std::uint32_t bank_groups, std::uint32_t banks_per_group,
                std::uint32_t read_queue, std::uint32_t write_queue, bool closed_page);

  // The earliest cycle the channel can take a request (one per cycle, input register free).
  std::uint64_t next_take() const { return next_take_; }
  // A request offered from cycle `offered` on (>= next_take() not required).
  ChannelOutcome request(std::uint64_t offered, bool write, std::uint32_t bank_group,
                         std::uint32_t bank, std::uint32_t row);
  // Accounts the refreshes due up to `cycle` (the end of a run).
  void finish(std::uint64_t cycle) {
    prune(cycle);
    freeze_refreshes_through(cycle);
  }
  const ChannelCounters& counters() const { return counters_; }

 private:
  struct Bank {
    bool open = false;
    std::uint32_t row = 0;
    std::uint64_t opened = 0;  // cycle of the ACT of the open row
    std::uint64_t col_at = 0;  // RD/WR >= ACT + tRCD
    std::uint64_t pre_at = 0;  // PRE >= ACT + tRAS, RD + tRTP, WR + write recovery
    std::uint64_t act_at = 0;  // ACT >= ACT + tRC, PRE + tRP
    std::uint64_t last_column = 0;
  };
  struct RowCommand {
    std::uint64_t at;
    std::uint32_t bank_group;
  };
  struct ColumnCommand {
    std::uint64_t at;
    std::uint32_t bank_group;
    bool write;
  };
  // A refresh whose time is fixed: due (ACT/PRE stop), PREA, REF, end of tRFC.
  struct Refresh {
    std::uint64_t due, prea, ref, end;
    bool needs_prea;
  };

  // The command bus: one command per cycle, a ring of cycles [floor_, floor_ + size).
  class CommandBus {
   public:
    bool busy(std::uint64_t t) const {
      // Before the floor no command can be placed any more, and nothing is reserved beyond the window.
      if (t < floor_ || t >= floor_ + kCycles) return false;
      return (bits_[(t % kCycles) / 64] >> (t % 64)) & 1;
    }
    // The first cycle >= t that is not taken: a word of the ring at a time.
    std::uint64_t next_free(std::uint64_t t) const {
      while (t >= floor_ && t < floor_ + kCycles) {
        const std::uint64_t free = ~bits_[(t % kCycles) / 64] >> (t % 64);
        if (free != 0) return t + static_cast<std::uint64_t>(__builtin_ctzll(free));
        t += 64 - t % 64;
      }
      return t;
    }
    void take(std::uint64_t t);
    void advance_floor(std::uint64_t floor);

   private:
    static constexpr std::uint64_t kCycles = 1 << 14;
    std::vector<std::uint64_t> bits_ = std::vector<std::uint64_t>(kCycles / 64, 0);
    std::uint64_t floor_ = 0;
  };

  std::uint64_t place_pre(std::uint64_t from);
  std::uint64_t place_act(std::uint64_t from, std::uint32_t bank_group);
  std::uint64_t place_column(std::uint64_t from, std::uint32_t bank_group, bool write);
  // The earliest t' >= t at which a refresh allows a command of this kind (0 ACT, 1 PRE, 2 column).
  std::uint64_t refresh_allows(std::uint64_t t, int kind, bool write) {
    // Most commands fall between refreshes: none is fixed (or still running) and none is due yet.
    if (refreshes_.empty() && t < next_due_) return t;
    return refresh_allows_slow(t, kind, write);
  }
  std::uint64_t refresh_allows_slow(std::uint64_t t, int kind, bool write);
  void freeze_refreshes_through(std::uint64_t t);
  // The refresh that closed the bank's open row before cycle t, if one did.
  const Refresh* refresh_closing(const Bank& b, std::uint64_t t) const {
    return refreshes_.empty() ? nullptr : refresh_closing_slow(b, t);
  }
  const Refresh* refresh_closing_slow(const Bank& b, std::uint64_t t) const;
  // The spacing a column command of (bank_group, write) needs after `first`, and before `second`.
  std::uint32_t column_gap(const ColumnCommand& first, std::uint32_t bank_group, bool write) const {
    return gap_[first.bank_group == bank_group][first.write][write];
  }
  std::uint32_t column_gap_after(std::uint32_t bank_group, bool write, const ColumnCommand& second) const {
    return gap_[second.bank_group == bank_group][write][second.write];
  }
  std::uint64_t grouped_start(std::uint64_t from, std::uint32_t bank_group, bool write);
  std::uint64_t find_column_slot(std::uint64_t from, std::uint32_t bank_group, bool write);
  std::uint64_t take_column(std::uint64_t at, std::uint32_t bank_group, bool write);
  void prune(std::uint64_t floor);
  static constexpr std::uint64_t kGroupingFactor = 2;

  DerivedTimings t_;
  // Column spacing by [same bank group][first is a write][second is a write] (the tim_d sums).
  std::uint32_t gap_[2][2][2];
  std::uint32_t column_reach_;  // the largest column spacing: older columns constrain nothing new
  std::uint32_t act_reach_;     // the same for ACTs (tRRD, tFAW)
  // Two column commands closer than twice the smallest spacing leave no legal cycle between them
  // for any new column command. The columns from tail_run_start_ to the newest are such a run, so
  // a search that starts inside it can go straight past its end (kNoRun: no run is known).
  std::uint32_t tight_spacing_;
  static constexpr std::uint64_t kNoRun = ~std::uint64_t{0};
  std::uint64_t tail_run_start_ = kNoRun;
  std::uint32_t banks_per_group_;
  std::uint32_t queue_depth_[2];  // the read queue, the write queue (spec::hbm::QueueSizes)
  bool closed_page_;
  std::vector<Bank> banks_;
  TimeWindow<RowCommand> acts_;        // by time, the recent ones
  TimeWindow<ColumnCommand> columns_;  // by time, the recent ones
  CommandBus bus_;
  std::deque<Refresh> refreshes_;  // fixed, not yet over
  std::uint64_t next_due_;
  std::uint64_t prea_at_ = 0, ref_at_ = 0;  // channel maxima (hbm_bank_state prea_at/ref_at)
  // cycles at which queued requests leave their slot (their column command + 1)
  std::priority_queue<std::uint64_t, std::vector<std::uint64_t>, std::greater<>> slot_free_[2];  // reads, writes
  std::uint64_t next_take_ = 1;  // the controller takes nothing in the first cycle after reset
  std::uint64_t floor_ = 0;      // no command is placed before this any more
  bool last_write_ = false;
  std::uint64_t last_column_at_ = 0;
  ChannelCounters counters_{};
};

}  // namespace tpuemu::tlm::detail
