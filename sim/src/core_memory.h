// SPDX-License-Identifier: Apache-2.0
// What sits behind a core's memory port, seen once per core cycle: the simple latency/bandwidth
// model, or the HBM subsystem (bridge + RTL controller + DRAM device model).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "tpuemu/sim/core_sim.h"
#include "tpuemu/sim/hbm_system.h"

namespace tpuemu::sim {

class CoreMemory {
 public:
  virtual ~CoreMemory() = default;
  // Before the clock edge of core cycle `cycle`:
  virtual bool ready() const = 0;
  virtual void accept(std::uint64_t cycle, bool write, std::uint64_t addr, std::span<const std::uint8_t> wdata) = 0;
  virtual const std::uint8_t* read_response(std::uint64_t cycle) = 0;  // nullptr when none
  virtual bool write_ack(std::uint64_t cycle) = 0;
  // After the edge: `wrote` says whether a write beat was accepted in the cycle that ended.
  virtual void end_cycle(std::uint64_t next_cycle, bool wrote) = 0;

  virtual void backdoor_write(std::uint64_t addr, std::span<const std::uint8_t> data) = 0;
  virtual void backdoor_read(std::uint64_t addr, std::span<std::uint8_t> data) = 0;
  virtual std::uint64_t capacity() const = 0;
  virtual std::optional<std::string> fault() const = 0;
  virtual void clear_fault() = 0;
  virtual std::optional<hbm::Statistics> hbm_statistics() const { return std::nullopt; }
  // Channel activity of the HBM model in core cycles (nothing with the simple model).
  virtual void record_channels(bool) {}
  virtual std::vector<ChannelInterval> take_channel_intervals() { return {}; }
};

// mem.hbm set: the HBM subsystem; otherwise the simple model.
std::unique_ptr<CoreMemory> make_core_memory(const MemoryModelConfig& mem, std::uint32_t beat_bytes);

}  // namespace tpuemu::sim
