// SPDX-License-Identifier: Apache-2.0
// One HBM channel of the burst-level timing model (docs/hbm-trace.md): the controller's
// input register and request queue, its bank and bank-group state, refresh, and the command bus,
// as *reservations*. Each request is scheduled when it enters the queue: its commands (PRE, ACT,
// RD/WR) take the earliest cycles that satisfy every timing rule against all commands already
// reserved, before or after them. So an earlier request is never delayed by a later one, and a
// later one may still fill an earlier gap (the "first ready" of FR-FCFS).
//
// Write batching (docs/hbm.md "Queues and write batching"): reads are reserved when they are
// queued, because their data time is the answer. Writes are posted (answered when queued), so a
// write waits unplaced in the write queue until the controller would serve it: in a *drain*. The
// drains are decided from what has arrived so far, at each arrival: a drain starts when
// write_high writes are queued, or when writes are queued and no read is; a read that arrives
// during one ends it once write_low writes are left; a drain that runs dry ends.
//
// All times are the controller's scheduler cycles (now_q of hbm_ctrl, = the HbmSystem tick).
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <deque>
#include <limits>
#include <vector>

#include "cycle_counts.h"
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
  // cycle its RD/WR was chosen (on the command bus one cycle later); kNotYet for a write that
  // waits for a drain (ChannelTiming::finish places every one)
  std::uint64_t column = 0;
  static constexpr std::uint64_t kNotYet = std::numeric_limits<std::uint64_t>::max();
  enum class Row : std::uint8_t { Hit, Miss, Conflict } row = Row::Hit;
};

// The controller's statistics the model counts, by the contract's index (spec::hbm::stat): the
// queue occupancy and the read-latency sums stay 0 per channel.
using ChannelCounters = sim::hbm::StatCounters;

class ChannelTiming {
 public:
  // `stream_path`: whether find_column_slot may take its exact shortcut (off: always the general
  // search; the tests compare the two).
  ChannelTiming(const DerivedTimings& t, std::uint32_t bank_groups, std::uint32_t banks_per_group,
                const spec::hbm::QueueSizes& queues, bool closed_page, bool stream_path = true);

