// SPDX-License-Identifier: Apache-2.0
#include "hbm_channel_timing.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace tpuemu::tlm::detail {

namespace stat = spec::hbm::stat;

DerivedTimings DerivedTimings::from(const sim::dram::Config& c) {
  // The controller's tim_d (hbm_ctrl.sv): the contract's derived distances (spec/tpuemu.json
  // "derived_timings"), the same table the RTL and the DRAM checker compute.
  const spec::hbm::DerivedTimings d = c.derived();
  DerivedTimings t{};
  t.rcd = c.tRCD;
  t.rp = c.tRP;
  t.ras = c.tRAS;
  t.rc = c.tRC;
  t.rrd_s = c.tRRD_S;
  t.rrd_l = c.tRRD_L;
  t.faw = c.tFAW;
  t.rfc = c.tRFC;
  t.refi = c.tREFI;
  t.ccd_s = d.ccd_s;
  t.ccd_l = d.ccd_l;
  t.rd2wr_s = d.rd2wr_s;
  t.rd2wr_l = d.rd2wr_l;
  t.wr2rd_s = d.wr2rd_s;
  t.wr2rd_l = d.wr2rd_l;
  t.rd2pre = c.tRTP;
  t.wr2pre = d.wr2pre;
  t.cl = c.CL;
  t.burst = d.tBURST;
  return t;
}

std::uint32_t DerivedTimings::max_column_gap() const {
  return std::max({ccd_l, rd2wr_l, wr2rd_l, ccd_s, rd2wr_s, wr2rd_s});
}

// ---------------------------------------------------------------------------------------------
// Command bus
// ---------------------------------------------------------------------------------------------
void ChannelTiming::CommandBus::take(std::uint64_t t) {
  if (t < floor_) return;  // a refresh accounted after the fact (an idle channel)
  if (t >= floor_ + kCycles) {
    throw std::logic_error("hbm timing: a command " + std::to_string(t - floor_) +
                           " cycles ahead of the oldest queued request");
  }
  bits_[(t % kCycles) / 64] |= std::uint64_t{1} << (t % 64);
}

void ChannelTiming::CommandBus::advance_floor(std::uint64_t floor) {
  if (floor <= floor_) return;
  if (floor - floor_ >= kCycles) {
    std::fill(bits_.begin(), bits_.end(), 0);
  } else {
    // A word at a time: the floor moves by up to thousands of cycles over an idle stretch.
    for (std::uint64_t t = floor_; t < floor;) {
      const std::uint64_t bit = t % 64;
      const std::uint64_t n = std::min<std::uint64_t>(64 - bit, floor - t);
      const std::uint64_t mask = n == 64 ? ~std::uint64_t{0} : ((std::uint64_t{1} << n) - 1) << bit;
      bits_[(t % kCycles) / 64] &= ~mask;
      t += n;
    }
  }
  floor_ = floor;
}

// ---------------------------------------------------------------------------------------------
// Channel
// ---------------------------------------------------------------------------------------------
ChannelTiming::ChannelTiming(const DerivedTimings& t, std::uint32_t bank_groups,
                             std::uint32_t banks_per_group, std::uint32_t read_queue, std::uint32_t write_queue,
                             bool closed_page)
    : t_(t),
      banks_per_group_(banks_per_group),
      queue_depth_{read_queue, write_queue},
      closed_page_(closed_page),
      banks_(std::size_t{bank_groups} * banks_per_group),
      // hbm_refresh_timer: armed in cycle 1, the first REF is due (pend_q != 0) tREFI + 1 later.
      next_due_(std::uint64_t{t.refi} + 2) {
  if (read_queue == 0 || write_queue == 0) throw std::invalid_argument("hbm timing: queue sizes must be positive");
  for (int same = 0; same < 2; ++same) {
    for (int first_write = 0; first_write < 2; ++first_write) {
      for (int write = 0; write < 2; ++write) {
        std::uint32_t g = 0;
        if (first_write == write) g = same ? t.ccd_l : t.ccd_s;
        else if (first_write) g = same ? t.wr2rd_l : t.wr2rd_s;
        else g = same ? t.rd2wr_l : t.rd2wr_s;
        gap_[same][first_write][write] = g;
      }
    }
  }
  column_reach_ = t.max_column_gap();
  act_reach_ = std::max({t.faw, t.rrd_l, t.rrd_s});
  tight_spacing_ = 2 * std::min({t.ccd_l, t.rd2wr_l, t.wr2rd_l, t.ccd_s, t.rd2wr_s, t.wr2rd_s});
}

