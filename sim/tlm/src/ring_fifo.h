// SPDX-License-Identifier: Apache-2.0
// rtl/common/sync_fifo.sv in C++: a ring whose storage is never cleared, so the head of an empty
// FIFO reads what the RTL's would (the slot after the last pop), e.g. HEAD_WAIT of an empty queue.
// Pushes and pops of one cycle are applied together at the clock edge (commit()).
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <vector>

namespace tpuemu::tlm {

template <typename T>
class RingFifo {
 public:
  explicit RingFifo(std::size_t depth = 1) : slots_(depth) {}
  std::size_t depth() const { return slots_.size(); }
  std::size_t count() const { return count_; }
  bool empty() const { return count_ == 0; }
  bool full() const { return count_ == slots_.size(); }
  const T& head() const { return slots_[rd_]; }
  T& head() { return slots_[rd_]; }
  // The slot the next push writes (fill it, then push()).
  T& tail() { return slots_[wr_]; }
  // Both take effect at once, as at the RTL's clock edge: a push into a full FIFO that pops in the
  // same cycle is legal.
  void update(bool push, bool pop) {
    // A compare, not a modulo: several FIFOs move every cycle, and a division costs tens of cycles.
    if (push && ++wr_ == slots_.size()) wr_ = 0;
    if (pop && ++rd_ == slots_.size()) rd_ = 0;
    count_ = count_ + (push ? 1 : 0) - (pop ? 1 : 0);
  }
  void clear() { rd_ = wr_ = count_ = 0; }

 private:
  std::vector<T> slots_;
  std::size_t rd_ = 0, wr_ = 0, count_ = 0;
};

}  // namespace tpuemu::tlm
