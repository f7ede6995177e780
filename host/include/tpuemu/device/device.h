// SPDX-License-Identifier: Apache-2.0
// The device layer: a device that runs programs (docs/architecture.md, "Host layers").
//
// A Device holds HBM, SMEM, semaphores and a core; the host writes data and a program, runs it,
// reads results and performance counters. Every backend goes through the firmware
// (firmware/, docs/protocol.md): a Device sends request frames over a Transport and decodes the
// responses. Backends are chosen by name:
//   "rtl"                the Verilated core in this process, frames handed to the firmware in memory
//   "fake"               the functional model in this process, behind the same firmware
//   "remote://host:port" the same frames over TCP to `tpuemu serve` or a board (docs/remote.md)
// Errors throw tpuemu::Error ("device: ..."); a failed run throws RunError, which carries the
// RunResult, unless RunOptions::throw_on_failure is false.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tpuemu/base/error.h"
#include "tpuemu/base/stop.h"
#include "tpuemu/device/memory_statistics.h"
#include "tpuemu/spec/contract.h"

struct fw_hal;

namespace tpuemu {

struct Preset;

// What the device reports about itself (INFO command).
struct DeviceInfo {
  std::string backend;                // "rtl", "remote://host:port", ...
  std::uint32_t id = 0;               // ID CSR, 0x54505545 ("TPUE")
  std::uint32_t config = 0;           // CONFIG CSR as read
  std::uint32_t dim = 0;              // CONFIG.dim
  std::uint32_t vmem_rows = 0;        // 1 << CONFIG.log2_vmem_rows
  std::uint32_t acc_rows = 0;         // 1 << CONFIG.log2_acc_rows
  std::uint32_t firmware_version = 0; // major << 16 | minor << 8 | patch
  std::uint32_t protocol_version = 0;
  std::uint32_t max_payload = 0;      // largest frame payload the firmware accepts
  std::uint32_t max_chunk = 0;        // largest data part of one memory transfer
  std::uint32_t num_semaphores = 0;
  std::uint32_t num_counters = 0;
  std::uint64_t hbm_capacity = 0;     // bytes
  std::uint32_t smem_words = 0;       // 32-bit words of SMEM
  std::uint32_t status = 0;           // STATUS CSR when INFO was answered
  std::uint32_t poll_slice = 0;       // cycles between two STATUS polls of RUN
  // Why this device's cycle counts are approximate (Transport::cycles_approximate); empty when
  // they are the core's.
  std::string cycles_approximate;

  std::string firmware_version_string() const;  // "1.0.0"
};

enum class RunStatus {
  Done,      // every queue drained after END
  Error,     // the core stopped with an error code other than deadlock (see error_code)
  Deadlock,  // the core's deadlock detector fired (error code 2)
  Timeout,   // the firmware watchdog: still busy after RunOptions::max_cycles
  Idle,      // state() only: not running, no completed run, no error (e.g. after reset)
  Busy,      // state() only: running
};
std::string_view to_string(RunStatus status);

// QUEUE_STATE and HEAD_WAIT decoded (docs/isa.md).
struct QueueInfo {
  std::uint32_t entries = 0;
  bool head_waits = false;      // the head instruction waits on a semaphore
  std::uint32_t wait_sem = 0;   // its semaphore (valid when head_waits)
};
struct QueueState {
  QueueInfo dma, mxu, vector;
  bool fetch_stopped = false;
  // HEAD_WAIT.wait_cnt: wait count of the first waiting head, in the order DMA, MXU, vector.
  std::uint32_t first_wait_count = 0;
  std::uint32_t raw_queue_state = 0;
  std::uint32_t raw_head_wait = 0;