  // The earliest cycle the channel can take a request (one per cycle, input register free).
  std::uint64_t next_take() const { return next_take_; }
  // A request offered from cycle `offered` on (>= next_take() not required); `burst` identifies
  // its burst (requests to one burst keep their order).
  ChannelOutcome request(std::uint64_t offered, bool write, std::uint32_t bank_group,
                         std::uint32_t bank, std::uint32_t row, std::uint64_t burst);
  // The run ended at `cycle`: the writes still queued are drained (once no read is left, as the
  // controller does), and the refreshes due up to `cycle` are accounted. Returns the cycle of the
  // last column command.
  std::uint64_t finish(std::uint64_t cycle);
  // Writes wait in the queue for a drain: drain_queued_writes() places them as if no read came
  // any more, and returns the cycle of the last column command.
  bool has_queued_writes() const { return !unplaced_writes_.empty(); }
  std::uint64_t drain_queued_writes() {
    settle_drains_before(std::numeric_limits<std::uint64_t>::max());
    return last_column_at_;
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
  // A queued write whose WR is not placed yet (it waits for a drain).
  struct QueuedWrite {
    std::uint64_t visible;       // first cycle the scheduler sees it (queued + 1)
    std::uint64_t burst;
    std::uint64_t after_column;  // a queued read of its burst issues first (its RD's cycle), or 0
    std::uint32_t bank_group, bank, row;
  };
  // The bursts of the last few column commands of one class, with their cycles: enough of them
  // to hold every request of the class still queued (a queue holds at most `size` requests).
  class RecentBursts {
   public:
    explicit RecentBursts(std::size_t size) : items_(size) {}
    void add(std::uint64_t burst, std::uint64_t column) {
      items_[next_] = {burst, column};
      next_ = next_ + 1 == items_.size() ? 0 : next_ + 1;
      newest_ = std::max(newest_, column);
      std::uint64_t& bucket = newest_in_bucket_[burst % kBuckets];
      bucket = std::max(bucket, column);
    }
    // The latest column at or after `from` to `burst`, or 0.
    std::uint64_t column_of(std::uint64_t burst, std::uint64_t from) const {
      // Mostly none of its bucket is still queued: cheap tests before the search.
      if (newest_ < from || newest_in_bucket_[burst % kBuckets] < from) return 0;
      std::uint64_t found = 0;
      for (const Item& i : items_) {
        if (i.burst == burst && i.column >= from) found = std::max(found, i.column);
      }
      return found;
    }
    std::uint64_t newest() const { return newest_; }

   private:
    struct Item {
      std::uint64_t burst = ~std::uint64_t{0}, column = 0;
    };
    static constexpr std::size_t kBuckets = 64;
    std::vector<Item> items_;
    std::size_t next_ = 0;
    std::uint64_t newest_ = 0;
    std::array<std::uint64_t, kBuckets> newest_in_bucket_{};  // by burst modulo kBuckets
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
    [[gnu::always_inline]] void take(std::uint64_t t) {
      if (t < floor_) return;  // a refresh accounted after the fact (an idle channel)
      if (t >= floor_ + kCycles) too_far_ahead(t);
      bits_[(t % kCycles) / 64] |= std::uint64_t{1} << (t % 64);
    }
    [[gnu::always_inline]] void advance_floor(std::uint64_t floor) {
      if (floor <= floor_) return;
      if (floor / 64 != floor_ / 64) return advance_floor_across_words(floor);
      // Within one word (a request moves the floor by a cycle or two): clear the bits from
      // floor_ % 64 up to floor % 64.
      const std::uint64_t below_floor = (std::uint64_t{1} << (floor % 64)) - 1;
      const std::uint64_t below_old_floor = (std::uint64_t{1} << (floor_ % 64)) - 1;
      bits_[(floor_ % kCycles) / 64] &= ~(below_floor & ~below_old_floor);
      floor_ = floor;
    }

   private:
    [[noreturn]] void too_far_ahead(std::uint64_t t) const;
    void advance_floor_across_words(std::uint64_t floor);
    static constexpr std::uint64_t kCycles = 1 << 14;
    std::vector<std::uint64_t> bits_ = std::vector<std::uint64_t>(kCycles / 64, 0);
    std::uint64_t floor_ = 0;
  };

  std::uint64_t place_pre(std::uint64_t from);
  std::uint64_t place_act(std::uint64_t from, std::uint32_t bank_group);
  [[gnu::always_inline]] inline std::uint64_t place_column(std::uint64_t from, std::uint32_t bank_group, bool write);
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
  // Places one request's commands from `earliest` on, its column not before `min_column`.
  // Inlined: a call of its own made read streams some 5 % slower (callgrind).
  [[gnu::always_inline]] inline std::uint64_t serve(std::uint64_t earliest, std::uint64_t min_column, bool write,
                                                    std::uint32_t bank_group, std::uint32_t bank, std::uint32_t row,
                                                    ChannelOutcome::Row& row_state);
  // Decides the drains of every cycle before `t` from the requests queued so far, placing the
  // writes they serve (lazily: only as far as needed to know the state at `t`).
  void settle_drains_before(std::uint64_t t) {
    // Most requests of read-only or write-only traffic find nothing to decide.
    if (draining_ || !unplaced_writes_.empty()) settle_drains_slow(t);
  }
  void settle_drains_slow(std::uint64_t t);
  void start_drain(std::uint64_t at);
  void serve_oldest_write();
  // Serves the queued write at `index` (0: the oldest); returns its column.
  std::uint64_t serve_write_at(std::size_t index);
  // Whether the write's column can come before `end`: a row hit's by the bus, a write that needs
  // its row opened only if `row_commands_count` (else it is taken to fit).
  bool issues_before(const QueuedWrite& w, std::uint64_t end, bool row_commands_count);
  // Ends the drain for a read visible at `visible` (it waits for the drain): the drain goes on
  // until write_low writes are left. Returns the cycle from which reads are served again.
  std::uint64_t end_drain_for_read(std::uint64_t visible);
  // No command is placed before this any more (what prune may drop).
  std::uint64_t placement_floor(std::uint64_t t) const {
    // A drain under way places its writes from its start (or their queueing) on.
    if (draining_ && !unplaced_writes_.empty()) {
      return std::min(t, std::max(drain_start_, unplaced_writes_.front().visible));
    }
    return t;
  }
  std::uint64_t find_column_slot(std::uint64_t from, std::uint32_t bank_group, bool write) {
    if (stream_path_) {
      if (const std::uint64_t slot = stream_column_slot(from, bank_group, write); slot != kNoSlot) return slot;
    }
    return search_column_slot(from, bank_group, write);
  }
  // The general search: from `from` on, past every cycle a refresh, the bus or a column spacing
  // forbids.
  std::uint64_t search_column_slot(std::uint64_t from, std::uint32_t bank_group, bool write);
  // The stream path: the slot right behind the reserved columns, without a search, when that is
  // provably the slot the general search finds; else kNoSlot.
  static constexpr std::uint64_t kNoSlot = ~std::uint64_t{0};
  std::uint64_t stream_column_slot(std::uint64_t from, std::uint32_t bank_group, bool write) {
    // Without a refresh fixed or due up to the slot, refresh_allows is the identity on every
    // cycle the general search visits (all at or before the slot it returns) and fixes nothing.
    // So the general search finds the earliest cycle >= from that the bus and every column
    // spacing allow, and that cycle is unique: any exact way to it gives the same slot.
    if (!refreshes_.empty() || columns_.empty() || from < floor_ || from < column_reach_) return kNoSlot;
    const std::uint64_t newest = columns_.back().at;
    if (from <= newest && from < tail_run_start_) {
      // `from` lies among the reserved columns before the tight run: the slot is behind them
      // only if the class's own run reaches back to `from`.
      ColumnClass& k = column_classes_[column_class(bank_group, write)];
      if (k.run_newest != newest) extend_run(k, bank_group, write);
      if (from < k.run_start) return kNoSlot;
    }
    // Every cycle from `from` (or the run) to the newest column is illegal, and after it every
    // cycle before spacing_allows_after_all: some column's spacing forbids it. The first free
    // bus cycle from there is legal for every spacing.
    const std::uint64_t slot = bus_.next_free(std::max(from, spacing_allows_after_all(bank_group, write)));
    return slot < next_due_ ? slot : kNoSlot;
  }
  // Inlined into place_column, its one caller (every request).
  [[gnu::always_inline]] inline std::uint64_t take_column(std::uint64_t at, std::uint32_t bank_group, bool write);
  [[gnu::always_inline]] inline void prune(std::uint64_t floor);

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
  // The stream path's knowledge per class of column command (bank group, direction): the run of
  // columns from run_start to run_newest leaves no legal cycle for this class (each pair of
  // neighbours is closer than the class's spacing after the first plus its spacing before the
  // second). It is extended lazily, when the class asks, over the few columns added behind it
  // since. Insertions only add constraints, so a run stays without a legal cycle; the prune drops
  // only columns that constrain nothing at or after the floor.
  struct ColumnClass {
    std::uint64_t run_start = 0;
    std::uint64_t run_newest = kNoRun;  // kNoRun: nothing known yet
  };
  std::size_t column_class(std::uint32_t bank_group, bool write) const {
    return std::size_t{bank_group} * 2 + (write ? 1 : 0);
  }
  void extend_run(ColumnClass& k, std::uint32_t bank_group, bool write);
  // Whether a column of (bank_group, write) could go between two neighbouring columns: it needs
  // the spacing after the first and the spacing before the second.
  bool leaves_a_legal_cycle(const ColumnCommand& before, const ColumnCommand& after, std::uint32_t bank_group,
                            bool write) const {
    return after.at - before.at >= column_gap(before, bank_group, write) + column_gap_after(bank_group, write, after);
  }
  // The earliest cycle after the newest column that every reserved column's spacing allows a
  // column of (bank_group, write): the largest column + spacing. With the spacing within a bank
  // group at least the one across groups (checked, else no stream path), it is the largest of
  // the latest column of the group per direction plus its spacing, and the latest of any group
  // per direction plus the spacing across groups. Columns not yet seen count as at 0, which
  // constrains only cycles below column_reach_.
  std::uint64_t spacing_allows_after_all(std::uint32_t bank_group, bool write) const {
    const std::array<std::uint64_t, 2>& group = latest_column_of_group_[bank_group];
    return std::max({group[0] + gap_[1][0][write], group[1] + gap_[1][1][write],
                     latest_column_[0] + gap_[0][0][write], latest_column_[1] + gap_[0][1][write]});
  }
  std::vector<ColumnClass> column_classes_;
  std::vector<std::array<std::uint64_t, 2>> latest_column_of_group_;  // by [bank group][write]
  std::array<std::uint64_t, 2> latest_column_{};                      // by [write], any group
  bool stream_path_;
  std::uint32_t banks_per_group_;
  std::uint32_t queue_depth_[2];  // the read queue, the write queue (spec::hbm::QueueSizes)
  std::uint32_t write_high_, write_low_;  // the drain's watermarks
  bool closed_page_;
  std::vector<Bank> banks_;
  TimeWindow<RowCommand> acts_;        // by time, the recent ones
  TimeWindow<ColumnCommand> columns_;  // by time, the recent ones
  CommandBus bus_;
  std::deque<Refresh> refreshes_;  // fixed, not yet over
  std::uint64_t next_due_;
  std::uint64_t prea_at_ = 0, ref_at_ = 0;  // channel maxima (hbm_bank_state prea_at/ref_at)
  // cycles at which queued requests leave their slot (their column command + 1)
  SortedCycles slot_free_[2];  // reads, writes
  std::uint64_t next_take_ = 1;  // the controller takes nothing in the first cycle after reset
  std::uint64_t floor_ = 0;      // no command is placed before this any more
  bool last_write_ = false;
  std::uint64_t last_column_at_ = 0;
  // Write batching.
  std::deque<QueuedWrite> unplaced_writes_;  // oldest first
  std::array<std::uint16_t, 64> unplaced_by_burst_bucket_{};  // how many, by burst modulo 64
  bool draining_ = false;
  std::uint64_t drain_start_ = 0;
  std::uint64_t drain_dry_at_ = 0;  // the drain's placed writes have all issued by this cycle
  bool drain_for_reads_ = false;    // reads were queued when it started: it stops at write_low
  static constexpr std::uint64_t kOpen = std::numeric_limits<std::uint64_t>::max();
  std::uint64_t drain_end_ = kOpen;  // fixed once a read waits for the drain
  std::uint64_t reads_from_ = 0;     // the end of the last drain a read waited for
  // The last issues_before answer: for which write and state of its bank, and the bound found.
  struct ProbeKey {
    std::uint64_t visible = ~std::uint64_t{0}, from = 0, opened = 0;
    bool open = false;
    std::uint32_t row = 0;
    bool operator==(const ProbeKey&) const = default;
  } probe_key_;
  std::uint64_t probe_bound_ = 0;
  RecentBursts recent_reads_, recent_writes_;
  ChannelCounters counters_{};
};

}  // namespace tpuemu::tlm::detail
