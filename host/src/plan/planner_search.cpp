// SPDX-License-Identifier: Apache-2.0
// The exact search of the offline planner (docs/allocation.md), after the ideas of MiniMalloc
// (M. Moffitt, "MiniMalloc: A Lightweight Memory Allocator for Hardware-Accelerated Machine
// Learning", ASPLOS 2023), written from the published description.
//
// Time is cut into sections between consecutive distinct endpoints. Every section has a floor:
// nothing unplaced may go below it. A node picks the section s with the lowest floor f among
// those still crossed by unplaced buffers (leftmost on ties) and branches on what sits at level f
// in s:
//   - one child per unplaced buffer b crossing s that can go exactly at f (every section of b is
//     at floor f and f is a multiple of b's alignment): b is placed at f and the floors of its
//     sections become f + size;
//   - a last child "nothing sits at f in s": the floor of s is raised to the lowest offset any
//     buffer crossing s could still take (the gap [f, raised) is wasted).
// These children cover every placement (take any solution pushed down as far as it goes: the
// lowest unplaced buffer crossing s is either at f, or every buffer crossing s is at or above the
// raised floor), so an exhausted search is a proof of infeasibility. A candidate that would leave
// a gap in s is not a child of its own: it is reached through the raise.
//
// Pruning: a section whose floor plus the bytes of its unplaced buffers exceeds the capacity can't
// be completed (waste below the floor is charged this way). Placing at the floor never wastes, so
// the check runs on raises, and a look-ahead strengthens it: in every section, the lowest offset
// any of its unplaced buffers can still take (the max floor over that buffer's sections, aligned)
// plus the section's unplaced bytes must fit, and for every such offset t the bytes of those that
// can't go below t must fit above it (stairs_fit()). Sections that can't waste anything must have a
// buffer at their floor: the valleys (runs at one floor between higher neighbours) must be
// exactly covered at that level by disjoint lifetimes (valleys_coverable()), and a buffer that
// would sit there over lower sections needs those filled exactly up to it (steps_fillable(),
// subset sums). Dominance: a raise that leaves room for an unplaced buffer wholly inside empty
// space kills the state (dominated()). Buffers identical to one already tried at a node (same
// lifetime, size and alignment) are skipped. Candidates are tried in a preorder that changes
// across restarts (longest lifetime, largest area or largest size first; except in the area one,
// those filling the whole run at the floor and those whose top meets a neighbouring floor first).
//
// Conflict-directed backjumping: every failure carries a range of sections that explains it
// (Span, child_failed()); a child failing for a reason its own change doesn't touch makes its
// parent fail for the same reason without trying the other children.
#include "planner_search.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <numeric>
#include <optional>
#include <utility>

namespace tpuemu::plan::detail {
namespace {

constexpr std::uint64_t kNone = std::numeric_limits<std::uint64_t>::max();
constexpr int kNothingApplied = -1;
constexpr int kRaised = -2;

struct Hash {
  std::uint64_t a = 0, b = 0;
  Hash& operator^=(const Hash& o) {
    a ^= o.a;
    b ^= o.b;
    return *this;
  }
};

// Dead states, shared by a search and its sub-searches (each salts its keys).
// Dead states, shared by a search, its sub-searches and its restarts. A search salts its keys with
// a hash of its problem (buffers and starting floors), so only the same problem shares entries.
struct DeadEntry {
  Hash hash;
  std::int32_t lo = 0, hi = -1;  // the sections the failure depends on (Span)
};
struct DeadTable {
  std::vector<DeadEntry> slots = std::vector<DeadEntry>(std::size_t{1} << 20);
  std::uint64_t nodes = 0;       // of all the searches sharing it
  std::uint64_t node_limit = 0;  // of the current restart
  std::uint64_t restart = 0;     // picks the portfolio configuration (restart % 3)
  SearchRules rules;
  const StopToken* stop = nullptr;  // asked at every node: a user's Ctrl-C ends the search at once

  // Whether the deadline has passed, looking at the clock about once a millisecond of search
  // whatever a node costs: every node at first, then every `clock_stride` nodes, the stride
  // doubled while looks come quicker than that and halved while they come slower. A node of a
  // group of tens of thousands of buffers can take tens of milliseconds, so a fixed count of nodes
  // between looks would overrun the timeout by minutes.
  bool past(std::chrono::steady_clock::time_point deadline) {
    if (nodes < next_clock_look) return false;
    const auto now = std::chrono::steady_clock::now();
    const auto since = now - last_clock_look;
    if (since < std::chrono::microseconds(250) && clock_stride < 1024) clock_stride *= 2;
    if (since > std::chrono::milliseconds(2) && clock_stride > 1) clock_stride /= 2;
    last_clock_look = now;
    next_clock_look = nodes + clock_stride;
    return now > deadline;
  }
  std::uint64_t clock_stride = 1, next_clock_look = 0;
  std::chrono::steady_clock::time_point last_clock_look{};
};

// The floors a sub-search starts from: the parent's sections and their floors.
struct Profile {
  const std::vector<std::int64_t>* times = nullptr;
  const std::vector<std::uint64_t>* floors = nullptr;
};

enum class Expand { Open, Complete, Timeout, Dead };

constexpr int kNoGap = std::numeric_limits<int>::max();

// A range of sections [lo, hi] (empty when lo > hi): the part of a state a failure depends on.
// `gaps_from`: the failure also depends on the empty space left by the raises of frames at this
// depth or deeper (kNoGap: on none); a state remembered as dead keys on its gaps when they
// include one of those (remember_dead()).
struct Span {
  int lo = std::numeric_limits<int>::max(), hi = -1;
  int gaps_from = kNoGap;
  bool empty() const { return lo > hi; }
  void add(int k) {
    lo = std::min(lo, k);
    hi = std::max(hi, k);
  }
  void add(const Span& o) {
    gaps_from = std::min(gaps_from, o.gaps_from);
    if (o.empty()) return;
    lo = std::min(lo, o.lo);
    hi = std::max(hi, o.hi);
  }
  bool meets(int a, int b) const { return !empty() && lo <= b && a <= hi; }
};

class Search {
 public:
  Search(std::vector<SearchBuffer> buffers, std::uint64_t capacity,
         std::chrono::steady_clock::time_point deadline, DeadTable& dead, Profile profile = {})
      : buffers_(std::move(buffers)), capacity_(capacity), deadline_(deadline), dead_(dead) {
    setup(profile);
  }