  static QueueState decode(std::uint32_t queue_state, std::uint32_t head_wait);
};

// The queue an instruction is dispatched to (spec::Queue, also tpuemu/program/program.h's).
using Queue = spec::Queue;

// One event of a run's instruction timeline (RunOptions::record_timeline).
struct TimelineEvent {
  enum Kind : std::uint8_t {
    Issue,      // the instruction left its queue and started
    Done,       // it completed: the moment its signal fires (whether it signals or not)
    WaitBegin,  // it is the head of its queue and waits on its semaphore
    WaitEnd,    // the wait is over (the cycle it issues, or the run ended)
  };
  std::uint64_t cycle = 0;         // core cycles since the core started the run (its first busy cycle)
  Queue queue = Queue::Dma;
  Kind kind = Issue;
  std::uint32_t queue_index = 0;   // position among the queue's instructions in program order
  bool operator==(const TimelineEvent&) const = default;
};

// A busy or refresh interval of one HBM channel (presets with hbm.model "hbm"): the channel's
// data bus moving bursts (consecutive busy cycles coalesced), or the channel refreshing (REF to
// REF + tRFC). Core cycles [begin, end), on the timeline's time base.
struct HbmInterval {
  enum Kind : std::uint8_t { Busy, Refresh };
  std::uint32_t channel = 0;
  Kind kind = Busy;
  std::uint64_t begin = 0, end = 0;
  bool operator==(const HbmInterval&) const = default;
};

struct RunOptions {
  // Firmware watchdog: cycles to wait for the core before giving up (RunStatus::Timeout). > 0.
  std::uint64_t max_cycles = 100'000'000;
  // A run that does not end Done throws RunError; false returns the result instead.
  bool throw_on_failure = true;
  // Keep waiting for a run that timed out instead of starting a new one.
  bool resume = false;
  // Record RunResult::timeline (and hbm_timeline). Off: nothing is sampled. A backend that
  // cannot record throws Error.
  bool record_timeline = false;
  // Asked between slices of the run: with a stop token the run is made of RUN ... RESUME slices
  // of about a tenth of a second each (the core is not clocked between two, so every figure is
  // the same as one RUN's), and a stop ends it with Interrupted within a slice (the core is left
  // as the last slice left it). Without one, one RUN waits for the whole run.
  StopToken stop;
};

struct RunResult {
  RunStatus status = RunStatus::Idle;
  std::uint64_t cycles = 0;         // core busy cycles during this call (delta of COUNTER[0]);
                                    // state(): COUNTER[0] since the last reset
  std::uint64_t waited_cycles = 0;  // cycles the firmware let pass while polling
  std::uint32_t error_code = 0;     // STATUS.error_code (spec::ErrorCode)
  std::uint32_t error_pc = 0;       // ERROR_INFO: pc of the faulting instruction
  std::uint32_t pc = 0;             // PC: next instruction to fetch
  std::uint32_t status_raw = 0;     // STATUS CSR
  QueueState queues;
  std::array<std::uint32_t, spec::kNumSems> semaphores{};
  // With RunOptions::record_timeline: every issue, completion and semaphore wait of the run, in
  // cycle order (the rtl backend samples the core's trace port; the fake backend reports its own
  // time model), and the HBM channels' busy and refresh intervals (rtl backend on the HBM model).
  std::vector<TimelineEvent> timeline;
  std::vector<HbmInterval> hbm_timeline;

  bool ok() const noexcept { return status == RunStatus::Done; }
  // One line, e.g. "deadlock at pc 7: DMA queue (1 entry) head waits s3>=1 (sem=0), MXU queue
  // empty, vector queue empty, fetch stopped".
  std::string describe() const;
};

// The contract's meaning of an error code: "none", "deadlock", "illegal opcode", ...
std::string_view error_code_name(std::uint32_t error_code);

// The performance counters of the contract (spec/tpuemu.json, docs/isa.md), in CSR order: one
// field per counter, named as the contract names it (cycles, mxu_busy, ...).
struct Counters {
#define TPUEMU_COUNTER_FIELD(index, counter_name, doc) std::uint64_t counter_name = 0;
  TPUEMU_SPEC_COUNTERS(TPUEMU_COUNTER_FIELD)
#undef TPUEMU_COUNTER_FIELD

  static constexpr std::size_t kCount = spec::kNumCounters;
  // Counter j (0 <= j < kCount); throws std::out_of_range otherwise.
  std::uint64_t& at(std::size_t j);
  std::uint64_t at(std::size_t j) const;
  static std::string_view name(std::size_t j);  // the field name, "mxu_busy"
  std::array<std::uint64_t, kCount> to_array() const;
  // Values beyond kCount are ignored, missing ones stay 0.
  static Counters from_array(std::span<const std::uint64_t> values);

  bool operator==(const Counters&) const = default;
};

// A run that did not end Done (RunOptions::throw_on_failure).
class RunError : public Error {
 public:
  explicit RunError(RunResult result);
  const RunResult& result() const noexcept { return result_; }

 private:
  RunResult result_;
};

// Moves whole frames between the host and the firmware.
class Transport {
 public:
  virtual ~Transport() = default;
  // Sends one complete request frame.
  virtual void send(std::span<const std::uint8_t> frame) = 0;
  // Receives the next complete response frame (not validated).
  virtual std::vector<std::uint8_t> receive() = 0;
  // The same frame in storage the transport owns, valid until its next send or receive: a 1 MiB
  // memory chunk is then copied once, into the caller's buffer. By default a copy kept here.
  virtual std::span<const std::uint8_t> receive_view() {
    received_ = receive();
    return received_;
  }
  virtual std::string name() const = 0;
  // Requests that may be sent before their answers are received (the window of pipelined memory
  // transfers): 1 for in-process transports, what the server granted for remote ones.
  virtual std::size_t max_in_flight() const { return 1; }
  // Statistics of the memory behind the core, registered by name (memory_statistics.h), when the
  // transport can see them (the rtl backend with the HBM subsystem, in this process or behind a
  // server that answers MEM_STATS).
  virtual std::optional<MemoryStatistics> memory_statistics() const { return std::nullopt; }
  // Timeline recording around one RUN (RunOptions::record_timeline): begin before the frame is
  // sent (false: this transport cannot record), end after the answer, filling the result's
  // timeline fields.
  virtual bool begin_timeline() { return false; }
  virtual void end_timeline(RunResult&) {}
  // Empty when the cycles counted behind this transport are the core's; otherwise why not (the
  // fake backend's functional model, or a server that runs one), for reports to say so.
  virtual std::string cycles_approximate() const { return {}; }

