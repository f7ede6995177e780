// The in-process "rtl" backend: the Verilated core (CoreSim), the firmware's simulator HAL, and
// frames handed to the firmware in memory.
#include "../backends.h"
#include "hbm_statistics.h"

#include <stdexcept>

#include <fmt/format.h>

#include "tpuemu/config/config.h"
#include "tpuemu/config/hbm_config.h"
#include "tpuemu/fw/sim_hal.h"
#include "tpuemu/sim/compiled_cores.h"
#include "tpuemu/sim/core_sim.h"
#include "tpuemu/sim_setup/hbm_setup.h"

namespace tpuemu {

namespace {

static_assert(TimelineEvent::Issue == static_cast<int>(sim::TraceEvent::Issue) &&
              TimelineEvent::Done == static_cast<int>(sim::TraceEvent::Done) &&
              TimelineEvent::WaitBegin == static_cast<int>(sim::TraceEvent::WaitBegin) &&
              TimelineEvent::WaitEnd == static_cast<int>(sim::TraceEvent::WaitEnd));

// Owns the simulated core and its HAL; turns simulator exceptions (caught by the HAL so that
// they never cross the firmware) into tpuemu::Error after each frame.
class RtlTransport final : public InProcessTransport {
 public:
  struct Parts {
    std::unique_ptr<sim::CoreSim> core;
    std::unique_ptr<fw::SimHal> hal;
  };

  RtlTransport(Parts parts, std::string memory_source)
      : InProcessTransport(parts.hal->hal(), "rtl"),
        source_(std::move(memory_source)),
        core_(std::move(parts.core)),
        hal_(std::move(parts.hal)) {}

  bool begin_timeline() override {
    core_->start_timeline();
    return true;
  }

  // The simulator's cycles since construction become cycles since the run started (the core's
  // first busy cycle); HBM activity before that is dropped or clipped.
  void end_timeline(RunResult& r) override {
    const sim::Timeline t = core_->stop_timeline();
    const std::uint64_t base = t.start.value_or(t.events.empty() ? 0 : t.events.front().cycle);
    const auto rebase = [&](std::uint64_t c) { return c > base ? c - base : 0; };
    r.timeline.clear();
    r.timeline.reserve(t.events.size());
    for (const sim::TraceEvent& e : t.events) {
      r.timeline.push_back({.cycle = rebase(e.cycle),
                            .queue = spec::trace::kEngines[e.engine].queue,
                            .kind = static_cast<TimelineEvent::Kind>(e.kind),
                            .queue_index = e.index});
    }
    r.hbm_timeline.clear();
    for (const sim::ChannelInterval& i : t.hbm) {
      if (i.end <= base) continue;
      r.hbm_timeline.push_back({.channel = i.channel,
                                .kind = i.refresh ? HbmInterval::Refresh : HbmInterval::Busy,
                                .begin = rebase(i.begin),
                                .end = rebase(i.end)});
    }
  }

  std::optional<MemoryStatistics> memory_statistics() const override {
    const std::optional<sim::hbm::Statistics> stats = core_->hbm_statistics();
    if (!stats) return std::nullopt;
    return register_hbm_statistics(*stats, source_);
  }

 protected:
  void after_frame() override {
    try {
      hal_->rethrow_if_failed();
    } catch (const Error&) {
      throw;
    } catch (const std::exception& e) {
      throw Error("device", fmt::format("rtl: simulator failed: {}", e.what()));
    }
  }

 private:
  std::string source_;  // what measures the memory statistics
  std::unique_ptr<sim::CoreSim> core_;  // declared before hal_: destroyed after it
  std::unique_ptr<fw::SimHal> hal_;
};

// A preset may be a user's copy of a shipped one with the same name: every field the compiled core
// fixes must have the value it was compiled with, or the run would silently simulate the stock
// core instead of what the preset asks for.
void check_compiled_core(const Preset& preset) {
  std::string built;
  for (const sim::CompiledCore& core : sim::kCompiledCores) {
    built += fmt::format("{}{}", built.empty() ? "" : ", ", core.preset);
  }
  for (const sim::CompiledCore& core : sim::kCompiledCores) {
    if (core.preset != preset.name) continue;
    const nlohmann::json asked = to_json(preset);
    for (const sim::CompiledCoreField& f : core.fields) {
      const std::uint64_t value = asked.at(std::string(f.key)).get<std::uint64_t>();
      if (value != f.value)
        throw Error("device", fmt::format("backend rtl: preset {} sets {}={} but the core was built with {}; this "
                                          "build has Verilated cores only for the shipped presets ({}), so it cannot "
                                          "simulate this one cycle-accurately (--backend fake runs it functionally)",
                                          preset.name, f.key, value, f.value, built));
    }
    return;
  }
  throw Error("device", fmt::format("backend rtl: no Verilated core for preset '{}' in this build (built: {}); "
                                    "--backend fake runs it functionally",
                                    preset.name, built));
}

}  // namespace

std::unique_ptr<Transport> open_rtl_transport(const Preset& preset, const DeviceOptions& options) {
  check_compiled_core(preset);
  sim::MemoryModelConfig mem;
  mem.capacity_bytes = preset.hbm.capacity_bytes;
  mem.latency_cycles = preset.hbm.latency_cycles;
  mem.bytes_per_cycle = preset.hbm.bytes_per_cycle;
  mem.backpressure_permille = options.backpressure_permille;
  mem.seed = options.seed;
  if (preset.hbm.model == "hbm") {
    const HbmTimingSet set = load_hbm_timing_set(preset.hbm.timing_set);
    mem.hbm = hbm_setup_from(set, preset.hbm.page_policy == "closed");
    // DRAM clocks per core clock: core period / tCK
    mem.dram_cycles_per_core_cycle = 1000.0 / (preset.clock_ghz * set.tck_ps);
  }
  RtlTransport::Parts parts;
  try {
    parts.core = sim::make_core_sim(preset.name, mem);
    if (!options.trace_fst.empty()) parts.core->open_trace(options.trace_fst);
    parts.core->reset();
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw Error("device", fmt::format("backend rtl: cannot start the core for preset '{}': {}",
                                      preset.name, e.what()));
  }
  parts.hal = std::make_unique<fw::SimHal>(*parts.core);
  return std::make_unique<RtlTransport>(
      std::move(parts), fmt::format("{}: RTL HBM controller + DRAM device model", preset.hbm.timing_set));
}

void register_rtl_backend(DeviceBackendRegistry& registry) {
  registry.add({.name = "rtl",
                .description = "the preset's Verilated core in this process, behind the firmware",
                .open = {},
                .open_transport = open_rtl_transport});
}

}  // namespace tpuemu