  // Found (offsets_), Exhausted or Timeout.
  SearchOutcome run() {
    if (buffers_.empty()) return SearchOutcome::Found;
    for (std::size_t k = 0; k < remaining_.size(); ++k) {
      if (exceeds(floor_[k], remaining_[k], capacity_)) return SearchOutcome::Exhausted;
    }
    switch (expand()) {
      case Expand::Complete: return SearchOutcome::Found;
      case Expand::Timeout: return SearchOutcome::Timeout;
      case Expand::Dead: return SearchOutcome::Exhausted;
      case Expand::Open: break;
    }
    while (!frames_.empty()) {
      Frame& fr = frames_.back();
      undo(fr);
      if (fr.next < fr.cand_end) {
        const int b = cands_[fr.next++];
        place(b, fr.floor);
        fr.applied = b;
      } else if (!fr.raise_tried) {
        fr.raise_tried = true;
        if (fr.raise_to == kNone || exceeds(fr.raise_to, remaining_[fr.section], capacity_)) continue;
        set_floor(static_cast<std::size_t>(fr.section), fr.raise_to);
        push_gap(fr.section, fr.floor, fr.raise_to, static_cast<int>(frames_.size()) - 1);
        fr.applied = kRaised;
      } else {
        Span why = fr.conflict;
        why.add(fr.why_node);
        pop_failed(why);
        continue;
      }
      dead_.stop->throw_if_requested("the planner's search");
      if (++dead_.nodes >= dead_.node_limit) return SearchOutcome::Timeout;  // restart
      if (dead_.past(deadline_)) return SearchOutcome::Timeout;
      if (fr.applied == kRaised && dominated(fr.section)) {
        child_failed(fail_);
        continue;
      }
      switch (expand()) {  // invalidates fr
        case Expand::Complete: return SearchOutcome::Found;
        case Expand::Timeout: return SearchOutcome::Timeout;
        case Expand::Dead: child_failed(fail_); break;
        case Expand::Open: break;
      }
    }
    return SearchOutcome::Exhausted;
  }

  const std::vector<std::uint64_t>& offsets() const { return offsets_; }

 private:
  struct Frame {
    Hash hash;  // of the state the node was expanded in
    int section = 0;
    std::uint64_t floor = 0;
    std::uint64_t raise_to = kNone;
    std::size_t cand_begin = 0, cand_end = 0, next = 0;
    int applied = kNothingApplied;
    bool raise_tried = false;
    Span conflict;  // union of the failed children's explanations
    Span why_node;  // what the choice of children depends on (section, non-candidates, raise)
    Span why_node_extra;  // the valleys of the candidates left out by valleys_coverable()
  };

  // Conflict-directed backjumping. A failure explained by span E means: every state with the
  // same floors on the sections of E and the same unplaced buffers crossing them has no
  // placement. The child of the top frame failed with E: when the child's change (the placed
  // buffer's sections, or the raised section) misses E, the frame's own state fails for the same
  // reason and is popped without trying its other children; otherwise E joins its conflict.
  void child_failed(Span why) {
    while (!frames_.empty()) {
      Frame& fr = frames_.back();
      int a = fr.section, b = fr.section;
      if (fr.applied >= 0) {
        a = first_[fr.applied];
        b = last_[fr.applied];
      }
      if (why.meets(a, b)) {
        fr.conflict.add(why);
        return;
      }
      undo(fr);
      remember_dead(fr.hash, why, static_cast<int>(frames_.size()) - 1);
      cands_.resize(fr.cand_begin);
      frames_.pop_back();
    }
  }
  // The top frame has no children left: it fails with `why`.
  void pop_failed(Span why) {
    Frame& fr = frames_.back();
    undo(fr);
    remember_dead(fr.hash, why, static_cast<int>(frames_.size()) - 1);
    cands_.resize(fr.cand_begin);
    frames_.pop_back();
    child_failed(why);
  }

  // Why section k can't hold its unplaced bytes above `threshold` (= capacity - its unplaced
  // bytes): k itself, and for each unplaced buffer crossing k whose lowest offset exceeds the
  // threshold, the nearest of its sections whose floor alone (aligned) exceeds it. Buffers whose
  // lowest offset doesn't exceed it are skipped (the raise case: they are bounded by floor + gcd).
  Span explain(int k, std::uint64_t threshold) const {
    Span why;
    why.add(k);
    for (const int u : crossing_[k]) {
      if (placed_[u]) continue;
      const std::uint64_t al = buffers_[u].alignment;
      if (lowest_offset_[u] <= threshold) continue;
      // Any section of u already in the span whose floor is high enough will do.
      bool inside = false;
      for (int w = std::max(first_[u], why.lo); w <= std::min(last_[u], why.hi) && !inside; ++w) {
        inside = align_up(floor_[w], al) > threshold;
      }
      if (inside) continue;
      for (int d = 0;; ++d) {
        const int l = k - d, r = k + d;
        if (l < first_[u] && r > last_[u]) break;
        if (l >= first_[u] && align_up(floor_[l], al) > threshold) {
          why.add(l);
          break;
        }
        if (r <= last_[u] && align_up(floor_[r], al) > threshold) {
          why.add(r);
          break;
        }
      }
    }
    return why;
  }
  Span cover(int k) const {
    Span why;
    why.add(k);
    for (const int u : crossing_[k]) {
      if (placed_[u]) continue;
      why.add(first_[u]);
      why.add(last_[u]);
    }
    return why;
  }