 private:
  std::vector<std::uint8_t> received_;  // receive_view's frame when the transport keeps none
};

// Hands each frame to fw_handle_frame with in-memory buffers (no copy through a socket).
class InProcessTransport : public Transport {
 public:
  // hal must outlive the transport.
  explicit InProcessTransport(const fw_hal* hal, std::string name = "in-process");
  void send(std::span<const std::uint8_t> frame) override;
  std::vector<std::uint8_t> receive() override;
  std::span<const std::uint8_t> receive_view() override;
  std::string name() const override { return name_; }

 protected:
  // Called after every fw_handle_frame; the rtl backend rethrows simulator exceptions here.
  virtual void after_frame() {}

 private:
  const fw_hal* hal_;
  std::string name_;
  std::unique_ptr<std::uint8_t[]> buffer_;  // one response frame of the largest size
  std::size_t response_size_ = 0;
  bool have_response_ = false;
};

class Device {
 public:
  virtual ~Device() = default;

  virtual const DeviceInfo& info() const = 0;
  // Round trip of an arbitrary payload (PING); returns what came back.
  virtual std::vector<std::uint8_t> ping(std::span<const std::uint8_t> payload = {}) = 0;
  // Every range a call names (HBM bytes, SMEM words, a semaphore) must lie inside the device's
  // memory as info() reports it, else the call throws Error naming the range and the size before
  // anything is sent: a transfer is refused whole, never written in part.
  // HBM byte access; transfers larger than info().max_chunk are split.
  virtual void write_hbm(std::uint64_t addr, std::span<const std::uint8_t> data) = 0;
  virtual void read_hbm(std::uint64_t addr, std::span<std::uint8_t> data) = 0;
  std::vector<std::uint8_t> read_hbm(std::uint64_t addr, std::size_t size);
  // SMEM 32-bit words from word index `word` on.
  virtual void write_smem(std::uint32_t word, std::span<const std::uint32_t> words) = 0;
  virtual void read_smem(std::uint32_t word, std::span<std::uint32_t> words) = 0;
  // Writes the program (32 bytes per instruction) at addr (32-byte aligned) and sets PROG_BASE.
  virtual void load_program(std::uint64_t addr, std::span<const std::uint8_t> program) = 0;
  virtual void set_semaphore(std::uint32_t index, std::uint32_t value) = 0;
  // Starts the program at PROG_BASE and waits until it ends, fails or the watchdog fires.
  virtual RunResult run(const RunOptions& options = {}) = 0;
  // The core's current state (GET_STATE), without running anything.
  virtual RunResult state() = 0;
  virtual Counters counters() = 0;
  // Soft reset: clears queues, semaphores, status and counters; memory is kept.
  virtual void reset() = 0;
  // See Transport::memory_statistics().
  virtual std::optional<MemoryStatistics> memory_statistics() const { return std::nullopt; }
};

struct FirmwareDeviceOptions {
  // Split memory transfers into pieces of at most this many bytes (0: what the firmware reports).
  std::size_t max_chunk = 0;
  // SMEM words for a firmware whose INFO does not report them (before firmware 1.1): the preset's.
  std::uint32_t smem_words = 0;
};

// A Device that speaks the wire protocol over transport. Sends INFO at once (throws if the
// firmware does not answer properly). info().backend is transport->name().
std::unique_ptr<Device> make_firmware_device(std::unique_ptr<Transport> transport,
                                             const FirmwareDeviceOptions& options = {});

struct DeviceOptions {
  // rtl backend: memory model knobs beyond the preset's hbm section.
  std::uint32_t backpressure_permille = 0;
  std::uint64_t seed = 1;
  // rtl backend, HBM presets: run the board top's HBM side instead of the simulation top's, with
  // a backing store of random latency up to this many host cycles drawn from `seed`
  // (docs/fpga.md "The host-decoupled DRAM model"). The target's cycles do not change.
  std::optional<std::uint32_t> board_shim_max_latency;
  // rtl backend: FST waveform of the whole session (empty: no trace).
  std::filesystem::path trace_fst;
  // Compare the device's CONFIG CSR with the preset's (catches a core built for another preset).
  bool check_config = true;
  std::size_t max_chunk = 0;  // see FirmwareDeviceOptions
  // rtl backend, a preset that no Verilated core of this build fits: build its core into the core
  // cache on first use (tpuemu/device/core_cache.h) rather than refuse; the CLI does unless
  // --no-build.
  bool build_missing_core = false;
  // How the user named the preset (a name or a file), for the `tpuemu core build` command a
  // refusal names; the preset's name when empty.
  std::string preset_argument;
  // rtl backend: stops a core build on first use (the command's Ctrl-C); never by default.
  StopToken stop;
};

// Opens a backend registered under this name (built_in_device_backends(): "rtl", "fake"; a
// scheme such as "remote://" matches every name it starts) for the given preset. Throws Error for
// an unknown backend, naming the known ones.
std::unique_ptr<Device> open_device(std::string_view backend, const Preset& preset,
                                    const DeviceOptions& options = {});

}  // namespace tpuemu