void ChannelTiming::freeze_refreshes_through(std::uint64_t t) {
  while (t >= next_due_) {
    // Fixed from what is reserved so far (all of it before the due cycle): PREA as soon as it is
    // legal when a bank is open, then REF once every bank has had tRP (and tRC since its ACT).
    const std::uint64_t due = next_due_;
    const std::uint64_t last_end = refreshes_.empty() ? 0 : refreshes_.back().end;
    bool any_open = false;
    for (const Bank& b : banks_) any_open = any_open || (b.open && b.opened >= last_end && refresh_closing(b, due) == nullptr);
    Refresh r{};
    r.due = due;
    r.needs_prea = any_open;
    r.prea = std::max(due, prea_at_);
    if (r.needs_prea) r.prea = bus_.next_free(r.prea);
    r.ref = std::max(any_open ? r.prea + t_.rp : due, ref_at_);
    r.ref = bus_.next_free(r.ref);
    r.end = r.ref + t_.rfc;
    if (r.needs_prea) bus_.take(r.prea);
    bus_.take(r.ref);
    ref_at_ = std::max(ref_at_, r.prea + t_.rp);
    counters_[stat::preas] += r.needs_prea ? 1 : 0;
    ++counters_[stat::refs];
    counters_[stat::ref_cycles] += r.end - r.due;
    refreshes_.push_back(r);
    next_due_ += t_.refi;
  }
}

const ChannelTiming::Refresh* ChannelTiming::refresh_closing_slow(const Bank& b, std::uint64_t t) const {
  for (const Refresh& r : refreshes_) {
    if (b.opened < r.prea && r.prea <= t) return &r;
  }
  return nullptr;
}

std::uint64_t ChannelTiming::refresh_allows_slow(std::uint64_t t, int kind, bool write) {
  for (bool moved = true; moved;) {
    moved = false;
    freeze_refreshes_through(t);
    for (const Refresh& r : refreshes_) {
      if (t >= r.end) continue;
      bool ok = false;
      switch (kind) {
        case 0:  // ACT: none while the REF is due; before it only if it delays neither PREA nor REF
          ok = t < r.due && r.needs_prea && t + t_.ras <= r.prea && t + t_.rc <= r.ref;
          break;
        case 1:  // PRE
          ok = t < r.due && t + t_.rp <= r.ref;
          break;
        default:  // RD/WR: only if it does not push the PREA later (rd/wr_keeps_prea)
          ok = t + (write ? t_.wr2pre : t_.rd2pre) <= r.prea;
          break;
      }
      if (!ok) {
        t = r.end;
        moved = true;
        break;
      }
    }
  }
  return t;
}

std::uint64_t ChannelTiming::place_pre(std::uint64_t t) {
  for (;;) {
    t = refresh_allows(t, 1, false);
    if (!bus_.busy(t)) break;
    t = bus_.next_free(t);
  }
  bus_.take(t);
  ++counters_[stat::pres];
  ref_at_ = std::max(ref_at_, t + t_.rp);
  return t;
}

std::uint64_t ChannelTiming::place_act(std::uint64_t t, std::uint32_t bg) {
  const std::uint32_t rrd = std::max(t_.rrd_l, t_.rrd_s);
  const auto behind = [&](std::uint64_t x) { return x > rrd ? x - rrd : 0; };
  // t only grows and acts_ stays as it is until the insertion, so the first ACT within tRRD
  // behind t (lo) and the first at or after t (p) only move forward: cursors, not searches.
  const std::size_t n = acts_.size();
  std::size_t lo = static_cast<std::size_t>(acts_.lower_bound(behind(t)) - acts_.begin());
  std::size_t p = lo;
  for (bool moved = true; moved;) {
    moved = false;
    t = refresh_allows(t, 0, false);
    if (bus_.busy(t)) {
      t = bus_.next_free(t);  // every taken cycle skipped would fail here too
      moved = true;
      continue;
    }
    // tRRD to every reserved ACT on either side, in one pass: t only grows, so an ACT behind it
    // stays satisfied and the ones ahead are still to come.
    const std::uint64_t t_before = t;
    while (lo < n && acts_[lo].at < behind(t)) ++lo;
    for (std::size_t i = lo; i < n && acts_[i].at < t + rrd; ++i) {
      const RowCommand& a = acts_[i];
      const std::uint32_t gap = a.bank_group == bg ? t_.rrd_l : t_.rrd_s;
      if (t + gap > a.at && t < a.at + gap) t = a.at + gap;
    }
    moved = t != t_before;
    if (moved) continue;
    p = std::max(p, lo);
    while (p < n && acts_[p].at < t) ++p;
    // tFAW: any five ACTs in time order span at least tFAW
    for (std::size_t j = p >= 4 ? p - 4 : 0; j <= p && j + 3 < n && !moved; ++j) {
      const std::uint64_t first = std::min(acts_[j].at, t);
      const std::uint64_t last = std::max(acts_[j + 3].at, t);
      if (last - first < t_.faw) {
        t = acts_[j].at + t_.faw;
        moved = true;
      }
    }
  }
  bus_.take(t);
  acts_.insert_at(p, RowCommand{t, bg});  // p is where t goes (the last pass placed it)
  ++counters_[stat::acts];
  prea_at_ = std::max(prea_at_, t + t_.ras);
  ref_at_ = std::max(ref_at_, t + t_.rc);
  return t;
}