  void setup(Profile profile) {
    const std::size_t n = buffers_.size();
    if (n == 0) return;
    std::vector<std::int64_t> times;
    times.reserve(2 * n);
    for (const auto& b : buffers_) {
      times.push_back(b.lower);
      times.push_back(b.upper);
    }
    std::sort(times.begin(), times.end());
    times.erase(std::unique(times.begin(), times.end()), times.end());
    const std::size_t sections = times.size() - 1;
    times_ = times;
    first_.resize(n);
    last_.resize(n);
    placed_.assign(n, false);
    offsets_.assign(n, 0);
    crossing_.assign(sections, {});
    gaps_.assign(sections, {});
    floor_.assign(sections, 0);
    remaining_.assign(sections, 0);
    unplaced_.assign(sections, 0);
    lowest_.assign(sections, kNone);
    highest_.assign(sections, 0);
    at_lowest_bytes_.assign(sections, 0);
    stairs_key_.assign(sections, 0);
    support_.assign(sections, kNone);
    visited_.assign(n, 0);
    lowest_offset_.assign(n, 0);
    at_floor_.assign(sections, 0);
    bridge_.assign(sections, 0);
    starts_.assign(sections, {});
    sums_key_.assign(sections, 0);
    sums_valid_.assign(sections, 0);
    placed_key_.assign(sections, 0);
    reach_.assign(sections + 1, 0);
    has_flat_.assign(sections, 0);
    back_.assign(sections + 1, 0);
    filtered_.assign(n, 0);
    valley_lo_.assign(n, 0);
    valley_hi_.assign(n, 0);
    gcd_ = 0;
    if (profile.times != nullptr) {
      // A section here is a union of the parent's sections: every buffer crossing it crosses all
      // of them, so it starts at their highest floor.
      const auto& pt = *profile.times;
      for (std::size_t k = 0; k < sections; ++k) {
        const auto p0 = std::lower_bound(pt.begin(), pt.end(), times[k]) - pt.begin();
        const auto p1 = std::lower_bound(pt.begin(), pt.end(), times[k + 1]) - pt.begin();
        for (auto p = p0; p < p1; ++p) floor_[k] = std::max(floor_[k], (*profile.floors)[static_cast<std::size_t>(p)]);
        gcd_ = std::gcd(gcd_, floor_[k]);
      }
    }
    salt_ = mix(buffers_.size());
    for (const auto& b : buffers_) {
      salt_ = mix(salt_ ^ static_cast<std::uint64_t>(b.lower));
      salt_ = mix(salt_ ^ static_cast<std::uint64_t>(b.upper));
      salt_ = mix(salt_ ^ b.size);
      salt_ = mix(salt_ ^ b.alignment);
    }
    for (const std::uint64_t f : floor_) salt_ = mix(salt_ ^ f);
    for (std::size_t k = 0; k < sections; ++k) hash_ ^= key_of_floor(k, floor_[k]);
    for (std::size_t i = 0; i < n; ++i) hash_ ^= key_of_buffer(i);  // the unplaced set
    // Candidate order, a portfolio across restarts (preorder()): longest lifetime, largest area
    // (lifetime x size) or largest size first. Each solves instances the others take millions of
    // nodes on (docs/allocation.md "A portfolio of preorders across restarts").
    std::vector<double> weight(n);
    for (std::size_t i = 0; i < n; ++i) {
      const double life = static_cast<double>(buffers_[i].upper - buffers_[i].lower);
      const double size = static_cast<double>(buffers_[i].size);
      weight[i] = preorder() == Preorder::Lifetime ? life : preorder() == Preorder::Area ? life * size : size;
    }
    std::vector<int> order(n);
    std::iota(order.begin(), order.end(), 0);
    // Remaining ties by a hash of the buffer's content: a fixed pseudo-random order that no input
    // order can change (buffers equal in content are interchangeable).
    std::vector<std::uint64_t> tie(n);
    for (std::size_t i = 0; i < n; ++i) {
      const auto& b = buffers_[i];
      tie[i] = mix(mix(mix(static_cast<std::uint64_t>(b.lower)) ^ static_cast<std::uint64_t>(b.upper)) ^ b.size) ^ b.alignment;
    }
    std::sort(order.begin(), order.end(), [&](int x, int y) {
      if (weight[x] != weight[y]) return weight[x] > weight[y];
      if (buffers_[x].size != buffers_[y].size) return buffers_[x].size > buffers_[y].size;
      if (tie[x] != tie[y]) return tie[x] < tie[y];
      return x < y;
    });
    for (const int i : order) {
      const auto& b = buffers_[i];
      first_[i] = static_cast<int>(std::lower_bound(times.begin(), times.end(), b.lower) - times.begin());
      last_[i] = static_cast<int>(std::lower_bound(times.begin(), times.end(), b.upper) - times.begin()) - 1;
      starts_[first_[i]].push_back(i);
      for (int k = first_[i]; k <= last_[i]; ++k) {
        crossing_[k].push_back(i);
        remaining_[k] += b.size;
        ++unplaced_[k];
      }
      gcd_ = std::gcd(gcd_, b.size);
      if (b.alignment > 1) gcd_ = std::gcd(gcd_, b.alignment);
    }
    words_ = static_cast<std::size_t>(std::min<std::uint64_t>(kMaxUnits, capacity_ / gcd_) / 64 + 1);
    words_ = std::min(words_, kWords);
    sums_.assign(sections * words_, 0);
  }

  // The restart's part of the portfolio (setup(), expand()): longest lifetime first with
  // run-filling candidates first; largest area first, as given; largest size first with
  // run-filling candidates first.
  enum class Preorder { Lifetime, Area, Size };
  Preorder preorder() const {
    if (!dead_.rules.portfolio) return Preorder::Lifetime;
    return static_cast<Preorder>(dead_.restart % 3);
  }
  bool fill_runs_first() const { return preorder() != Preorder::Area; }

  std::uint64_t lowest_offset(int b) const {
    std::uint64_t m = 0;
    for (int k = first_[b]; k <= last_[b]; ++k) m = std::max(m, floor_[k]);
    return align_up(m, buffers_[b].alignment);
  }

  void place(int b, std::uint64_t at) {
    const std::uint64_t size = buffers_[b].size;
    for (int k = first_[b]; k <= last_[b]; ++k) {
      set_floor(static_cast<std::size_t>(k), at + size);
      remaining_[k] -= size;
      --unplaced_[k];
      placed_key_[k] ^= key_of_buffer(static_cast<std::size_t>(b)).a;
    }
    placed_[b] = true;
    hash_ ^= key_of_buffer(static_cast<std::size_t>(b));
    offsets_[b] = at;
  }

