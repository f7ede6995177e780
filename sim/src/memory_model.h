// SPDX-License-Identifier: Apache-2.0
// The simple HBM stand-in behind the core's memory port: fixed latency, a bandwidth cap as a token
// bucket, in-order read data and write acknowledgements, optional random back-pressure. Storage is
// sparse (1 MiB pages on first touch), so any capacity costs only what is used.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "core_memory.h"
#include "tpuemu/sim/core_sim.h"

namespace tpuemu::sim {

class MemoryModel final : public CoreMemory {
 public:
  MemoryModel(const MemoryModelConfig& config, std::uint32_t beat_bytes);

  // Per cycle, before the clock edge: may the core's request be accepted this cycle?
  bool ready() const override { return ready_; }
  // The request presented this cycle was accepted (valid && ready).
  void accept(std::uint64_t cycle, bool write, std::uint64_t addr, std::span<const std::uint8_t> wdata) override;
  // Called once per cycle after the edge: refills the bucket and rolls back-pressure dice.
  void end_cycle(std::uint64_t next_cycle, bool wrote) override;
  // Responses due in the cycle being driven; each call yields at most one of each.
  const std::uint8_t* read_response(std::uint64_t cycle) override;
  bool write_ack(std::uint64_t cycle) override;

  void backdoor_write(std::uint64_t addr, std::span<const std::uint8_t> data) override;
  void backdoor_read(std::uint64_t addr, std::span<std::uint8_t> data) override;
  std::uint64_t capacity() const override { return config_.capacity_bytes; }
  // First out-of-range access by the core, as a one-line message.
  std::optional<std::string> fault() const override { return fault_; }
  void clear_fault() override { fault_.reset(); }

 private:
  static constexpr std::uint64_t kPageBits = 20;
  using Page = std::array<std::uint8_t, std::size_t{1} << kPageBits>;
  std::uint8_t* byte_at(std::uint64_t addr);
  void check_range(std::uint64_t addr, std::uint64_t len, const char* what) const;

  MemoryModelConfig config_;
  std::uint32_t beat_bytes_;
  std::vector<std::unique_ptr<Page>> pages_;
  static constexpr std::size_t kMaxBeat = 256;
  struct PendingRead { std::uint64_t due; std::array<std::uint8_t, kMaxBeat> data; };
  std::deque<PendingRead> reads_;
  std::deque<std::uint64_t> acks_;
  std::array<std::uint8_t, kMaxBeat> current_read_{};
  std::uint64_t tokens_ = 0;
  std::uint64_t last_read_due_ = 0;
  std::uint64_t last_ack_due_ = 0;
  bool ready_ = true;
  std::mt19937_64 rng_;
  std::optional<std::string> fault_;
};

}  // namespace tpuemu::sim