std::uint64_t ChannelTiming::place_column(std::uint64_t from, std::uint32_t bg, bool write) {
  return take_column(grouped_start(from, bg, write), bg, write);
}

std::uint64_t ChannelTiming::find_column_slot(std::uint64_t t, std::uint32_t bg, bool write) {
  constexpr std::size_t kUnset = ~std::size_t{0};
  const std::size_t n = columns_.size();
  std::size_t lo = kUnset;
  for (bool moved = true; moved;) {
    moved = false;
    if (t >= tail_run_start_ && t <= columns_.back().at) {
      // Inside the tight run no cycle is legal, up to the spacing behind its newest column. Every
      // cycle skipped is one the searches below would reject, so the slot found is the same.
      t = columns_.back().at + column_gap(columns_.back(), bg, write);
    }
    t = refresh_allows(t, 2, write);
    if (bus_.busy(t)) {
      t = bus_.next_free(t);  // every taken cycle skipped would fail here too
      moved = true;
      continue;
    }
    // Spacing to every reserved column command on either side, in one pass (as for tRRD).
    const std::uint64_t t_before = t;
    const std::uint32_t reach = column_reach_;
    // As in place_act: t only grows, so the first column within reach behind it is a cursor.
    const std::uint64_t back = t > reach ? t - reach : 0;
    if (lo == kUnset) lo = static_cast<std::size_t>(columns_.lower_bound(back) - columns_.begin());
    while (lo < n && columns_[lo].at < back) ++lo;
    for (std::size_t i = lo; i < n && columns_[i].at <= t + reach; ++i) {
      const ColumnCommand& c = columns_[i];
      if (c.at <= t ? t - c.at < column_gap(c, bg, write) : c.at - t < column_gap_after(bg, write, c)) {
        t = c.at + column_gap(c, bg, write);
      }
    }
    moved = t != t_before;
  }
  return t;
}

std::uint64_t ChannelTiming::take_column(std::uint64_t t, std::uint32_t bg, bool write) {
  bus_.take(t);
  const auto pos = columns_.lower_bound(t);
  // hbm_channel_ctrl counts a turnaround when a column command changes the direction
  const bool before_differs = pos != columns_.begin() ? std::prev(pos)->write != write : last_write_ != write;
  counters_[stat::turnarounds] += before_differs ? 1 : 0;
  if (pos == columns_.end() && t >= last_column_at_) {
    last_write_ = write;
    last_column_at_ = t;
  }
  // The tail run grows when the new newest column is tight behind the old one; an insertion
  // before the newest only splits a gap, and so keeps every run tight.
  if (pos == columns_.end() && (columns_.empty() || t - columns_.back().at >= tight_spacing_)) tail_run_start_ = t;
  columns_.insert(ColumnCommand{t, bg, write});
  prea_at_ = std::max(prea_at_, t + (write ? t_.wr2pre : t_.rd2pre));
  return t;
}

std::uint64_t ChannelTiming::grouped_start(std::uint64_t from, std::uint32_t bg, bool write) {
  // Read/write grouping (hbm_channel_ctrl serves ready hits of the last direction first): a
  // request of the other direction waits until the run dries up, and requests of the run's
  // direction that become ready meanwhile still join it. Reservations cannot let later arrivals
  // pass, so when this request would go right behind a run of the other direction that is still
  // going when it becomes ready, it leaves room behind that run for as many more columns as the
  // run has had since then (a run lasts about as long again while arrivals keep coming).
  const std::uint64_t natural = find_column_slot(from, bg, write);
  const auto next = columns_.lower_bound(natural);
  if (next == columns_.begin()) return natural;
  const ColumnCommand& prev = *std::prev(next);
  if (prev.write == write || prev.at < from) return natural;
  std::uint64_t run = 0;
  for (auto it = std::prev(next);; --it) {
    if (it->at < from || it->write == write) break;
    ++run;
    if (it == columns_.begin()) break;
  }
  return find_column_slot(natural + run * kGroupingFactor * t_.ccd_s, bg, write);
}