  void undo(Frame& fr) {
    if (fr.applied >= 0) {
      const int b = fr.applied;
      const std::uint64_t size = buffers_[b].size;
      for (int k = first_[b]; k <= last_[b]; ++k) {
        set_floor(static_cast<std::size_t>(k), fr.floor);  // all were at the node's floor
        remaining_[k] += size;
        ++unplaced_[k];
        placed_key_[k] ^= key_of_buffer(static_cast<std::size_t>(b)).a;
      }
      placed_[b] = false;
      hash_ ^= key_of_buffer(static_cast<std::size_t>(b));
    } else if (fr.applied == kRaised) {
      set_floor(static_cast<std::size_t>(fr.section), fr.floor);
      pop_gap(fr.section);
    }
    fr.applied = kNothingApplied;
  }

  bool identical(int a, int b) const {
    const auto& x = buffers_[a];
    const auto& y = buffers_[b];
    return x.lower == y.lower && x.upper == y.upper && x.size == y.size && x.alignment == y.alignment;
  }

  // Look-ahead over every section: the lowest offset any of its unplaced buffers can take
  // (lowest_), how many of them can go right at its floor (at_floor_). False when some section
  // can't hold its unplaced bytes above that lowest offset.
  bool feasible_bound() {
    const std::size_t sections = floor_.size();
    std::fill(lowest_.begin(), lowest_.end(), kNone);
    std::fill(highest_.begin(), highest_.end(), 0);
    std::fill(at_floor_.begin(), at_floor_.end(), 0);
    std::fill(bridge_.begin(), bridge_.end(), 0);
    std::fill(has_flat_.begin(), has_flat_.end(), 0);
    ++stamp_;
    for (std::size_t i = 0; i < buffers_.size(); ++i) {
      if (placed_[i]) continue;
      const int b = static_cast<int>(i);
      const std::uint64_t o = lowest_offset(b);
      lowest_offset_[i] = o;
      int level = 0;
      for (int k = first_[b]; k <= last_[b]; ++k) {
        if (o < lowest_[k]) {
          lowest_[k] = o;
          at_lowest_bytes_[k] = buffers_[i].size;
        } else if (o == lowest_[k]) {
          at_lowest_bytes_[k] += buffers_[i].size;
        }
        highest_[k] = std::max(highest_[k], o);
        if (o == floor_[k]) ++at_floor_[k], ++level;
      }
      if (level == last_[b] - first_[b] + 1) {  // flat: can go at the floor of all its sections now
        for (int k = first_[b]; k <= last_[b]; ++k) has_flat_[k] = 1;
      }
      for (int k = first_[b]; k < last_[b]; ++k) ++bridge_[k];
    }
    bool ok = true;
    for (std::size_t k = 0; k < sections; ++k) {
      if (unplaced_[k] != 0 && exceeds(lowest_[k], remaining_[k], capacity_)) {
        const Span why = explain(static_cast<int>(k), capacity_ - remaining_[k]);
        if (ok || why.hi - why.lo < fail_.hi - fail_.lo) fail_ = why;
        ok = false;
      }
    }
    if (ok && dead_.rules.staircase) ok = stairs_fit();
    if (ok) ok = valleys_coverable();
    if (ok) ok = steps_fillable();
    return ok;
  }

  // Staircase bound: in section k, the unplaced buffers whose lowest offset is at least t all
  // lie in [t, capacity), so for every t their bytes must fit in capacity - t. The check above
  // is t = the lowest of those offsets; here every one of them is a t. Only sections where the
  // buffers at the lowest offset plus the slack can't fill up to the highest offset can fail it
  // (a t above lowest_[k] fails only when t - lowest_[k] exceeds the bytes below t plus the slack).
  bool stairs_fit() {
    const int sections = static_cast<int>(floor_.size());
    for (int k = 0; k < sections; ++k) {
      // slack: what the section may still waste (>= 0, checked by feasible_bound()).
      if (unplaced_[k] == 0) continue;
      const std::uint64_t slack = capacity_ - remaining_[k] - lowest_[k];
      if (highest_[k] - lowest_[k] <= at_lowest_bytes_[k] + slack) continue;
      // Those at the lowest offset only count for t = lowest_[k], checked already.
      // A section whose higher buffers and their offsets are the ones it last passed with
      // passes again (stairs_key_), without the sort.
      stairs_.clear();
      std::uint64_t higher = 0, key = 0;
      for (const int u : crossing_[k]) {
        if (placed_[u] || lowest_offset_[u] == lowest_[k]) continue;
        stairs_.emplace_back(lowest_offset_[u], buffers_[u].size);
        higher += buffers_[u].size;
        key += mix(lowest_offset_[u] ^ (static_cast<std::uint64_t>(u) << 40));
      }
      if (!exceeds(highest_[k], higher, capacity_) || key == stairs_key_[k]) continue;
      std::sort(stairs_.begin(), stairs_.end(), std::greater<>());
      std::uint64_t above = 0;
      for (std::size_t i = 0; i < stairs_.size(); ++i) {
        above += stairs_[i].second;
        const std::uint64_t t = stairs_[i].first;
        if (i + 1 < stairs_.size() && stairs_[i + 1].first == t) continue;  // all of level t first
        if (exceeds(t, above, capacity_)) {
          fail_ = explain(k, t - 1);
          return false;
        }
      }
      stairs_key_[k] = key;
    }
    return true;
  }

