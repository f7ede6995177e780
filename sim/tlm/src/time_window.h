// SPDX-License-Identifier: Apache-2.0
// The recent commands of one kind on a channel (ACTs, RD/WRs), sorted by time, as the timing
// model searches them: insertion anywhere (a later request may fill an earlier gap), lookups near
// the newest end, and the oldest dropped once no new command can be constrained by them. Dropping
// only moves a head index, and the storage is compacted now and then, so neither allocates nor
// shifts elements per request in the steady state.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace tpuemu::tlm::detail {

template <typename T>  // T has a std::uint64_t member `at`
class TimeWindow {
 public:
  using iterator = typename std::vector<T>::iterator;

  iterator begin() { return items_.begin() + static_cast<std::ptrdiff_t>(head_); }
  iterator end() { return items_.end(); }
  bool empty() const { return head_ == items_.size(); }
  std::size_t size() const { return items_.size() - head_; }
  const T& front() const { return items_[head_]; }
  const T& back() const { return items_.back(); }
  T& operator[](std::size_t i) { return items_[head_ + i]; }

  // The first element with at >= v. Most lookups are for times at or near the newest element
  // (streams append, new commands go after the queued ones), so those are answered first.
  iterator lower_bound(std::uint64_t v) {
    if (empty() || items_.back().at < v) return end();
    // Usually only the newest few are at or past v: walk back over them.
    std::size_t i = items_.size() - 1;
    for (int step = 0; step < kWalk && i > head_; ++step, --i) {
      if (items_[i - 1].at < v) return items_.begin() + static_cast<std::ptrdiff_t>(i);
    }
    if (i == head_) return begin();
    // Otherwise branch-free halving (conditional moves): the times searched for are unpredictable, and
    // mispredicted branches of std::lower_bound cost more than the few extra compares here.
    std::size_t first = head_, n = items_.size() - head_;
    while (n > 1) {
      const std::size_t half = n / 2;
      first = items_[first + half - 1].at < v ? first + half : first;
      n -= half;
    }
    first += items_[first].at < v ? 1 : 0;
    return items_.begin() + static_cast<std::ptrdiff_t>(first);
  }
  // Inserted before the elements of the same time, as std::lower_bound places it.
  void insert(const T& item) { items_.insert(lower_bound(item.at), item); }
  // Inserted at index i (from the oldest), where the caller found item.at belongs.
  void insert_at(std::size_t i, const T& item) {
    if (head_ + i == items_.size()) {
      items_.push_back(item);  // the newest: most insertions
    } else {
      items_.insert(items_.begin() + static_cast<std::ptrdiff_t>(head_ + i), item);
    }
  }

  // Drops the oldest elements with at + reach < floor (a prefix: the elements are sorted).
  void drop_before(std::uint64_t floor, std::uint64_t reach) {
    while (head_ < items_.size() && items_[head_].at + reach < floor) ++head_;
    // Compacted once the dead prefix is as long as the live part: amortised O(1) per element.
    if (head_ >= kCompactAt && head_ * 2 >= items_.size()) {
      items_.erase(items_.begin(), items_.begin() + static_cast<std::ptrdiff_t>(head_));
      head_ = 0;
    }
  }

 private:
  static constexpr std::size_t kCompactAt = 64;
  static constexpr int kWalk = 4;
  std::vector<T> items_;
  std::size_t head_ = 0;
};

}  // namespace tpuemu::tlm::detail
