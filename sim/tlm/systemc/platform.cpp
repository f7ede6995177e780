// SPDX-License-Identifier: Apache-2.0
// Platform (platform.h): a private SystemC simulation context per device.
#include "tpuemu/tlm/platform.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <stdexcept>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>

#include "tpuemu/tlm/memory_target.h"
#include "tpuemu/tlm/socket_support.h"
#include "tpuemu/tlm/tlm_core.h"

namespace tpuemu::tlm {
namespace {

// SystemC's kernel state is process-wide (sc_curr_simcontext): one lock for every platform.
std::mutex& kernel_lock() {
  static std::mutex m;
  return m;
}

// Makes a platform's context current for the duration of a call.
class ContextScope {
 public:
  explicit ContextScope(sc_core::sc_simcontext* ctx) : lock_(kernel_lock()) {
    sc_core::sc_curr_simcontext = ctx;
    sc_core::sc_default_global_context = ctx;
  }

 private:
  std::lock_guard<std::mutex> lock_;
};

// The firmware's side of the CSR bus: an initiator socket bound to the core's CSR target.
struct FirmwareBus final : sc_core::sc_module {
  tlm_utils::simple_initiator_socket<FirmwareBus> socket;
  explicit FirmwareBus(sc_core::sc_module_name name) : sc_module(name), socket("socket") {}

  std::uint32_t access(std::uint32_t addr, bool write, std::uint32_t value) {
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    csr_transport(socket, addr, write, value, delay);
    return value;
  }
};

sc_core::sc_time period_of(double clock_ghz) {
  if (!(clock_ghz > 0)) throw std::invalid_argument("tlm: clock_ghz must be positive");
  // SystemC's resolution is 1 ps: the period is the clock's, rounded to it.
  return sc_core::sc_time(std::round(1000.0 / clock_ghz), sc_core::SC_PS);
}

class PlatformImpl final : public Platform {
 public:
  PlatformImpl(const PlatformConfig& config, std::unique_ptr<BeatTimingModel> timing) {
    // Before SystemC's first context prints its banner to stdout, which is the CLI's.
    setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);
    std::lock_guard<std::mutex> lock(kernel_lock());
    context_ = std::make_unique<sc_core::sc_simcontext>();
    sc_core::sc_curr_simcontext = context_.get();
    sc_core::sc_default_global_context = context_.get();
    // Reports become exceptions, never an abort() or a message on stdout.
    sc_core::sc_report_handler::set_actions(sc_core::SC_ERROR, sc_core::SC_THROW);
    sc_core::sc_report_handler::set_actions(sc_core::SC_FATAL, sc_core::SC_THROW);
    sc_core::sc_report_handler::set_actions(sc_core::SC_WARNING, sc_core::SC_DO_NOTHING);
    sc_core::sc_report_handler::set_actions(sc_core::SC_INFO, sc_core::SC_DO_NOTHING);
    const sc_core::sc_time period = period_of(config.clock_ghz);
    core_ = std::make_unique<TlmCore>("core", config.shape, period,
                                      config.approximately_timed ? Coding::ApproximatelyTimed : Coding::LooselyTimed,
                                      config.quantum_cycles);
    core_->model().set_fast_paths(config.fast_paths);
    memory_ = std::make_unique<MemoryTarget>("hbm", config.capacity_bytes, std::move(timing), period);
    firmware_ = std::make_unique<FirmwareBus>("firmware");
    core_->memory.bind(memory_->socket);
    firmware_->socket.bind(core_->csr);
    sc_core::sc_start(sc_core::SC_ZERO_TIME);  // elaboration
  }

  ~PlatformImpl() override {
    std::lock_guard<std::mutex> lock(kernel_lock());
    sc_core::sc_curr_simcontext = context_.get();
    sc_core::sc_default_global_context = context_.get();
    firmware_.reset();
    memory_.reset();
    core_.reset();
    context_.reset();
    sc_core::sc_curr_simcontext = nullptr;
    sc_core::sc_default_global_context = nullptr;
  }

  void reset() override {
    ContextScope scope(context_.get());
    core_->reset();
  }

  std::uint32_t csr_read(std::uint32_t addr) override {
    ContextScope scope(context_.get());
    const std::uint32_t v = firmware_->access(addr, false, 0);
    if (core_->model().csr_read_advances(addr)) run(1, false);
    return v;
  }

  void csr_write(std::uint32_t addr, std::uint32_t value) override {
    ContextScope scope(context_.get());
    firmware_->access(addr, true, value);
    run(1, false);  // the write's clock edge, as the Verilated harness applies it
  }

  std::uint64_t step(std::uint64_t cycles, bool stop_when_idle) override {
    ContextScope scope(context_.get());
    if (memory_->fault() || cycles == 0) return 0;
    return run(cycles, stop_when_idle);
  }

  std::uint64_t cycle() const override { return core_->model().cycle(); }
  void mem_write(std::uint64_t addr, const std::uint8_t* data, std::size_t len) override {
    memory_->backdoor_write(addr, data, len);
  }
  void mem_read(std::uint64_t addr, std::uint8_t* data, std::size_t len) override {
    memory_->backdoor_read(addr, data, len);
  }
  std::uint64_t mem_capacity() const override { return memory_->capacity(); }
  std::optional<std::string> fault() const override {
    if (memory_->fault()) return memory_->fault();
    if (const char* f = memory_->timing().fault()) return std::string(f);
    return core_->fault();
  }
  // The memory's fault stopped the core's clock too (an error response): both go.
  void clear_fault() override {
    memory_->clear_fault();
    core_->clear_fault();
  }
  void record_trace(bool on) override { core_->model().record_trace(on); }
  std::vector<CoreTraceEvent> take_trace() override { return core_->model().take_trace(); }
  std::optional<std::uint64_t> trace_start() const override { return core_->model().trace_start(); }
  BeatTimingModel& timing() override { return memory_->timing(); }

 private:
  // The core's thread runs the granted cycles and pauses the simulation.
  std::uint64_t run(std::uint64_t cycles, bool stop_when_idle) {
    core_->grant(cycles, stop_when_idle);
    sc_core::sc_start();
    return core_->cycles_run();
  }

  std::unique_ptr<sc_core::sc_simcontext> context_;
  std::unique_ptr<TlmCore> core_;
  std::unique_ptr<MemoryTarget> memory_;
  std::unique_ptr<FirmwareBus> firmware_;
};

}  // namespace

std::unique_ptr<Platform> Platform::make(const PlatformConfig& config, std::unique_ptr<BeatTimingModel> timing) {
  return std::make_unique<PlatformImpl>(config, std::move(timing));
}

}  // namespace tpuemu::tlm