  // Forced levels. In a section k that can't waste anything (slack below gcd_), some unplaced
  // buffer sits at floor_[k]: one with lowest offset floor_[k]. Such a buffer u may still cross
  // sections j at a lower floor; it can only sit at floor_[k] once each of them is filled up to
  // floor_[k], and when j can't waste either, exactly: floor_[k] - floor_[j] must be a subset sum
  // of the sizes of the unplaced buffers crossing j. False (fail_ set) when that rules out every
  // candidate of some such section k.
  bool steps_fillable() {
    const int sections = static_cast<int>(floor_.size());
    for (int k = 0; k < sections; ++k) {
      if (unplaced_[k] == 0 || has_flat_[k] != 0 || !exceeds(floor_[k], gcd_, remaining_[k], capacity_)) continue;
      const std::uint64_t f = floor_[k];
      bool possible = false;
      Span witnesses;
      for (const int u : crossing_[k]) {
        if (placed_[u] || lowest_offset_[u] != f) continue;
        int blocked = -1;
        for (int j = first_[u]; j <= last_[u] && blocked < 0; ++j) {
          if (floor_[j] < f && !fillable(j, f - floor_[j])) blocked = j;
        }
        if (blocked < 0) {
          possible = true;
          break;
        }
        witnesses.add(blocked);
      }
      if (!possible) {
        Span why = explain(k, f);
        why.add(witnesses);
        fail_ = why;
        return false;
      }
    }
    return true;
  }
  // Whether `gap` can be the exact sum of sizes of some unplaced buffers crossing j; true when
  // j may waste space or the gap is too large to check (kMaxUnits units of gcd_).
  static constexpr std::uint64_t kMaxUnits = 4096;
  static constexpr std::size_t kWords = kMaxUnits / 64;
  bool fillable(int j, std::uint64_t gap) {
    if (!exceeds(floor_[j], gcd_, remaining_[j], capacity_)) return true;
    const std::uint64_t units = gap / gcd_;
    if (units >= kMaxUnits) return true;
    std::uint64_t* bits = sums_.data() + static_cast<std::size_t>(j) * words_;
    if (sums_valid_[j] == 0 || sums_key_[j] != placed_key_[j]) {  // recompute
      sums_valid_[j] = 1;
      sums_key_[j] = placed_key_[j];
      std::fill(bits, bits + words_, 0);
      bits[0] = 1;
      for (const int v : crossing_[j]) {
        if (placed_[v]) continue;
        const std::uint64_t sh = buffers_[v].size / gcd_;
        if (sh >= kMaxUnits) continue;
        const std::size_t q = sh / 64, r = sh % 64;
        for (std::size_t w = words_; w-- > q;) {
          std::uint64_t x = bits[w - q] << r;
          if (r != 0 && w > q) x |= bits[w - q - 1] >> (64 - r);
          bits[w] |= x;
        }
      }
    }
    return ((bits[units / 64] >> (units % 64)) & 1) != 0;
  }

  // Valley cover. A valley is a maximal run [r0, r1] of sections at one floor f whose neighbours
  // are higher or crossed by no unplaced buffer. Floors only rise, so a buffer that ever sits at
  // level f in the valley lies inside it and can sit at f already now (its lowest offset is f);
  // buffers sitting at f are pairwise disjoint in time. A section whose slack (capacity - floor -
  // unplaced bytes) is below gcd_ can't leave level f empty (every offset of a pushed-down
  // placement is a multiple of gcd_). False (fail_ = the valley and its two neighbours) when no
  // set of disjoint such lifetimes covers every such section of some valley: an interval DP.
  // Otherwise a backward DP marks the buffers in no such cover (filtered_): expand() makes them
  // no children, and they don't count in at_floor_ (fail first).
  bool valleys_coverable() {
    const int sections = static_cast<int>(floor_.size());
    const auto tight = [&](int k) { return exceeds(floor_[k], gcd_, remaining_[k], capacity_); };
    for (int r0 = 0; r0 < sections;) {
      if (unplaced_[r0] == 0) {
        ++r0;
        continue;
      }
      const std::uint64_t f = floor_[r0];
      int r1 = r0;
      bool any = tight(r0);
      while (r1 + 1 < sections && unplaced_[r1 + 1] != 0 && floor_[r1 + 1] == f) {
        ++r1;
        any = any || tight(r1);
      }
      const bool valley = (r0 == 0 || unplaced_[r0 - 1] == 0 || floor_[r0 - 1] > f) &&
                          (r1 + 1 == sections || unplaced_[r1 + 1] == 0 || floor_[r1 + 1] > f);
      if (any && valley) {
        // reach_[k]: sections r0..k-1 are covered by disjoint buffers at f or may stay empty.
        std::fill(reach_.begin() + r0, reach_.begin() + r1 + 2, 0);
        reach_[r0] = 1;
        for (int k = r0; k <= r1; ++k) {
          if (reach_[k] == 0) continue;
          if (!tight(k)) reach_[k + 1] = 1;
          for (const int u : starts_[k]) {
            if (placed_[u] || lowest_offset_[u] != f) continue;  // inside the valley when at f
            reach_[last_[u] + 1] = 1;
          }
        }
        if (reach_[r1 + 1] == 0) {
          Span why;
          why.add(std::max(r0 - 1, 0));
          why.add(std::min(r1 + 1, sections - 1));
          fail_ = why;
          return false;
        }
        // back_[k]: sections k..r1 can be handled. A buffer at f is in some cover iff the
        // sections before it and after it can be; the others are no candidates (filtered_).
        back_[r1 + 1] = 1;
        for (int k = r1; k >= r0; --k) {
          back_[k] = !tight(k) && back_[k + 1] != 0;
          for (const int u : starts_[k]) {
            if (placed_[u] || lowest_offset_[u] != f) continue;
            if (back_[last_[u] + 1] != 0) back_[k] = 1;
          }
        }
        for (int k = r0; k <= r1; ++k) {
          for (const int u : starts_[k]) {
            if (placed_[u] || lowest_offset_[u] != f) continue;
            if (reach_[k] != 0 && back_[last_[u] + 1] != 0) continue;
            filtered_[u] = stamp_;
            valley_lo_[u] = std::max(r0 - 1, 0);
            valley_hi_[u] = std::min(r1 + 1, sections - 1);
            for (int j = k; j <= last_[u]; ++j) --at_floor_[j];
          }
        }
      }
      r0 = r1 + 1;
    }
    return true;
  }

