// SPDX-License-Identifier: Apache-2.0
// A multiset of future cycles with the three operations the beat bridge needs for its limits
// (held beats, burst ids in use): add one, drop all at or before a cycle, and the earliest left.
// Cycles within kWheel of the oldest one still counted sit in a wheel of per-cycle counts, so
// adding and dropping cost O(1) amortised (a heap of ~256 entries cost most of a beat's time);
// the rare cycle beyond the wheel, or one already behind it, goes to a small heap.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <queue>
#include <vector>

namespace tpuemu::tlm::detail {

class CycleCounts {
 public:
  void add(std::uint64_t c) {
    if (c >= base_ && c - base_ < kWheel) {
      ++wheel_[c % kWheel];
      ++in_wheel_;
    } else {
      far_.push(c);
    }
  }

  // Drops every cycle <= at.
  void drop_through(std::uint64_t at) {
    if (at >= base_) {
      if (in_wheel_ != 0) {
        const std::uint64_t n = std::min<std::uint64_t>(at - base_ + 1, kWheel);
        for (std::uint64_t i = 0; i < n && in_wheel_ != 0; ++i) {
          std::uint32_t& slot = wheel_[(base_ + i) % kWheel];
          in_wheel_ -= slot;
          slot = 0;
        }
      }
      base_ = at + 1;  // an empty wheel has nothing to clear: it just moves on
    }
    while (!far_.empty() && far_.top() <= at) far_.pop();
  }

  std::size_t size() const { return in_wheel_ + far_.size(); }

  // The earliest cycle counted (size() > 0).
  std::uint64_t earliest() const {
    std::uint64_t best = far_.empty() ? ~std::uint64_t{0} : far_.top();
    if (in_wheel_ != 0) {
      for (std::uint64_t c = base_;; ++c) {
        if (wheel_[c % kWheel] != 0) return std::min(best, c);
      }
    }
    return best;
  }

 private:
  static constexpr std::uint64_t kWheel = 4096;
  std::vector<std::uint32_t> wheel_ = std::vector<std::uint32_t>(kWheel, 0);
  std::size_t in_wheel_ = 0;
  std::uint64_t base_ = 0;  // the wheel counts cycles [base_, base_ + kWheel)
  std::priority_queue<std::uint64_t, std::vector<std::uint64_t>, std::greater<>> far_;
};

}  // namespace tpuemu::tlm::detail
