// SPDX-License-Identifier: Apache-2.0
// The `fake` backend: the functional core model (functional_core.h) behind the real firmware,
// frames passed in memory. It needs no Verilator, so the layers above the device and the
// conformance suite can be tested without a Verilated core; results are exact, cycles are not.
#include <memory>

#include "tpuemu/base/error.h"
#include "tpuemu/sim_setup/core_shape.h"

#include "tpuemu/device/backend_registry.h"
#include "functional_core.h"

namespace tpuemu {
namespace {

// Owns the model the firmware talks to.
class FakeTransport final : public InProcessTransport {
 public:
  explicit FakeTransport(std::unique_ptr<fake::FunctionalCore> core)
      : InProcessTransport(core->hal(), "fake"), core_(std::move(core)) {}

  // The model's own time (functional_core.h); there is no HBM model, so no hbm_timeline.
  bool begin_timeline() override {
    core_->start_timeline();
    return true;
  }
  void end_timeline(RunResult& r) override {
    r.timeline = core_->stop_timeline();
    r.hbm_timeline.clear();
  }
  std::string cycles_approximate() const override {
    return "the fake backend is a functional model: its results are exact, its cycles are not the core's";
  }

 private:
  std::unique_ptr<fake::FunctionalCore> core_;
};

// Options only the simulated memory system can honour are refused, never ignored.
void check_fake(const Preset&, const DeviceOptions& options) {
  if (!options.trace_fst.empty()) {
    throw Error("device", "backend fake: a waveform trace needs the rtl backend (the fake has no signals)");
  }
  if (options.backpressure_permille != 0) {
    throw Error("device", "backend fake: memory back-pressure needs the rtl backend (the fake has no memory timing)");
  }
  if (options.board_shim_max_latency) {
    throw Error("device", "backend fake: the board top's DRAM shim needs the rtl backend (the fake has no memory timing)");
  }
}

std::unique_ptr<Transport> open_fake_transport(const Preset& preset, const DeviceOptions& options) {
  check_fake(preset, options);
  const fake::DeviceShape shape{core_shape_from(preset), preset.hbm.capacity_bytes};
  return std::make_unique<FakeTransport>(std::make_unique<fake::FunctionalCore>(shape));
}

}  // namespace

// Called by the backend list of each program that links it (host/src/device/CMakeLists.txt).
void register_fake_backend(DeviceBackendRegistry& registry) {
  registry.add({.name = "fake",
                .description = "functional model of the core behind the firmware (exact results, approximate cycles)",
                .open = {},
                .open_transport = open_fake_transport,
                .check = check_fake});
}

}  // namespace tpuemu