  // Pushes the node of the current state, or solves it when every buffer is placed or the
  // unplaced ones fall apart into independent groups.
  Expand expand() {
    Frame fr;
    fr.cand_begin = cands_.size();
    fr.next = fr.cand_begin;
    fr.cand_end = fr.cand_begin;
    bool alive = !known_dead() && feasible_bound();  // else fail_ is set
    // The section: lowest floor; among those, the fewest buffers that can go at the floor
    // (fail first), then leftmost.
    int s = -1;
    std::uint64_t f = kNone;
    int best_count = 0;
    for (std::size_t k = 0; k < floor_.size(); ++k) {
      if (unplaced_[k] == 0) continue;
      if (floor_[k] < f || (floor_[k] == f && at_floor_[k] < best_count)) {
        f = floor_[k];
        s = static_cast<int>(k);
        best_count = at_floor_[k];
      }
    }
    if (s < 0) return Expand::Complete;
    if (!alive) return Expand::Dead;
    fr.section = s;
    fr.floor = f;
    if (const auto outcome = split()) {  // sets fail_ when Exhausted
      if (*outcome == SearchOutcome::Found) return Expand::Complete;
      if (*outcome == SearchOutcome::Timeout) return Expand::Timeout;
      remember_dead(hash_, fail_, static_cast<int>(frames_.size()));
      return Expand::Dead;
    }
    {
      supports_outside(s);
      for (const int b : crossing_[s]) {
        if (placed_[b]) continue;
        const std::uint64_t o = lowest_offset_[b];
        if (o == f && filtered_[b] == stamp_) {  // in no cover of the valley
          fr.why_node_extra.add(valley_lo_[b]);
          fr.why_node_extra.add(valley_hi_[b]);
          fr.raise_to = std::min(fr.raise_to, supported_height(b, f));
        } else if (o == f) {
          bool dup = false;
          for (std::size_t c = fr.cand_begin; c < cands_.size() && !dup; ++c) dup = identical(cands_[c], b);
          if (!dup) cands_.push_back(b);
          fr.raise_to = std::min(fr.raise_to, supported_height(b, f));
        } else {
          fr.raise_to = std::min(fr.raise_to, o);
        }
      }
    }
    fr.cand_end = cands_.size();
    // What the children depend on: when the raise is hopeless, s and a witness that each
    // non-candidate can't go at or below capacity - remaining (>= f); otherwise every lowest
    // offset in s (cover).
    if (fr.raise_to == kNone || exceeds(fr.raise_to, remaining_[s], capacity_)) {
      fr.why_node = explain(s, capacity_ - remaining_[s]);
    } else {
      fr.why_node = cover(s);
    }
    fr.why_node.add(support_witnesses(s, f));
    fr.why_node.add(fr.why_node_extra);
    if (fr.cand_end - fr.cand_begin > 1 && fill_runs_first()) {
      // First the candidates that fill the whole run of sections at this floor around s: they
      // leave no gap at this level in time for others to fill exactly. Then those whose top
      // meets the floor of a section just outside their lifetime: they flatten the skyline
      // (a step is closed instead of a new one made).
      std::size_t r0 = static_cast<std::size_t>(s), r1 = static_cast<std::size_t>(s);
      while (r0 > 0 && unplaced_[r0 - 1] != 0 && floor_[r0 - 1] == f) --r0;
      while (r1 + 1 < floor_.size() && unplaced_[r1 + 1] != 0 && floor_[r1 + 1] == f) ++r1;
      const auto begin = cands_.begin() + static_cast<std::ptrdiff_t>(fr.cand_begin);
      std::stable_partition(begin, cands_.end(), [&](int b) {
        const std::uint64_t top = add_sat(f, buffers_[b].size);
        return (first_[b] > 0 && floor_[first_[b] - 1] == top) ||
               (static_cast<std::size_t>(last_[b]) + 1 < floor_.size() && floor_[last_[b] + 1] == top);
      });
      std::stable_partition(begin, cands_.end(), [&](int b) {
        return static_cast<std::size_t>(first_[b]) == r0 && static_cast<std::size_t>(last_[b]) == r1;
      });
    }
    fr.hash = hash_;
    frames_.push_back(fr);
    return Expand::Open;
  }

  // The raise child ("nothing sits at f in s") needs the lowest height the lowest buffer of s can
  // then take. Take any placement extending the state and push its unplaced buffers down as far
  // as they go (each stays at or above its lowest offset): every one then sits at its lowest
  // offset or, aligned, on the top of a buffer it overlaps in time. A placed buffer's top is at
  // most the floor of each of its sections, so for a buffer b whose lowest offset is f the
  // support is an unplaced c, which does not cross s (it would be lower in s than b) and whose
  // top is at least lowest_offset(c) + size(c); b's offset is above f, a multiple of the gcd
  // like every offset, hence at least f + gcd. docs/allocation.md "Raising to a supported height".
  // supports_outside(s): per section j, the lowest top an unplaced buffer crossing j and not s
  // can have (kNone: none).
  void supports_outside(int s) {
    if (!dead_.rules.supported_raise) return;
    std::fill(support_.begin(), support_.end(), kNone);
    for (std::size_t i = 0; i < buffers_.size(); ++i) {
      const int c = static_cast<int>(i);
      if (placed_[i] || (first_[c] <= s && s <= last_[c])) continue;
      const std::uint64_t top = add_sat(lowest_offset_[i], buffers_[i].size);
      for (int j = first_[c]; j <= last_[c]; ++j) support_[j] = std::min(support_[j], top);
    }
  }
  // The lowest offset b can take above f when it is the lowest buffer of s: on a support.
  // kNone when nothing can hold it up there (then b is at f or not the lowest).
  std::uint64_t supported_height(int b, std::uint64_t f) const {
    if (!dead_.rules.supported_raise) return align_up(add_sat(f, gcd_), buffers_[b].alignment);
    std::uint64_t lowest_top = kNone;
    for (int j = first_[b]; j <= last_[b]; ++j) lowest_top = std::min(lowest_top, support_[j]);
    if (lowest_top == kNone) return kNone;
    return align_up(std::max(add_sat(f, gcd_), lowest_top), buffers_[b].alignment);
  }

