// SPDX-License-Identifier: Apache-2.0
// CoreSim over one Verilated tpu_top class: the Verilated core as a ClockedCore (verilated_core.h)
// with the memory model (core_memory.h) at its port, stepped every core cycle. Instantiated once
// per preset (core_<preset>.cpp), because every preset is a separately Verilated model with its
// own port widths.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "core_memory.h"
#include "tpuemu/sim/core_sim.h"
#include "verilated_core.h"

namespace tpuemu::sim {

// The memory model as the Verilated core's Port (verilated_core.h): it answers in the cycle it is
// asked and never takes a request it did not announce ready for.
class MemoryModelPort {
 public:
  explicit MemoryModelPort(CoreMemory& memory) : memory_(&memory) {}
  const std::uint8_t* read_response(std::uint64_t cycle) { return memory_->read_response(cycle); }
  bool write_ack(std::uint64_t cycle) { return memory_->write_ack(cycle); }
  bool ready(std::uint64_t /*cycle*/) const { return memory_->ready(); }
  template <typename WriteData>
  bool offer(std::uint64_t, bool, bool, std::uint64_t, WriteData&&) const {
    return false;
  }
  void accept(std::uint64_t cycle, bool write, std::uint64_t addr,
              std::span<const std::uint8_t> wdata) {
    memory_->accept(cycle, write, addr, wdata);
  }
  void end_cycle(std::uint64_t next_cycle, bool wrote) { memory_->end_cycle(next_cycle, wrote); }
  // A core access outside the memory stops the clock (CoreSim::fault).
  bool halted() const { return memory_->fault().has_value(); }
  // The memory model keeps what it owes the core: the harness's reset clocks it on.
  void reset() {}

 private:
  CoreMemory* memory_;
};

template <typename Top>
class VerilatedCoreSim final : public CoreSim {
 public:
  VerilatedCoreSim(std::uint32_t dim, const MemoryModelConfig& mem)
      : memory_(make_core_memory(mem, dim)), core_(dim, MemoryModelPort(*memory_)) {}

  std::uint32_t dim() const override { return core_.dim(); }
  void reset() override { core_.reset(); }

  std::uint32_t csr_read(std::uint32_t addr) override {
    const std::uint32_t value = core_.csr_peek(addr);
    if (core_.csr_read_advances(addr)) core_.csr_cycle(addr, false, 0);  // SMEM_DATA: on the edge
    return value;
  }
  void csr_write(std::uint32_t addr, std::uint32_t value) override {
    core_.csr_cycle(addr, true, value);
  }
  std::uint64_t step(std::uint64_t cycles, bool stop_when_idle) override {
    return core_.run(cycles, stop_when_idle);
  }
  std::uint64_t cycle() const override { return core_.cycle(); }

  void mem_write(std::uint64_t addr, std::span<const std::uint8_t> data) override {
    memory_->backdoor_write(addr, data);
  }
  void mem_read(std::uint64_t addr, std::span<std::uint8_t> data) override {
    memory_->backdoor_read(addr, data);
  }
  std::uint64_t mem_capacity() const override { return memory_->capacity(); }
  std::optional<std::string> fault() const override { return memory_->fault(); }
  void clear_fault() override { memory_->clear_fault(); }
  std::optional<hbm::Statistics> hbm_statistics() const override {
    return memory_->hbm_statistics();
  }

  void start_timeline() override {
    core_.record_trace(true);
    memory_->record_channels(true);
  }
  Timeline stop_timeline() override {
    Timeline t;
    t.events = core_.take_trace();
    t.start = core_.trace_start();
    core_.record_trace(false);
    t.hbm = memory_->take_channel_intervals();
    memory_->record_channels(false);
    return t;
  }
  void open_trace(const std::filesystem::path& fst_file) override { core_.open_waveform(fst_file); }

 private:
  std::unique_ptr<CoreMemory> memory_;  // before the core: its port
  VerilatedCore<Top, MemoryModelPort> core_;
};

}  // namespace tpuemu::sim
