// SPDX-License-Identifier: Apache-2.0
#include "memory_model.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

namespace tpuemu::sim {

MemoryModel::MemoryModel(const MemoryModelConfig& config, std::uint32_t beat_bytes)
    : config_(config), beat_bytes_(beat_bytes), rng_(config.seed) {
  if (beat_bytes_ > kMaxBeat) {
    throw std::invalid_argument(fmt::format("memory model: beats of {} bytes exceed {}", beat_bytes_, kMaxBeat));
  }
  if (config_.bytes_per_cycle == 0 || config_.bytes_per_cycle > beat_bytes_) {
    throw std::invalid_argument(fmt::format(
        "memory model: bytes_per_cycle {} must be in [1, {}] (one beat per cycle)",
        config_.bytes_per_cycle, beat_bytes_));
  }
  if (config_.capacity_bytes == 0 || config_.capacity_bytes > (std::uint64_t{1} << 32)) {
    throw std::invalid_argument(fmt::format(
        "memory model: capacity {} must be in [1, 4 GiB] (32-bit addresses)", config_.capacity_bytes));
  }
  pages_.resize((config_.capacity_bytes + (std::uint64_t{1} << kPageBits) - 1) >> kPageBits);
  tokens_ = beat_bytes_;
}

void MemoryModel::check_range(std::uint64_t addr, std::uint64_t len, const char* what) const {
  if (addr > config_.capacity_bytes || len > config_.capacity_bytes - addr) {
    throw std::out_of_range(fmt::format("memory: {} of {} bytes at 0x{:x} is beyond the capacity 0x{:x}",
                                        what, len, addr, config_.capacity_bytes));
  }
}

std::uint8_t* MemoryModel::byte_at(std::uint64_t addr) {
  auto& page = pages_[addr >> kPageBits];
  if (!page) page = std::make_unique<Page>();
  return page->data() + (addr & ((std::uint64_t{1} << kPageBits) - 1));
}

void MemoryModel::backdoor_write(std::uint64_t addr, std::span<const std::uint8_t> data) {
  check_range(addr, data.size(), "backdoor write");
  for (std::size_t done = 0; done < data.size();) {
    const std::uint64_t a = addr + done;
    const std::size_t in_page = std::min<std::size_t>(
        data.size() - done, (std::uint64_t{1} << kPageBits) - (a & ((std::uint64_t{1} << kPageBits) - 1)));
    std::memcpy(byte_at(a), data.data() + done, in_page);
    done += in_page;
  }
}

void MemoryModel::backdoor_read(std::uint64_t addr, std::span<std::uint8_t> data) {
  check_range(addr, data.size(), "backdoor read");
  for (std::size_t done = 0; done < data.size();) {
    const std::uint64_t a = addr + done;
    const std::size_t in_page = std::min<std::size_t>(
        data.size() - done, (std::uint64_t{1} << kPageBits) - (a & ((std::uint64_t{1} << kPageBits) - 1)));
    const auto& page = pages_[a >> kPageBits];
    if (page) std::memcpy(data.data() + done, byte_at(a), in_page);
    else std::memset(data.data() + done, 0, in_page);
    done += in_page;
  }
}

void MemoryModel::accept(std::uint64_t cycle, bool write, std::uint64_t addr,
                         std::span<const std::uint8_t> wdata) {
  tokens_ -= beat_bytes_;
  const bool in_range = addr + beat_bytes_ <= config_.capacity_bytes;
  // Reads past the end return zeros: instruction fetch prefetches up to 256 bytes beyond END,
  // so a program ending near the top of HBM is legal. A write there is a fault.
  if (!in_range && write && !fault_) {
    fault_ = fmt::format("memory: core {} at 0x{:x} (cycle {}) is beyond the HBM capacity 0x{:x}",
                         write ? "write" : "read", addr, cycle, config_.capacity_bytes);
  }
  // Responses leave one per cycle, in order, no earlier than the latency allows.
  if (write) {
    if (in_range) backdoor_write(addr, wdata);
    last_ack_due_ = std::max(cycle + config_.latency_cycles, last_ack_due_ + 1);
    acks_.push_back(last_ack_due_);
  } else {
    PendingRead& r = reads_.emplace_back();
    r.due = std::max(cycle + config_.latency_cycles, last_read_due_ + 1);
    if (in_range) backdoor_read(addr, std::span(r.data.data(), beat_bytes_));
    last_read_due_ = r.due;
  }
}

void MemoryModel::end_cycle(std::uint64_t /*next_cycle*/, bool /*wrote*/) {
  tokens_ = std::min<std::uint64_t>(tokens_ + config_.bytes_per_cycle, 2ull * beat_bytes_);
  ready_ = tokens_ >= beat_bytes_;
  if (ready_ && config_.backpressure_permille != 0) {
    ready_ = (rng_() % 1000) >= config_.backpressure_permille;
  }
}

const std::uint8_t* MemoryModel::read_response(std::uint64_t cycle) {
  if (reads_.empty() || reads_.front().due > cycle) return nullptr;
  current_read_ = reads_.front().data;
  reads_.pop_front();
  return current_read_.data();
}

bool MemoryModel::write_ack(std::uint64_t cycle) {
  if (acks_.empty() || acks_.front() > cycle) return false;
  acks_.pop_front();
  return true;
}

}  // namespace tpuemu::sim