  // What a supported height depends on, where it is above f + gcd (the height that needs no
  // support): b's sections (which buffers cross them) and, for each unplaced c there that does
  // not cross s, a section whose floor alone gives c its lowest offset. A state that agrees on
  // these has every such c at least as high, so its raise is at least as high.
  Span support_witnesses(int s, std::uint64_t f) {
    Span why;
    ++visit_stamp_;
    for (const int b : crossing_[s]) {
      if (placed_[b] || lowest_offset_[b] != f) continue;
      if (supported_height(b, f) <= align_up(add_sat(f, gcd_), buffers_[b].alignment)) continue;
      why.add(first_[b]);
      why.add(last_[b]);
      for (int j = first_[b]; j <= last_[b]; ++j) {
        for (const int c : crossing_[j]) {
          if (placed_[c] || visited_[c] == visit_stamp_ || (first_[c] <= s && s <= last_[c])) continue;
          visited_[c] = visit_stamp_;
          int w = first_[c];
          for (int k = first_[c]; k <= last_[c]; ++k) {
            if (floor_[k] > floor_[w]) w = k;
          }
          why.add(w);
        }
      }
    }
    return why;
  }

  // Decomposition: when no unplaced buffer crosses some boundary between two sections that both
  // still have unplaced buffers, the groups on either side are independent (disjoint sections,
  // disjoint floors) and are solved one after the other by sub-searches, so a failure in one
  // never makes the search revisit choices in another. nullopt when the unplaced buffers form
  // one group (bridge_ from feasible_bound()).
  std::optional<SearchOutcome> split() {
    std::vector<std::pair<std::size_t, std::size_t>> groups;  // section ranges [from, to]
    for (std::size_t k = 0; k < floor_.size(); ++k) {
      if (unplaced_[k] == 0) continue;
      if (groups.empty() || bridge_[groups.back().second] == 0) groups.emplace_back(k, k);
      groups.back().second = k;
    }
    if (groups.size() < 2) return std::nullopt;
    // Smallest group first: the likeliest to fail fast and the cheapest to redo nothing for.
    std::vector<std::vector<int>> members(groups.size());
    std::vector<std::size_t> group_order(groups.size());
    for (std::size_t i = 0; i < buffers_.size(); ++i) {
      if (placed_[i]) continue;
      const auto g = std::upper_bound(groups.begin(), groups.end(), static_cast<std::size_t>(first_[i]),
                                      [](std::size_t k, const auto& range) { return k < range.first; }) -
                     groups.begin() - 1;
      members[static_cast<std::size_t>(g)].push_back(static_cast<int>(i));
    }
    std::iota(group_order.begin(), group_order.end(), std::size_t{0});
    std::sort(group_order.begin(), group_order.end(),
              [&](std::size_t x, std::size_t y) { return members[x].size() < members[y].size(); });
    for (const std::size_t g : group_order) {
      const auto& group = members[g];
      std::vector<SearchBuffer> sub;
      sub.reserve(group.size());
      for (const int b : group) sub.push_back(buffers_[b]);
      Search child(std::move(sub), capacity_, deadline_, dead_, Profile{&times_, &floor_});
      const SearchOutcome outcome = child.run();
      if (outcome == SearchOutcome::Exhausted) {
        fail_ = Span{};
        fail_.add(static_cast<int>(groups[g].first));
        fail_.add(static_cast<int>(groups[g].second));
      }
      if (outcome != SearchOutcome::Found) return outcome;
      for (std::size_t j = 0; j < group.size(); ++j) offsets_[group[j]] = child.offsets()[j];
    }
    return SearchOutcome::Found;
  }

  // Transposition table of dead states. The future of a node depends only on the floors and on
  // which buffers are still unplaced, and different orders of placement reach the same ones:
  // a state whose subtree was exhausted is remembered (two 64-bit hashes, updated incrementally;
  // a lossy direct-mapped table, so memory stays bounded).
  static std::uint64_t mix(std::uint64_t x) {
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
  }
  Hash key_of_floor(std::size_t section, std::uint64_t floor) const {
    const std::uint64_t x = mix(section * 0x100000001b3ULL ^ mix(floor) ^ mix(salt_ << 1));
    return {x, mix(x ^ 0x5bd1e9955bd1e995ULL)};
  }
  Hash key_of_buffer(std::size_t b) const {
    const std::uint64_t x = mix((0xa0761d6478bd642fULL + b) ^ mix((salt_ << 1) | 1));
    return {x, mix(x + 0xe7037ed1a0b428dbULL)};
  }
  void set_floor(std::size_t k, std::uint64_t value) {
    hash_ ^= key_of_floor(k, floor_[k]);
    floor_[k] = value;
    hash_ ^= key_of_floor(k, value);
  }
  // A state is remembered by its floors and unplaced buffers, and also by its gaps when its
  // failure depended on one it already had (a gap of a frame above `depth`, the state's own).
  // A failure that only used gaps made below the state recurs from any state with the same
  // floors and unplaced buffers: the same path makes the same gaps. A hit on an entry keyed by
  // gaps depends on all of them.
  bool known_dead() {
    if (probe_dead(hash_)) return true;
    Hash with_gaps = hash_;
    with_gaps ^= gap_hash_;
    if (gap_hash_.a == 0 || !probe_dead(with_gaps)) return false;
    fail_.gaps_from = 0;
    return true;
  }
  bool probe_dead(const Hash& h) {
    const DeadEntry& e = dead_.slots[h.a & (dead_.slots.size() - 1)];
    if (e.hash.a != h.a || e.hash.b != h.b) return false;
    fail_ = Span{e.lo, e.hi};
    return true;
  }
  void remember_dead(Hash h, const Span& why, int depth) {
    if (why.gaps_from < depth) h ^= gap_hash_;
    dead_.slots[h.a & (dead_.slots.size() - 1)] = {h, why.lo, why.hi};
  }

  // Gaps: the empty space below the floors. A buffer is only ever placed at the floor of all its
  // sections, so below a floor there are placed buffers and the intervals [f, raised) that raises
  // declared empty, kept per section in increasing order (a stack, as raises are undone in
  // reverse) with the depth of the frame that made them.
  struct Gap {
    std::uint64_t lo = 0, hi = 0;
    int depth = 0;
  };
  Hash key_of_gap(int section, const Gap& g) const {
    const std::uint64_t x = mix(mix(static_cast<std::uint64_t>(section) ^ mix(g.lo) ^ (salt_ << 2)) ^ g.hi);
    return {x, mix(x ^ 0x2545f4914f6cdd1dULL)};
  }
  void push_gap(int section, std::uint64_t lo, std::uint64_t hi, int depth) {
    const Gap g{lo, hi, depth};
    gaps_[section].push_back(g);
    gap_hash_ ^= key_of_gap(section, g);
  }
  void pop_gap(int section) {
    gap_hash_ ^= key_of_gap(section, gaps_[section].back());
    gaps_[section].pop_back();
  }

