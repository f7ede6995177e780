// SPDX-License-Identifier: Apache-2.0
// The transport of the in-process simulator backends (rtl: the Verilated core; tlm: the SystemC
// model): a sim::CoreSim behind the firmware's simulator HAL, frames handed to the firmware in
// memory. It owns the simulator and its HAL, turns simulator exceptions (caught by the HAL so
// that they never cross the firmware) into tpuemu::Error after each frame, and converts the
// simulator's timeline and HBM statistics into the Device's.
#pragma once

#include <memory>
#include <string>

#include "tpuemu/config/config.h"
#include "tpuemu/device/device.h"
#include "tpuemu/fw/sim_hal.h"
#include "tpuemu/sim/core_sim.h"

namespace tpuemu {

class SimCoreTransport final : public InProcessTransport {
 public:
  struct Parts {
    std::unique_ptr<sim::CoreSim> core;
    std::unique_ptr<fw::SimHal> hal;
  };
  // backend: the name errors and the transport carry; memory_source: what measures the memory
  // statistics (shown with them).
  SimCoreTransport(Parts parts, std::string backend, std::string memory_source);

  bool begin_timeline() override;
  // The simulator's cycles since construction become cycles since the run started (the core's
  // first busy cycle); HBM activity before that is dropped or clipped.
  void end_timeline(RunResult& r) override;
  std::optional<MemoryStatistics> memory_statistics() const override;

 protected:
  void after_frame() override;

 private:
  std::string backend_;
  std::string source_;
  std::unique_ptr<sim::CoreSim> core_;  // declared before hal_: destroyed after it
  std::unique_ptr<fw::SimHal> hal_;
};

// The memory behind a simulated core's port, from the preset's hbm section and the device
// options (the same for every simulator backend).
sim::MemoryModelConfig memory_config_for(const Preset& preset, const DeviceOptions& options);
// What measures the memory statistics of such a core, for their report.
std::string memory_source_of(const Preset& preset, const std::string& controller);

}  // namespace tpuemu
