// SPDX-License-Identifier: Apache-2.0
#include "tpuemu/tlm/tlm_core_sim.h"

#include <stdexcept>
#include <string>

#include "tpuemu/tlm/hbm_beat_timing.h"
#include "tpuemu/tlm/platform.h"
#include "tpuemu/tlm/simple_timing.h"

namespace tpuemu::tlm {
namespace {

// The memory's timing: the HBM stack's model when the preset has one (hbm set), else the simple
// model; `hbm` points at the former, for its statistics.
std::unique_ptr<BeatTimingModel> timing_for(const TlmSimOptions& o, HbmBeatTiming*& hbm) {
  if (o.memory.hbm) {
    if (o.memory.backpressure_permille != 0) {
      throw std::invalid_argument("random back-pressure is a knob of the simple memory model, not of the HBM stack");
    }
    auto t = make_hbm_beat_timing(*o.memory.hbm, o.memory.dram_cycles_per_core_cycle, o.shape.dim,
                                  o.memory.capacity_bytes);
    hbm = t.get();
    return t;
  }
  return std::make_unique<SimpleTiming>(SimpleTimingConfig{.beat_bytes = o.shape.dim,
                                                           .latency_cycles = o.memory.latency_cycles,
                                                           .bytes_per_cycle = o.memory.bytes_per_cycle,
                                                           .backpressure_permille = o.memory.backpressure_permille,
                                                           .seed = o.memory.seed});
}

class TlmCoreSim final : public sim::CoreSim {
 public:
  explicit TlmCoreSim(const TlmSimOptions& o)
      : dim_(o.shape.dim),
        platform_(Platform::make({.shape = o.shape,
                                  .capacity_bytes = o.memory.capacity_bytes,
                                  .clock_ghz = o.clock_ghz,
                                  .approximately_timed = o.approximately_timed,
                                  .quantum_cycles = o.quantum_cycles,
                                  .fast_paths = o.fast_paths},
                                 timing_for(o, hbm_))) {}

  std::uint32_t dim() const override { return dim_; }
  void reset() override { platform_->reset(); }
  std::uint32_t csr_read(std::uint32_t addr) override { return platform_->csr_read(addr); }
  void csr_write(std::uint32_t addr, std::uint32_t value) override { platform_->csr_write(addr, value); }
  std::uint64_t step(std::uint64_t cycles, bool stop_when_idle) override { return platform_->step(cycles, stop_when_idle); }
  std::uint64_t cycle() const override { return platform_->cycle(); }
  void mem_write(std::uint64_t addr, std::span<const std::uint8_t> data) override {
    platform_->mem_write(addr, data.data(), data.size());
  }
  void mem_read(std::uint64_t addr, std::span<std::uint8_t> data) override {
    platform_->mem_read(addr, data.data(), data.size());
  }
  std::uint64_t mem_capacity() const override { return platform_->mem_capacity(); }
  std::optional<std::string> fault() const override { return platform_->fault(); }
  void clear_fault() override { platform_->clear_fault(); }
  std::optional<sim::hbm::Statistics> hbm_statistics() const override {
    if (!hbm_) return std::nullopt;
    return hbm_->statistics();
  }

  void start_timeline() override { platform_->record_trace(true); }
  sim::Timeline stop_timeline() override {
    sim::Timeline t;
    t.events = platform_->take_trace();
    t.start = platform_->trace_start();
    platform_->record_trace(false);
    return t;
  }
  void open_trace(const std::filesystem::path& fst_file) override {
    throw std::runtime_error("trace " + fst_file.string() +
                             ": the tlm backend has no signals to dump (a waveform needs the rtl backend)");
  }

 private:
  std::uint32_t dim_;
  HbmBeatTiming* hbm_ = nullptr;  // the platform's timing model, when it is the HBM stack's
  std::unique_ptr<Platform> platform_;
};

}  // namespace

std::unique_ptr<sim::CoreSim> make_tlm_core_sim(const TlmSimOptions& options) {
  return std::make_unique<TlmCoreSim>(options);
}

}  // namespace tpuemu::tlm
