// SPDX-License-Identifier: Apache-2.0
// A multiset of future cycles with the three operations the beat bridge needs for its limits
// (held beats, burst ids in use): add one, drop all at or before a cycle, and the earliest left.
// Cycles within kWheel of the oldest one still counted sit in a wheel of per-cycle counts, so
// adding and dropping cost O(1) amortised (a heap of ~256 entries cost most of a beat's time);
// the rare cycle beyond the wheel, or one already behind it, goes to a small heap.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <queue>
#include <vector>

namespace tpuemu::tlm::detail {

// `Kinds` such multisets that are always dropped through the same cycle (the bridge's held
// beats and its burst ids in use) share one wheel, so that one pass drops them all.
template <std::size_t Kinds>
class CycleCounts {
 public:
  void add(std::size_t kind, std::uint64_t c) {
    if (c >= base_ && c - base_ < kWheel) {
      ++wheel_[c % kWheel][kind];
      ++in_wheel_[kind];
      ++in_wheel_all_;
    } else {
      far_[kind].push(c);
      ++in_far_;
    }
  }

  // Drops every cycle <= at.
  void drop_through(std::uint64_t at) {
    if (at < base_) {
      drop_far_through(at);
      return;
    }
    if (in_wheel_all_ != 0) {
      const std::uint64_t n = std::min<std::uint64_t>(at - base_ + 1, kWheel);
      for (std::uint64_t i = 0; i < n && in_wheel_all_ != 0; ++i) {
        std::array<std::uint32_t, Kinds>& slot = wheel_[(base_ + i) % kWheel];
        for (std::size_t k = 0; k < Kinds; ++k) {
          in_wheel_[k] -= slot[k];
          in_wheel_all_ -= slot[k];
          slot[k] = 0;
        }
      }
    }
    base_ = at + 1;  // an empty wheel has nothing to clear: it just moves on
    drop_far_through(at);
  }

  std::size_t size(std::size_t kind) const { return in_wheel_[kind] + far_[kind].size(); }

  // The earliest cycle counted of a kind (size(kind) > 0).
  std::uint64_t earliest(std::size_t kind) const {
    std::uint64_t best = far_[kind].empty() ? ~std::uint64_t{0} : far_[kind].top();
    if (in_wheel_[kind] != 0) {
      for (std::uint64_t c = base_;; ++c) {
        if (wheel_[c % kWheel][kind] != 0) return std::min(best, c);
      }
    }
    return best;
  }

 private:
  void drop_far_through(std::uint64_t at) {
    if (in_far_ == 0) return;
    for (auto& far : far_) {
      while (!far.empty() && far.top() <= at) {
        far.pop();
        --in_far_;
      }
    }
  }

  static constexpr std::uint64_t kWheel = 4096;
  std::vector<std::array<std::uint32_t, Kinds>> wheel_ =
      std::vector<std::array<std::uint32_t, Kinds>>(kWheel, std::array<std::uint32_t, Kinds>{});
  std::array<std::size_t, Kinds> in_wheel_{};
  std::size_t in_wheel_all_ = 0;
  std::size_t in_far_ = 0;  // in all of far_
  std::uint64_t base_ = 0;  // the wheel counts cycles [base_, base_ + kWheel)
  std::array<std::priority_queue<std::uint64_t, std::vector<std::uint64_t>, std::greater<>>, Kinds> far_;
};

// A multiset of cycles kept sorted, for the few dozen cycles at which a queue's slots free: the
// earliest is taken and dropped, and new ones come mostly at or after the latest (columns are
// placed behind the queued ones), so they are appended. A heap sifted some 70 instructions a request.
class SortedCycles {
 public:
  bool empty() const { return head_ == items_.size(); }
  std::size_t size() const { return items_.size() - head_; }
  std::uint64_t earliest() const { return items_[head_]; }
  void drop_earliest() {
    ++head_;
    // Compacted once the dead prefix is as long as the live part: amortised O(1) per element.
    if (head_ >= kCompactAt && head_ * 2 >= items_.size()) {
      items_.erase(items_.begin(), items_.begin() + static_cast<std::ptrdiff_t>(head_));
      head_ = 0;
    }
  }
  void add(std::uint64_t c) {
    if (empty() || c >= items_.back()) {
      items_.push_back(c);
    } else {
      items_.insert(std::upper_bound(items_.begin() + static_cast<std::ptrdiff_t>(head_), items_.end(), c), c);
    }
  }

 private:
  static constexpr std::size_t kCompactAt = 64;
  std::vector<std::uint64_t> items_;
  std::size_t head_ = 0;
};

}  // namespace tpuemu::tlm::detail
