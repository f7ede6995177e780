// SPDX-License-Identifier: Apache-2.0
#include "sim_core_transport.h"

#include <fmt/format.h>

#include "rtl/hbm_statistics.h"
#include "tpuemu/config/hbm_config.h"
#include "tpuemu/sim_setup/hbm_setup.h"

namespace tpuemu {

static_assert(TimelineEvent::Issue == static_cast<int>(sim::TraceEvent::Issue) &&
              TimelineEvent::Done == static_cast<int>(sim::TraceEvent::Done) &&
              TimelineEvent::WaitBegin == static_cast<int>(sim::TraceEvent::WaitBegin) &&
              TimelineEvent::WaitEnd == static_cast<int>(sim::TraceEvent::WaitEnd));

SimCoreTransport::SimCoreTransport(Parts parts, std::string backend, std::string memory_source)
    : InProcessTransport(parts.hal->hal(), backend),
      backend_(std::move(backend)),
      source_(std::move(memory_source)),
      core_(std::move(parts.core)),
      hal_(std::move(parts.hal)) {}

bool SimCoreTransport::begin_timeline() {
  core_->start_timeline();
  return true;
}

void SimCoreTransport::end_timeline(RunResult& r) {
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

std::optional<MemoryStatistics> SimCoreTransport::memory_statistics() const {
  const std::optional<sim::hbm::Statistics> stats = core_->hbm_statistics();
  if (!stats) return std::nullopt;
  return register_hbm_statistics(*stats, source_);
}

sim::MemoryModelConfig memory_config_for(const Preset& preset, const DeviceOptions& options) {
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
    if (options.board_shim_max_latency) {
      mem.hbm->board = sim::hbm::BoardShim{.max_latency = *options.board_shim_max_latency, .seed = options.seed};
    }
  } else if (options.board_shim_max_latency) {
    throw Error("device", fmt::format("board shim: preset '{}' has the '{}' memory model; the board top's DRAM "
                                      "shim needs the HBM model",
                                      preset.name, preset.hbm.model));
  }
  return mem;
}

std::string memory_source_of(const Preset& preset, const std::string& controller) {
  return fmt::format("{}: {} + DRAM device model", preset.hbm.timing_set, controller);
}

void SimCoreTransport::after_frame() {
  try {
    hal_->rethrow_if_failed();
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw Error("device", fmt::format("{}: simulator failed: {}", backend_, e.what()));
  }
}

}  // namespace tpuemu
