// SPDX-License-Identifier: Apache-2.0
// A tpuemu core with the memory model behind its memory port, as the firmware's simulator HAL
// drives it: the Verilated core (the rtl backend, sim/src/core_sim_impl.h) or the TLM model in a
// SystemC platform (the tlm backend, sim/tlm/include/tpuemu/tlm/tlm_core_sim.h). Both are built on
// the clocked core (clocked_core.h); this layer adds what a device has and a core alone has not:
// the memory's backdoor and faults, the HBM statistics, timelines and waveforms
// (docs/systemc.md, "One clocked-core interface").
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "tpuemu/sim/clocked_core.h"
#include "tpuemu/sim/hbm_system.h"

namespace tpuemu::sim {

// The simple memory model: fixed latency, a bandwidth cap, optional random back-pressure (for
// tests); or, with `hbm` set, the HBM controller + DRAM device model.
struct MemoryModelConfig {
  std::uint64_t capacity_bytes = 256ull << 20;
  std::uint32_t latency_cycles = 100;
  std::uint32_t bytes_per_cycle = 16;   // at most one beat (DIM bytes) per cycle
  std::uint32_t backpressure_permille = 0;  // chance per cycle that the port refuses a request
  std::uint64_t seed = 1;
  // Set: the HBM subsystem (RTL controller + DRAM device model) replaces the simple model; the
  // latency and bandwidth above are then ignored. The DRAM clock runs this many cycles per core
  // cycle (core period / tCK).
  std::optional<hbm::HbmSetup> hbm;
  double dram_cycles_per_core_cycle = 1.0;
};

// A channel's data bus busy or its refresh, converted to core cycles [begin, end) (the DRAM
// cycle range scaled by the clock ratio, rounded outwards).
struct ChannelInterval {
  std::uint32_t channel = 0;
  bool refresh = false;
  std::uint64_t begin = 0, end = 0;
};
// What the core's trace port (TraceEvent, clocked_core.h) and the HBM channels showed while a
// timeline was recorded. Cycles are the core's, counted since the CoreSim was made (cycle()).
struct Timeline {
  std::vector<TraceEvent> events;     // in cycle order
  std::vector<ChannelInterval> hbm;   // per channel in time order (HBM model only)
  std::optional<std::uint64_t> start; // the first cycle the core was busy while recording
};

class CoreSim {
 public:
  virtual ~CoreSim() = default;
  virtual std::uint32_t dim() const = 0;
  // Asserts rst_ni for a few cycles; memory contents are kept.
  virtual void reset() = 0;
  // Combinational CSR read (no clock edge, except SMEM_DATA which advances on the next edge).
  virtual std::uint32_t csr_read(std::uint32_t addr) = 0;
  // Applies the write on one clock edge.
  virtual void csr_write(std::uint32_t addr, std::uint32_t value) = 0;
  // Advances the clock; returns early (with the number of cycles run) once the core is not busy
  // if stop_when_idle is set.
  virtual std::uint64_t step(std::uint64_t cycles, bool stop_when_idle = false) = 0;
  virtual std::uint64_t cycle() const = 0;
  // Backdoor access to the memory behind the port. Throws std::out_of_range beyond capacity.
  virtual void mem_write(std::uint64_t addr, std::span<const std::uint8_t> data) = 0;
  virtual void mem_read(std::uint64_t addr, std::span<std::uint8_t> data) = 0;
  virtual std::uint64_t mem_capacity() const = 0;
  // The first access of the core outside the memory (a one-line message), if any; step() stops
  // advancing once there is one.
  virtual std::optional<std::string> fault() const = 0;
  virtual void clear_fault() = 0;
  // Statistics of the HBM subsystem since construction (nothing with the simple model).
  virtual std::optional<hbm::Statistics> hbm_statistics() const = 0;
  // Samples the trace port every cycle (and records the HBM channels' activity) until
  // stop_timeline(), which returns what was seen. Recording covers one run: the queue indices of
  // Issue events count from 0 at start_timeline(), as the core's count from 0 at each start.
  // Not recording costs one branch per cycle.
  virtual void start_timeline() = 0;
  virtual Timeline stop_timeline() = 0;
  // FST waveform of every following cycle (off unless called).
  virtual void open_trace(const std::filesystem::path& fst_file) = 0;
};

// preset: "small" (DIM 8), "default" (DIM 16), "tpu-v4-like" (DIM 128, when built).
// Throws std::invalid_argument naming the preset when no core was verilated for it.
std::unique_ptr<CoreSim> make_core_sim(const std::string& preset, const MemoryModelConfig& mem);
bool core_sim_available(const std::string& preset);

}  // namespace tpuemu::sim
