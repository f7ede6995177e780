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
void ChannelTiming::CommandBus::too_far_ahead(std::uint64_t t) const {
  throw std::logic_error("hbm timing: a command " + std::to_string(t - floor_) +
                         " cycles ahead of the oldest queued request");
}

void ChannelTiming::CommandBus::advance_floor_across_words(std::uint64_t floor) {
  if (floor - floor_ >= kCycles) {
    std::fill(bits_.begin(), bits_.end(), 0);
  } else {
    // The cycles [floor_, floor) a word at a time: the floor moves by up to thousands of cycles
    // over an idle stretch.
    std::uint64_t t = floor_;
    bits_[(t % kCycles) / 64] &= (std::uint64_t{1} << (t % 64)) - 1;
    for (t += 64 - t % 64; t + 64 <= floor; t += 64) bits_[(t % kCycles) / 64] = 0;
    if (t < floor) bits_[(t % kCycles) / 64] &= ~((std::uint64_t{1} << (floor % 64)) - 1);
  }
  floor_ = floor;
}

// ---------------------------------------------------------------------------------------------
// Channel
// ---------------------------------------------------------------------------------------------
ChannelTiming::ChannelTiming(const DerivedTimings& t, std::uint32_t bank_groups,
                             std::uint32_t banks_per_group, const spec::hbm::QueueSizes& queues, bool closed_page,
                             bool stream_path)
    : t_(t),
      column_classes_(std::size_t{bank_groups} * 2),
      latest_column_of_group_(bank_groups, std::array<std::uint64_t, 2>{}),
      stream_path_(stream_path),
      banks_per_group_(banks_per_group),
      queue_depth_{queues.read_queue, queues.write_queue},
      write_high_(queues.write_high),
      write_low_(queues.write_low),
      closed_page_(closed_page),
      banks_(std::size_t{bank_groups} * banks_per_group),
      // hbm_refresh_timer: armed in cycle 1, the first REF is due (pend_q != 0) tREFI + 1 later.
      next_due_(std::uint64_t{t.refi} + 2),
      recent_reads_(queues.read_queue),
      recent_writes_(queues.write_queue) {
  if (const std::string why = queues.problem(); !why.empty()) throw std::invalid_argument("hbm timing: " + why);
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
  // spacing_allows_after_all needs the spacing within a bank group to be at least the one across.
  for (int first_write = 0; first_write < 2; ++first_write) {
    for (int write = 0; write < 2; ++write) {
      if (gap_[1][first_write][write] < gap_[0][first_write][write]) stream_path_ = false;
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
  return take_column(find_column_slot(from, bg, write), bg, write);
}

std::uint64_t ChannelTiming::search_column_slot(std::uint64_t t, std::uint32_t bg, bool write) {
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
  if (pos == columns_.end()) {
    // The stream path's run of the new column's class grows here while it is up to date (a
    // stream asks for the class of its last column next); other classes catch up when they ask.
    ColumnClass& k = column_classes_[column_class(bg, write)];
    if (columns_.empty()) {
      k.run_start = t;
      k.run_newest = t;
    } else if (k.run_newest == columns_.back().at) {
      if (leaves_a_legal_cycle(columns_.back(), ColumnCommand{t, bg, write}, bg, write)) k.run_start = t;
      k.run_newest = t;
    }
  }
  latest_column_of_group_[bg][write] = std::max(latest_column_of_group_[bg][write], t);
  latest_column_[write] = std::max(latest_column_[write], t);
  columns_.insert_at(static_cast<std::size_t>(pos - columns_.begin()), ColumnCommand{t, bg, write});
  prea_at_ = std::max(prea_at_, t + (write ? t_.wr2pre : t_.rd2pre));
  return t;
}

void ChannelTiming::extend_run(ColumnClass& k, std::uint32_t bg, bool write) {
  // The columns after run_newest are the newest few when the class asks often (a stream). Else
  // the run starts afresh at the newest column, which is always without a legal cycle (the bus).
  constexpr std::size_t kMostAdded = 4;
  const std::size_t n = columns_.size();
  std::size_t first_added = n;  // index of the first column after run_newest
  while (first_added > 0 && n - first_added <= kMostAdded && columns_[first_added - 1].at > k.run_newest) {
    --first_added;
  }
  if (k.run_newest == kNoRun || first_added == 0 || n - first_added > kMostAdded ||
      columns_[first_added - 1].at != k.run_newest) {
    k.run_start = columns_.back().at;
  } else {
    for (std::size_t i = first_added; i < n; ++i) {
      const ColumnCommand& before = columns_[i - 1];
      const ColumnCommand& after = columns_[i];
      if (leaves_a_legal_cycle(before, after, bg, write)) k.run_start = after.at;
    }
  }
  k.run_newest = columns_.back().at;
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

// ---------------------------------------------------------------------------------------------
// Write batching (hbm_channel_ctrl "Write batching")
// ---------------------------------------------------------------------------------------------
void ChannelTiming::start_drain(std::uint64_t at) {
  at = std::max(at, floor_);  // nothing is placed before the floor any more
  draining_ = true;
  drain_start_ = at;
  drain_dry_at_ = at;
  // Reads queued already: the drain stops at write_low for them (they keep their reserved slots).
  drain_for_reads_ = recent_reads_.newest() >= at;
  drain_end_ = kOpen;
}

void ChannelTiming::serve_oldest_write() { serve_write_at(0); }

std::uint64_t ChannelTiming::serve_write_at(std::size_t index) {
  const QueuedWrite w = unplaced_writes_[index];
  unplaced_writes_.erase(unplaced_writes_.begin() + static_cast<std::ptrdiff_t>(index));
  --unplaced_by_burst_bucket_[w.burst % unplaced_by_burst_bucket_.size()];
  ChannelOutcome::Row row_state{};
  // A write waits for a queued read of its burst (the controller's blocked flag).
  const std::uint64_t min_column = w.after_column != 0 ? w.after_column + 1 : 0;
  const std::uint64_t from = std::max({w.visible, floor_, draining_ ? drain_start_ : 0});
  const std::uint64_t column = serve(from, min_column, true, w.bank_group, w.bank, w.row, row_state);
  slot_free_[1].add(column + 1);
  recent_writes_.add(w.burst, column);
  ++counters_[stat::writes];
  if (draining_) drain_dry_at_ = std::max(drain_dry_at_, column + 1);
  return column;
}

bool ChannelTiming::issues_before(const QueuedWrite& w, std::uint64_t end, bool row_commands_count) {
  const Bank& b = banks_[std::size_t{w.bank_group} * banks_per_group_ + w.bank];
  const bool hit = b.open && b.row == w.row;
  if (!hit && !row_commands_count) return true;
  // The earliest column it could have only moves later while its bank keeps its row (commands
  // are only added), so a bound found before still holds: the same write is asked again and
  // again while it waits, and a search each time cost mixed traffic a fifth of its time.
  const std::uint64_t from = std::max({w.visible, drain_start_, w.after_column + 1, floor_});
  const ProbeKey key{w.visible, from, b.opened, b.open, b.row};
  if (key == probe_key_ && probe_bound_ >= end) return false;
  std::uint64_t bound = 0;
  if (hit) {
    bound = find_column_slot(std::max(from, b.col_at), w.bank_group, true);
  } else {
    // It needs its row opened first: its column comes tRCD after the ACT at the earliest (and
    // tRP after a PRE).
    const std::uint64_t act = b.open ? std::max(from, b.pre_at) + t_.rp : from;
    bound = std::max(act, b.act_at) + t_.rcd;
  }
  probe_key_ = key;
  probe_bound_ = bound;
  return bound < end;
}

void ChannelTiming::settle_drains_slow(std::uint64_t t) {
  for (;;) {
    if (!draining_) {
      if (unplaced_writes_.empty()) return;
      // A drain starts when write_high writes are queued, or when writes are queued and no read
      // is (the last queued read has issued). Every arrival settles the cycles before it, so the
      // newest read is the one that could still be waiting.
      const std::uint64_t after_reads = std::max(recent_reads_.newest() + 1, reads_from_);
      if (unplaced_writes_.size() >= write_high_ && unplaced_writes_[write_high_ - 1].visible < t) {
        // write_high writes are queued: the drain starts. The reads reserved already keep their
        // cycles (the controller would hold them back), so its writes take the cycles around them
        // and it stops at write_low; the reads queued later wait for it.
        start_drain(std::max(unplaced_writes_[write_high_ - 1].visible, reads_from_));
        continue;
      }
      const std::uint64_t start = std::max(unplaced_writes_.front().visible, after_reads);
      if (start >= t) return;
      start_drain(start);
      continue;
    }
    if (drain_end_ == kOpen && drain_for_reads_ && unplaced_writes_.size() <= write_low_) {
      // down to write_low while reads wait: they are served next
      drain_end_ = drain_dry_at_;
      reads_from_ = std::max(reads_from_, drain_end_);
    }
    if (drain_end_ != kOpen) {
      // Its end is fixed (reads wait for it), but a write queued before then still joins it, as
      // in the controller, where it keeps the count above write_low.
      if (!unplaced_writes_.empty() && unplaced_writes_.front().visible < drain_end_ &&
          issues_before(unplaced_writes_.front(), drain_end_, false)) {
        serve_oldest_write();
        continue;
      }
      if (drain_end_ >= t) return;
      draining_ = false;
      continue;
    }
    if ((unplaced_writes_.empty() || unplaced_writes_.front().visible > drain_dry_at_) && drain_dry_at_ < t) {
      draining_ = false;  // it ran dry: no write was queued when the last one issued
      continue;
    }
    // Only the writes that issue before t are decided: a read seen at t may still end the drain.
    if (unplaced_writes_.empty() || drain_dry_at_ >= t || !issues_before(unplaced_writes_.front(), t, true)) return;
    serve_oldest_write();
  }
}

std::uint64_t ChannelTiming::end_drain_for_read(std::uint64_t visible) {
  while (drain_end_ == kOpen && unplaced_writes_.size() > write_low_) serve_oldest_write();
  if (drain_end_ == kOpen) drain_end_ = std::max(visible, drain_dry_at_);
  reads_from_ = std::max(reads_from_, drain_end_);
  return reads_from_;
}

std::uint64_t ChannelTiming::finish(std::uint64_t cycle) {
  drain_queued_writes();
  prune(cycle);
  freeze_refreshes_through(cycle);
  return last_column_at_;
}

ChannelOutcome ChannelTiming::request(std::uint64_t offered, bool write, std::uint32_t bg,
                                      std::uint32_t bank_in_group, std::uint32_t row, std::uint64_t burst) {
  ChannelOutcome out;
  // Input register: taken at `accept`, queued once a slot is free (a slot frees the cycle after
  // its request's column command), then visible to the scheduler one cycle later.
  out.accept = std::max(offered, next_take_);
  std::uint64_t queued = out.accept + 1;
  // The drains of the cycles before this request is seen do not depend on it.
  settle_drains_before(queued + 1);
  auto& slots = slot_free_[write ? 1 : 0];  // the request's queue (read or write)
  const std::size_t depth = queue_depth_[write ? 1 : 0];
  for (;;) {
    while (!slots.empty() && slots.earliest() <= queued) slots.drop_earliest();
    const std::size_t unplaced = write ? unplaced_writes_.size() : 0;
    if (slots.size() + unplaced < depth) break;
    if (unplaced != 0) {
      // A full write queue holds write_high writes: a drain serves them.
      if (!draining_) start_drain(std::max(unplaced_writes_.front().visible, reads_from_));
      serve_oldest_write();
      continue;
    }
    queued = std::max(queued, slots.earliest());
    slots.drop_earliest();
  }
  next_take_ = queued;  // the register empties into the queue in that cycle and takes again
  out.queued = queued;
  const std::uint64_t visible = queued + 1;
  settle_drains_before(visible);
  prune(placement_floor(visible));

  if (write) {
    // Posted: it waits in the write queue for a drain (after a queued read of its burst).
    unplaced_writes_.push_back(QueuedWrite{visible, burst, recent_reads_.column_of(burst, visible), bg,
                                           bank_in_group, row});
    ++unplaced_by_burst_bucket_[burst % unplaced_by_burst_bucket_.size()];
    ++counters_[stat::writes_queued];  // `writes` counts it when its WR is placed, as the RTL
    settle_drains_before(visible + 1);
    out.column = ChannelOutcome::kNotYet;
    return out;
  }

  // A read waits for the drain under way (down to write_low), and behind the last one it ended.
  std::uint64_t min_column = draining_ ? end_drain_for_read(visible) : reads_from_;
  // It goes after every write of its burst (no forwarding). One still queued is served ahead of
  // its class, as the controller serves the oldest request when its class has nothing ready:
  // reads and writes that alternate on one burst would otherwise wait for a drain each.
  if (const std::uint64_t w = recent_writes_.column_of(burst, visible); w != 0) min_column = std::max(min_column, w + 1);
  const bool may_wait = unplaced_by_burst_bucket_[burst % unplaced_by_burst_bucket_.size()] != 0;
  for (std::size_t i = 0; may_wait && i < unplaced_writes_.size();) {
    if (unplaced_writes_[i].burst == burst) {
      min_column = std::max(min_column, serve_write_at(i) + 1);  // the next one moved to i
    } else {
      ++i;
    }
  }
  out.column = serve(visible, min_column, false, bg, bank_in_group, row, out.row);
  slots.add(out.column + 1);
  recent_reads_.add(burst, out.column);
  ++counters_[stat::reads];
  return out;
}

std::uint64_t ChannelTiming::serve(std::uint64_t earliest, std::uint64_t min_column, bool write, std::uint32_t bg,
                                   std::uint32_t bank_in_group, std::uint32_t row, ChannelOutcome::Row& row_state) {
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
    row_state = ChannelOutcome::Row::Hit;
    column = place_column(std::max({earliest, b.col_at, min_column}), bg, write);
    if (const Refresh* r = refresh_closing(b, column)) {
      // It could not issue before the refresh closed the row: undo and treat as a miss. The
      // reserved column slot is left taken (rare: only around a refresh).
      b.open = false;
      b.act_at = std::max(b.act_at, r->end);
      row_state = ChannelOutcome::Row::Miss;
      open_row(r->end);
      column = place_column(std::max(b.col_at, min_column), bg, write);
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
      row_state = closed_page_ ? ChannelOutcome::Row::Miss : ChannelOutcome::Row::Conflict;
    } else {
      row_state = ChannelOutcome::Row::Miss;
    }
    open_row(earliest);
    column = place_column(std::max(b.col_at, min_column), bg, write);
  }
  b.pre_at = std::max(b.pre_at, column + (write ? t_.wr2pre : t_.rd2pre));
  b.last_column = column;
  switch (row_state) {
    case ChannelOutcome::Row::Hit: ++counters_[stat::row_hits]; break;
    case ChannelOutcome::Row::Miss: ++counters_[stat::row_misses]; break;
    case ChannelOutcome::Row::Conflict: ++counters_[stat::row_conflicts]; break;
  }
  return column;
}

}  // namespace tpuemu::tlm::detail