  // Dominance (docs/allocation.md "Dominance"): after section s was raised, a state where some
  // unplaced buffer b crossing s fits wholly inside the gaps of all its sections is dead. Any
  // placement extending the state has b above those gaps, so b could move down into them; the
  // search only needs to find a placement where no buffer can (one of least total offset), and
  // such placements don't extend this state. fail_: b's sections, depending on the gaps used.
  bool dominated(int s) {
    if (!dead_.rules.dominance) return false;
    merged_gaps(s, own_);
    std::uint64_t widest = 0;
    for (const Gap& g : own_) widest = std::max(widest, g.hi - g.lo);
    for (const int b : crossing_[s]) {
      const std::uint64_t size = buffers_[b].size;
      if (placed_[b] || size > widest) continue;
      bool everywhere = true;  // every section of b has a gap
      for (int j = first_[b]; j <= last_[b] && everywhere; ++j) everywhere = !gaps_[j].empty();
      if (!everywhere) continue;
      free_ = own_;
      for (int j = first_[b]; j <= last_[b] && !free_.empty(); ++j) {
        if (j == s) continue;
        merged_gaps(j, other_);
        intersect(free_, other_, size);
      }
      for (const Gap& g : free_) {
        if (exceeds(align_up(g.lo, buffers_[b].alignment), size, g.hi)) continue;
        fail_ = Span{};
        fail_.add(first_[b]);
        fail_.add(last_[b]);
        fail_.gaps_from = g.depth;
        return true;
      }
    }
    return false;
  }
  // The gaps of section j with touching ones joined (depth: the shallowest of them).
  void merged_gaps(int j, std::vector<Gap>& out) const {
    out.clear();
    for (const Gap& g : gaps_[j]) {
      if (!out.empty() && out.back().hi == g.lo) {
        out.back().hi = g.hi;
        out.back().depth = std::min(out.back().depth, g.depth);
      } else {
        out.push_back(g);
      }
    }
  }
  // a := the parts of a inside b at least `size` long; both sorted and disjoint.
  void intersect(std::vector<Gap>& a, const std::vector<Gap>& b, std::uint64_t size) {
    meet_.clear();
    std::size_t i = 0, k = 0;
    while (i < a.size() && k < b.size()) {
      const std::uint64_t lo = std::max(a[i].lo, b[k].lo), hi = std::min(a[i].hi, b[k].hi);
      if (!exceeds(lo, size, hi)) meet_.push_back({lo, hi, std::min(a[i].depth, b[k].depth)});
      if (a[i].hi < b[k].hi) ++i; else ++k;
    }
    a.swap(meet_);
  }

  std::vector<SearchBuffer> buffers_;
  std::uint64_t capacity_;
  std::chrono::steady_clock::time_point deadline_;
  DeadTable& dead_;
  std::uint64_t salt_ = 0;
  std::uint64_t gcd_ = 0;
  std::vector<std::int64_t> times_;
  std::vector<int> first_, last_;
  std::vector<bool> placed_;
  std::vector<std::uint64_t> offsets_;
  std::vector<std::vector<int>> crossing_;
  std::vector<std::vector<Gap>> gaps_;  // per section, push_gap()
  std::vector<Gap> own_, free_, other_, meet_;  // dominated()'s scratch
  Hash gap_hash_;
  std::vector<std::uint64_t> floor_, remaining_, lowest_, highest_, at_lowest_bytes_, lowest_offset_;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> stairs_;  // stairs_fit(): (lowest offset, size)
  std::vector<std::uint64_t> stairs_key_;  // per section: the higher buffers it last passed with
  std::vector<std::uint64_t> support_;  // supports_outside()
  std::vector<std::uint64_t> visited_;  // == visit_stamp_: seen by support_witnesses()
  std::uint64_t visit_stamp_ = 0;
  std::vector<int> unplaced_, at_floor_, bridge_;
  std::vector<std::vector<int>> starts_;  // buffers by first section
  std::vector<char> reach_, back_, has_flat_;
  std::vector<std::uint64_t> filtered_;  // == stamp_: in no cover of its valley (this node)
  std::vector<int> valley_lo_, valley_hi_;
  std::uint64_t stamp_ = 0;
  // fillable(): subset sums per section, valid while the hash of the buffers placed across the
  // section (placed_key_) stays the one they were computed for (sums_key_).
  std::vector<std::uint64_t> sums_, sums_key_, placed_key_;
  std::vector<char> sums_valid_;
  std::size_t words_ = 0;
  Hash hash_;
  std::vector<Frame> frames_;
  Span fail_;  // why the last dead state failed
  std::vector<int> cands_;
};

}  // namespace

SearchResult search_placement(std::span<const SearchBuffer> buffers, std::uint64_t capacity,
                              std::chrono::steady_clock::time_point deadline, SearchRules rules,
                              const StopToken& stop) {
  // Restarts: heavy-tailed search times on feasible instances are cut short by restarting with
  // the other candidate order of the portfolio and a doubled node budget (the dead states stay
  // known, so little work is lost and a restart that exhausts without hitting its budget is
  // still a proof).
  DeadTable dead;
  dead.rules = rules;
  dead.stop = &stop;
  SearchResult result;
  std::uint64_t budget = 2000;
  const std::vector<SearchBuffer> all(buffers.begin(), buffers.end());
  for (;; ++dead.restart, budget *= 2) {
    dead.node_limit = dead.nodes + budget;
    Search search(all, capacity, deadline, dead);
    result.outcome = search.run();
    result.nodes = dead.nodes;
    if (result.outcome == SearchOutcome::Found) result.offsets = search.offsets();
    if (result.outcome != SearchOutcome::Timeout || std::chrono::steady_clock::now() > deadline) break;
  }
  return result;
}

}  // namespace tpuemu::plan::detail