void ChannelTiming::prune(std::uint64_t floor) {
  if (floor <= floor_) return;
  floor_ = floor;
  bus_.advance_floor(floor);
  acts_.drop_before(floor, act_reach_);
  columns_.drop_before(floor, column_reach_);
  // What is left of the tail run is still a tight run.
  if (columns_.empty()) {
    tail_run_start_ = kNoRun;
  } else if (tail_run_start_ != kNoRun) {
    tail_run_start_ = std::max(tail_run_start_, columns_.front().at);
  }
  // A refresh whose PREA has passed closed every row opened before it; after that it is only
  // needed while commands can still land inside it.
  while (!refreshes_.empty() && refreshes_.front().end <= floor) {
    const Refresh& r = refreshes_.front();
    for (Bank& b : banks_) {
      if (b.open && b.opened < r.prea) {
        b.open = false;
        b.act_at = std::max(b.act_at, r.end);
      }
    }
    refreshes_.pop_front();
  }
}

ChannelOutcome ChannelTiming::request(std::uint64_t offered, bool write, std::uint32_t bg,
                                      std::uint32_t bank_in_group, std::uint32_t row) {
  ChannelOutcome out;
  // Input register: taken at `accept`, queued once a slot is free (a slot frees the cycle after
  // its request's column command), then visible to the scheduler one cycle later.
  out.accept = std::max(offered, next_take_);
  std::uint64_t queued = out.accept + 1;
  auto& slots = slot_free_[write ? 1 : 0];  // the request's queue (read or write)
  while (!slots.empty() && slots.top() <= queued) slots.pop();
  while (slots.size() >= queue_depth_[write ? 1 : 0]) {
    queued = std::max(queued, slots.top());
    slots.pop();
  }
  next_take_ = queued;  // the register empties into the queue in that cycle and takes again
  out.queued = queued;
  const std::uint64_t earliest = queued + 1;
  prune(earliest);

  Bank& b = banks_[std::size_t{bg} * banks_per_group_ + bank_in_group];
  if (b.open) {
    if (const Refresh* r = refresh_closing(b, earliest)) {
      b.open = false;
      b.act_at = std::max(b.act_at, r->end);
    }
  }
  if (closed_page_ && b.open && earliest > b.pre_at) {
    // The controller closed the idle bank as soon as its PRE was legal (policy 4 of
    // hbm_channel_ctrl); that PRE is in the past of the bus window, so it takes no slot here.
    b.open = false;
    ++counters_[stat::pres];
    b.act_at = std::max(b.act_at, b.pre_at + t_.rp);
    ref_at_ = std::max(ref_at_, b.pre_at + t_.rp);
  }

  const auto open_row = [&](std::uint64_t from) {
    const std::uint64_t act = place_act(std::max(from, b.act_at), bg);
    b.open = true;
    b.row = row;
    b.opened = act;
    b.col_at = act + t_.rcd;
    b.pre_at = act + t_.ras;
    b.act_at = act + t_.rc;
  };

  std::uint64_t column = 0;
  if (b.open && b.row == row) {
    out.row = ChannelOutcome::Row::Hit;
    column = place_column(std::max(earliest, b.col_at), bg, write);
    if (const Refresh* r = refresh_closing(b, column)) {
      // It could not issue before the refresh closed the row: undo and treat as a miss. The
      // reserved column slot is left taken (rare: only around a refresh).
      b.open = false;
      b.act_at = std::max(b.act_at, r->end);
      out.row = ChannelOutcome::Row::Miss;
      open_row(r->end);
      column = place_column(b.col_at, bg, write);
    }
  } else {
    if (b.open) {
      const std::uint64_t pre = place_pre(std::max(earliest, b.pre_at));
      if (const Refresh* r = refresh_closing(b, pre)) {
        b.act_at = std::max(b.act_at, r->end);  // the refresh's PREA closed it instead
        --counters_[stat::pres];
      } else {
        b.act_at = std::max(b.act_at, pre + t_.rp);
      }
      b.open = false;
      out.row = closed_page_ ? ChannelOutcome::Row::Miss : ChannelOutcome::Row::Conflict;
    } else {
      out.row = ChannelOutcome::Row::Miss;
    }
    open_row(earliest);
    column = place_column(b.col_at, bg, write);
  }
  b.pre_at = std::max(b.pre_at, column + (write ? t_.wr2pre : t_.rd2pre));
  b.last_column = column;
  slot_free_[write ? 1 : 0].push(column + 1);
  out.column = column;

  ++counters_[write ? stat::writes : stat::reads];
  if (write) ++counters_[stat::writes_queued];  // every write is queued (and issued) by the end
  switch (out.row) {
    case ChannelOutcome::Row::Hit: ++counters_[stat::row_hits]; break;
    case ChannelOutcome::Row::Miss: ++counters_[stat::row_misses]; break;
    case ChannelOutcome::Row::Conflict: ++counters_[stat::row_conflicts]; break;
  }
  return out;
}

}  // namespace tpuemu::tlm::detail
