// SPDX-License-Identifier: Apache-2.0
// The host Device over the in-process transport, with the firmware in the loop and a fake core
// behind its HAL: data paths, splitting of large transfers, run outcomes, counters, errors.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <memory>
#include <numeric>
#include <optional>
#include <functional>
#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "test_firmware_fake.h"
#include "tpuemu/config/config.h"
#include "tpuemu/device/backend_registry.h"
#include "tpuemu/device/device.h"
#include "tpuemu/device/protocol.h"
#include "tpuemu/device/timeline.h"
#include "tpuemu/fw/sim_hal.h"
#include "tpuemu/sim/core_sim.h"

namespace {

using tpuemu::Device;
using tpuemu::RunStatus;
using tpuemu::testing::FakeCore;

// What went over the wire.
struct WireLog {
  std::vector<std::uint8_t> commands;
  std::vector<std::size_t> request_sizes;
  // Applied to the next response, then cleared.
  std::function<void(std::vector<std::uint8_t>&)> mutate_response;
};

class RecordingTransport : public tpuemu::Transport {
 public:
  RecordingTransport(std::unique_ptr<tpuemu::Transport> inner, WireLog* log)
      : inner_(std::move(inner)), log_(log) {}
  void send(std::span<const std::uint8_t> frame) override {
    log_->commands.push_back(frame[FW_OFF_COMMAND]);
    log_->request_sizes.push_back(frame.size());
    inner_->send(frame);
  }
  std::vector<std::uint8_t> receive() override {
    auto r = inner_->receive();
    if (log_->mutate_response) {
      auto m = std::move(log_->mutate_response);
      log_->mutate_response = nullptr;
      m(r);
    }
    return r;
  }
  std::string name() const override { return "fake"; }

 private:
  std::unique_ptr<tpuemu::Transport> inner_;
  WireLog* log_;
};

struct Rig {
  explicit Rig(std::size_t mem = 8u << 20, std::size_t max_chunk = 0) : core(mem) {
    auto t = std::make_unique<RecordingTransport>(
        std::make_unique<tpuemu::InProcessTransport>(core.hal()), &log);
    tpuemu::FirmwareDeviceOptions o;
    o.max_chunk = max_chunk;
    dev = tpuemu::make_firmware_device(std::move(t), o);
    log.commands.clear();
    log.request_sizes.clear();
  }
  std::size_t count(std::uint8_t cmd) const {
    return static_cast<std::size_t>(std::count(log.commands.begin(), log.commands.end(), cmd));
  }
  FakeCore core;
  WireLog log;
  std::unique_ptr<Device> dev;
};

template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const tpuemu::Error& e) {
    return e.what();
  }
  return "(no error)";
}

std::vector<std::uint8_t> pattern(std::size_t n, std::uint32_t seed = 1) {
  std::vector<std::uint8_t> v(n);
  for (auto& b : v) b = static_cast<std::uint8_t>((seed = seed * 1664525u + 1013904223u) >> 24);
  return v;
}

// What every backend must do (ID, sizes, ping, memory round trips, runs) is the conformance suite
// (tests/e2e/test_conformance.cpp, which runs the registered "fake" and "rtl" backends). These
// tests drive the firmware device over the frame-level FakeCore HAL and check what only it can
// see: the frames, their sizes and the decoding of the INFO fields the firmware fills in.
TEST(Device, InfoFieldsOfTheFirmwareAreDecoded) {
  Rig rig;
  const auto& info = rig.dev->info();
  EXPECT_EQ(info.backend, "fake");
  EXPECT_EQ(info.firmware_version_string(), "1.1.0");
  EXPECT_EQ(info.protocol_version, 1u);
  EXPECT_EQ(info.max_chunk, 1u << 20);
  EXPECT_EQ(info.hbm_capacity, 8u << 20);
  EXPECT_EQ(info.smem_words, rig.core.smem.size());
}

// A firmware before 1.1 answers INFO without the SMEM size: the device takes the preset's.
TEST(Device, SmemSizeOfAnOlderFirmwareIsThePresets) {
  FakeCore core;
  WireLog log;
  log.mutate_response = [](std::vector<std::uint8_t>& r) {
    auto f = tpuemu::protocol::decode_frame(r);
    f.payload.resize(48);
    r = tpuemu::protocol::encode_frame(FW_TYPE_RESPONSE, f.command, 0, f.seq, f.payload);
  };
  tpuemu::FirmwareDeviceOptions o;
  o.smem_words = 64;
  auto dev = tpuemu::make_firmware_device(
      std::make_unique<RecordingTransport>(std::make_unique<tpuemu::InProcessTransport>(core.hal()),
                                           &log),
      o);
  EXPECT_EQ(dev->info().smem_words, 64u);
  std::vector<std::uint32_t> words(8);
  EXPECT_EQ(error_of([&] { dev->read_smem(60, words); }),
            "device: read_smem: words [60, 68) are outside SMEM (64 words)");
}

TEST(Device, OneTransferIsOneFrameAndAnEmptyOneNone) {
  Rig rig;
  const auto data = pattern(5000);
  rig.dev->write_hbm(0x100, data);
  EXPECT_TRUE(std::equal(data.begin(), data.end(), rig.core.mem.begin() + 0x100));
  EXPECT_EQ(rig.dev->read_hbm(0x100, data.size()), data);
  EXPECT_EQ(rig.count(FW_CMD_WRITE_MEM), 1u);
  EXPECT_EQ(rig.count(FW_CMD_READ_MEM), 1u);
  rig.dev->write_hbm(0, {});  // nothing to send
  EXPECT_EQ(rig.count(FW_CMD_WRITE_MEM), 1u);
}

TEST(Device, LargeTransfersAreSplitIntoChunks) {
  Rig rig;
  const std::size_t n = 3 * (1u << 20) + 5;
  const auto data = pattern(n, 7);
  rig.dev->write_hbm(64, data);
  EXPECT_EQ(rig.count(FW_CMD_WRITE_MEM), 4u);
  for (std::size_t s : rig.log.request_sizes)
    EXPECT_LE(s, tpuemu::protocol::kHeaderSize + tpuemu::protocol::kMaxPayload);
  EXPECT_TRUE(std::equal(data.begin(), data.end(), rig.core.mem.begin() + 64));
  std::vector<std::uint8_t> back(n);
  rig.dev->read_hbm(64, back);
  EXPECT_EQ(rig.count(FW_CMD_READ_MEM), 4u);
  EXPECT_EQ(back, data);
}

TEST(Device, ChunkSizeCanBeLowered) {
  Rig rig(1 << 16, 1000);
  const auto data = pattern(2500, 3);
  rig.dev->write_hbm(10, data);
  EXPECT_EQ(rig.count(FW_CMD_WRITE_MEM), 3u);
  EXPECT_EQ(rig.log.request_sizes[0], 20u + 12u + 1000u);
  EXPECT_EQ(rig.log.request_sizes[2], 20u + 12u + 500u);
  EXPECT_EQ(rig.dev->read_hbm(10, 2500), data);
  EXPECT_EQ(rig.count(FW_CMD_READ_MEM), 3u);
}

TEST(Device, SmemRoundTripAndSplitting) {
  Rig rig(1 << 16, 16);  // 4 words per frame
  std::vector<std::uint32_t> words(10);
  std::iota(words.begin(), words.end(), 0xABC00000u);
  rig.dev->write_smem(20, words);
  EXPECT_EQ(rig.count(FW_CMD_WRITE_SMEM), 3u);
  for (std::size_t i = 0; i < words.size(); ++i) EXPECT_EQ(rig.core.smem[20 + i], words[i]);
  std::vector<std::uint32_t> back(10);
  rig.dev->read_smem(20, back);
  EXPECT_EQ(rig.count(FW_CMD_READ_SMEM), 3u);
  EXPECT_EQ(back, words);
}

TEST(Device, LoadProgram) {
  Rig rig;
  const auto prog = pattern(96, 5);
  rig.dev->load_program(0x4000, prog);
  EXPECT_EQ(rig.core.prog_base, 0x4000u);
  EXPECT_TRUE(std::equal(prog.begin(), prog.end(), rig.core.mem.begin() + 0x4000));
  EXPECT_EQ(rig.log.commands, std::vector<std::uint8_t>{FW_CMD_LOAD_PROGRAM});
  EXPECT_EQ(error_of([&] { rig.dev->load_program(0x4010, prog); }),
            "device: load_program: address 0x4010 is not 32-byte aligned");
  EXPECT_EQ(error_of([&] { rig.dev->load_program(0, pattern(33)); }),
            "device: load_program: 33 bytes is not a whole number of 32-byte instructions");
}

TEST(Device, LargeProgramIsWrittenInChunksThenLoaded) {
  Rig rig(1 << 16, 64);
  const auto prog = pattern(32 * 10, 9);
  rig.dev->load_program(0x800, prog);
  EXPECT_EQ(rig.count(FW_CMD_WRITE_MEM), 5u);
  EXPECT_EQ(rig.count(FW_CMD_LOAD_PROGRAM), 1u);
  EXPECT_EQ(rig.log.commands.back(), FW_CMD_LOAD_PROGRAM);
  EXPECT_EQ(rig.log.request_sizes.back(), 20u + 12u);  // only sets PROG_BASE
  EXPECT_EQ(rig.core.prog_base, 0x800u);
  EXPECT_TRUE(std::equal(prog.begin(), prog.end(), rig.core.mem.begin() + 0x800));
}

TEST(Device, RunDone) {
  Rig rig;
  rig.core.run_cycles = 4321;
  const auto r = rig.dev->run({.max_cycles = 1'000'000});
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.status, RunStatus::Done);
  EXPECT_EQ(r.cycles, 4321u);
  EXPECT_EQ(r.waited_cycles, 4321u);
  EXPECT_EQ(r.error_code, 0u);
  EXPECT_EQ(r.pc, 12u);
  EXPECT_TRUE(r.queues.fetch_stopped);
  EXPECT_EQ(r.describe(), "done in 4321 cycles");
}

TEST(Device, RunDeadlockThrowsWithQueueStates) {
  Rig rig;
  rig.core.outcome = FakeCore::Outcome::Deadlock;
  try {
    rig.dev->run();
    FAIL() << "no exception";
  } catch (const tpuemu::RunError& e) {
    EXPECT_STREQ(e.what(),
                 "device: run failed: deadlock: DMA queue (1 entry) head waits s3>=1 (sem=0), "
                 "MXU queue empty, vector queue (2 entries) head waits s5 (sem=0), fetch stopped "
                 "at pc 7");
    EXPECT_EQ(e.result().status, RunStatus::Deadlock);
  }
}

TEST(Device, RunDeadlockResultCanBeInspected) {
  Rig rig;
  rig.core.outcome = FakeCore::Outcome::Deadlock;
  const auto r = rig.dev->run({.max_cycles = 1'000'000, .throw_on_failure = false});
  EXPECT_EQ(r.status, RunStatus::Deadlock);
  EXPECT_EQ(r.error_code, 2u);
  EXPECT_EQ(r.error_pc, 6u);
  EXPECT_EQ(r.queues.dma.entries, 1u);
  EXPECT_TRUE(r.queues.dma.head_waits);
  EXPECT_EQ(r.queues.dma.wait_sem, 3u);
  EXPECT_EQ(r.queues.mxu.entries, 0u);
  EXPECT_FALSE(r.queues.mxu.head_waits);
  EXPECT_EQ(r.queues.vector.entries, 2u);
  EXPECT_TRUE(r.queues.vector.head_waits);
  EXPECT_EQ(r.queues.vector.wait_sem, 5u);
  EXPECT_EQ(r.queues.first_wait_count, 1u);
  EXPECT_EQ(r.semaphores[9], 4u);
}

TEST(Device, RunErrorAndTimeout) {
  Rig rig;
  rig.core.outcome = FakeCore::Outcome::IllegalOpcode;
  EXPECT_EQ(error_of([&] { rig.dev->run(); }),
            "device: run failed: error 1 (illegal opcode) at pc 5: DMA queue empty, MXU queue "
            "empty, vector queue empty, fetch stopped at pc 6");

  rig.dev->reset();
  rig.core.outcome = FakeCore::Outcome::Hang;
  auto r = rig.dev->run({.max_cycles = 5000, .throw_on_failure = false});
  EXPECT_EQ(r.status, RunStatus::Timeout);
  EXPECT_EQ(r.waited_cycles, 5000u);
  EXPECT_EQ(r.describe(),
            "watchdog timeout: still busy after 5000 cycles: DMA queue (1 entry), MXU queue (1 "
            "entry), vector queue (2 entries), fetch at pc 3");
  EXPECT_EQ(rig.dev->state().status, RunStatus::Busy);
  EXPECT_NE(error_of([&] { rig.dev->run(); }).find("RUN failed: device busy"), std::string::npos);
  rig.core.outcome = FakeCore::Outcome::Complete;
  rig.core.busy_left = 10;
  r = rig.dev->run({.max_cycles = 5000, .resume = true});
  EXPECT_EQ(r.status, RunStatus::Done);
  EXPECT_EQ(rig.core.starts, 2);
  EXPECT_EQ(error_of([&] { rig.dev->run({.max_cycles = 0}); }),
            "device: run: max_cycles must be > 0");
}

TEST(Device, StateAndReset) {
  Rig rig;
  EXPECT_EQ(rig.dev->state().status, RunStatus::Idle);
  rig.dev->run();
  EXPECT_EQ(rig.dev->state().status, RunStatus::Done);
  rig.dev->set_semaphore(2, 7);
  EXPECT_EQ(rig.core.sems[2], 7u);
  EXPECT_EQ(rig.dev->state().semaphores[2], 7u);
  rig.dev->reset();
  EXPECT_EQ(rig.core.soft_resets, 1);
  EXPECT_EQ(rig.dev->state().status, RunStatus::Idle);
  EXPECT_EQ(rig.dev->state().semaphores[2], 0u);
  EXPECT_NE(error_of([&] { rig.dev->set_semaphore(32, 0); }).find("outside SEM (32 semaphores)"),
            std::string::npos);
}

TEST(Device, CountersHaveNamedFields) {
  Rig rig;
  rig.dev->run();
  const auto c = rig.dev->counters();
  EXPECT_EQ(c.cycles, 5000u);
  EXPECT_EQ(c.mxu_busy, 107u);
  EXPECT_EQ(c.bytes_hbm_to_vmem, 907u);
  EXPECT_EQ(c.instructions_fetched, 1507u);
  EXPECT_EQ(c.mxu_idle_empty, 2007u);
  EXPECT_EQ(c.vector_add_rows, 0x123456789ABCull);  // the last counter
  const auto a = c.to_array();
  for (std::size_t j = 0; j < tpuemu::Counters::kCount; ++j) EXPECT_EQ(a[j], rig.core.counters[j]);
  EXPECT_EQ(tpuemu::Counters::from_array(a), c);
  EXPECT_EQ(tpuemu::Counters::name(6), "dma_stall_memory");
  EXPECT_THROW(tpuemu::Counters::name(tpuemu::Counters::kCount), std::out_of_range);
}

// Every range is checked once, on the host, before a frame is sent: nothing is written in part.
TEST(Device, RangesOutsideTheDeviceAreRefusedBeforeAnyFrame) {
  Rig rig(4096);
  EXPECT_EQ(error_of([&] { rig.dev->write_hbm(4000, pattern(100)); }),
            "device: write_hbm: bytes [0xfa0, 0x1004) are outside HBM (4096 bytes)");
  std::vector<std::uint8_t> buf(8);
  EXPECT_EQ(error_of([&] { rig.dev->read_hbm(4096, buf); }),
            "device: read_hbm: bytes [0x1000, 0x1008) are outside HBM (4096 bytes)");
  EXPECT_EQ(error_of([&] { rig.dev->read_hbm(~std::uint64_t{0}, buf); }),
            "device: read_hbm: bytes [0xffffffffffffffff, 0xffffffffffffffff+0x8) are outside HBM "
            "(4096 bytes)");
  EXPECT_EQ(error_of([&] { rig.dev->load_program(4064, std::vector<std::uint8_t>(64)); }),
            "device: load_program: bytes [0xfe0, 0x1020) are outside HBM (4096 bytes)");
  EXPECT_EQ(error_of([&] {
              rig.dev->write_smem(255, std::vector<std::uint32_t>{7, 8, 9});
            }),
            "device: write_smem: words [255, 258) are outside SMEM (256 words)");
  std::vector<std::uint32_t> words(4096);
  EXPECT_EQ(error_of([&] { rig.dev->read_smem(0, words); }),
            "device: read_smem: words [0, 4096) are outside SMEM (256 words)");
  EXPECT_EQ(error_of([&] { rig.dev->set_semaphore(32, 1); }),
            "device: set_semaphore: semaphores [32, 33) are outside SEM (32 semaphores)");
  EXPECT_TRUE(rig.log.commands.empty());
  // At the end, nothing is in range.
  rig.dev->write_hbm(4096, {});
  rig.dev->write_smem(256, {});
}

TEST(Device, FirmwareErrorsBecomeErrors) {
  Rig rig;
  EXPECT_EQ(error_of([&] { rig.dev->set_semaphore(3, 0x10000); }),
            "device: SET_SEM failed: bad argument 0x10000 (limit or unit 0xffff)");
  EXPECT_EQ(tpuemu::protocol::describe_status(FW_ST_OUT_OF_RANGE, {250, 10}, FW_CMD_READ_SMEM),
            "SMEM words [250, 260) are outside the device's SMEM");
  EXPECT_EQ(tpuemu::protocol::describe_status(FW_ST_OUT_OF_RANGE, {0xfa0, 100}, FW_CMD_WRITE_MEM),
            "address range [0xfa0, 0x1004) is outside device memory");
}

TEST(Device, BrokenResponsesAreDetected) {
  Rig rig;
  rig.log.mutate_response = [](std::vector<std::uint8_t>& r) { r[FW_HEADER_SIZE] ^= 1; };
  EXPECT_NE(error_of([&] { rig.dev->ping(pattern(4)); }).find("PING: bad response: protocol: bad frame: CRC mismatch"),
            std::string::npos);
  rig.log.mutate_response = [](std::vector<std::uint8_t>& r) {
    r = tpuemu::protocol::encode_frame(FW_TYPE_RESPONSE, FW_CMD_PING, 0, 999, {});
  };
  EXPECT_NE(error_of([&] { rig.dev->ping({}); }).find("does not match the request"),
            std::string::npos);
  rig.log.mutate_response = [](std::vector<std::uint8_t>& r) {
    auto f = tpuemu::protocol::decode_frame(r);
    f.payload.resize(10);  // a truncated run record
    r = tpuemu::protocol::encode_frame(FW_TYPE_RESPONSE, f.command, 0, f.seq, f.payload);
  };
  EXPECT_EQ(error_of([&] { rig.dev->state(); }),
            "protocol: GET_STATE response: payload too short (10 bytes)");
  // The device keeps working after a bad exchange.
  EXPECT_EQ(rig.dev->ping(pattern(3)), pattern(3));
}

TEST(Device, OpenDeviceByName) {
  tpuemu::Preset p;
  p.name = "small";
  // Port 1 on loopback refuses: the remote backend retries until its connect timeout, then says so.
  EXPECT_EQ(error_of([&] { tpuemu::open_device("remote://127.0.0.1:1?connect_timeout=0.2", p); }),
            "device: remote://127.0.0.1:1?connect_timeout=0.2: cannot connect within 0.2 s: Connection refused");
  // This binary's backend list is fake and remote:// (tpuemu_device_fake_remote); the list of every
  // backend is checked where it is linked (test_conformance, BackendList).
  EXPECT_EQ(error_of([&] { tpuemu::open_device("fpga", p); }),
            "device: unknown backend 'fpga' (known: fake, remote://host:port)");
  EXPECT_EQ(error_of([&] { tpuemu::open_device("remote://nohost", p); }),
            "device: remote://nohost: no port (expected remote://host:port)");
  EXPECT_EQ(error_of([&] { tpuemu::open_device("remote://h:99999", p); }),
            "device: remote://h:99999: expected remote://host:port with a port 1..65535");
  EXPECT_EQ(error_of([&] { tpuemu::open_device("remote://h:7000?retries=3", p); }),
            "device: remote://h:7000?retries=3: unknown option 'retries' (known: connect_timeout, timeout, run_timeout)");
  EXPECT_EQ(error_of([&] { tpuemu::open_device("remote://h:7000?timeout=-1", p); }),
            "device: remote://h:7000?timeout=-1: option timeout=-1: expected seconds (a number >= 0)");
}

TEST(Device, BackendRegistryRefusesDuplicatesAndMatchesSchemes) {
  tpuemu::DeviceBackendRegistry r;
  auto never = [](std::string_view, const tpuemu::Preset&, const tpuemu::DeviceOptions&)
      -> std::unique_ptr<Device> { return nullptr; };
  r.add({"one", "a backend", never});
  r.add({"net://", "a scheme", never});
  EXPECT_EQ(error_of([&] { r.add({"one", "again", never}); }),
            "device: device backend 'one' is registered twice");
  EXPECT_EQ(error_of([&] { r.add({"two", "no factory", nullptr}); }),
            "device: device backend 'two' has no factory");
  ASSERT_NE(r.find("net://host:1"), nullptr);
  EXPECT_EQ(r.find("net://host:1")->name, "net://");
  EXPECT_EQ(r.find("on"), nullptr);
  EXPECT_EQ(r.names(), "net://host:port, one");
}

// ---------------------------------------------------------------------------------------------
// The simulator HAL against a fake CoreSim (the real one needs the Verilated core).
// ---------------------------------------------------------------------------------------------

class FakeCoreSim : public tpuemu::sim::CoreSim {
 public:
  explicit FakeCoreSim(FakeCore& c) : c_(c) {}
  bool throw_on_step = false;
  std::uint32_t dim() const override { return 8; }
  void reset() override {}
  std::uint32_t csr_read(std::uint32_t addr) override { return c_.csr_read(addr); }
  void csr_write(std::uint32_t addr, std::uint32_t v) override { c_.csr_write(addr, v); }
  std::uint64_t step(std::uint64_t cycles, bool) override {
    if (throw_on_step) throw std::runtime_error("HBM timing violation: tRCD");
    return c_.wait(cycles);
  }
  std::uint64_t cycle() const override { return c_.cycles_waited; }
  void mem_write(std::uint64_t addr, std::span<const std::uint8_t> data) override {
    if (c_.mem_write(addr, data.data(), data.size()) != 0) throw std::out_of_range("mem_write");
  }
  void mem_read(std::uint64_t addr, std::span<std::uint8_t> data) override {
    if (c_.mem_read(addr, data.data(), data.size()) != 0) throw std::out_of_range("mem_read");
  }
  std::uint64_t mem_capacity() const override { return c_.mem.size(); }
  std::optional<std::string> fault() const override { return fault_; }
  void clear_fault() override { fault_.reset(); }
  std::optional<tpuemu::sim::hbm::Statistics> hbm_statistics() const override { return std::nullopt; }
  std::optional<std::string> fault_;
  void start_timeline() override {}
  tpuemu::sim::Timeline stop_timeline() override { return {}; }
  void open_trace(const std::filesystem::path&) override {}

 private:
  FakeCore& c_;
};

// Like the rtl backend's transport: rethrows what the simulator threw.
class SimTransport : public tpuemu::InProcessTransport {
 public:
  explicit SimTransport(tpuemu::fw::SimHal& hal) : InProcessTransport(hal.hal(), "sim"), hal_(hal) {}

 protected:
  void after_frame() override { hal_.rethrow_if_failed(); }

 private:
  tpuemu::fw::SimHal& hal_;
};

TEST(SimHal, DeviceThroughTheSimulatorBinding) {
  FakeCore core(1 << 16);
  FakeCoreSim sim(core);
  tpuemu::fw::SimHal hal(sim, 256);
  auto dev = tpuemu::make_firmware_device(std::make_unique<SimTransport>(hal));
  EXPECT_EQ(dev->info().hbm_capacity, 1u << 16);
  const auto data = pattern(777);
  dev->write_hbm(32, data);
  EXPECT_EQ(dev->read_hbm(32, data.size()), data);
  EXPECT_EQ(dev->run().cycles, 5000u);
  // std::out_of_range from the memory model is an ordinary protocol error, not a HAL failure (the
  // frame goes past the host's own range check, as another client's would).
  tpuemu::InProcessTransport plain(hal.hal());
  plain.send(tpuemu::protocol::encode_request(
      FW_CMD_READ_MEM, 9, std::vector<std::uint8_t>{0, 0, 1, 0, 0, 0, 0, 0, 1, 0, 0, 0}));
  EXPECT_EQ(tpuemu::protocol::decode_frame(plain.receive()).status, FW_ST_OUT_OF_RANGE);
  EXPECT_FALSE(hal.failed());
}

TEST(SimHal, SimulatorExceptionsNeverCrossTheFirmware) {
  FakeCore core(1 << 16);
  FakeCoreSim sim(core);
  tpuemu::fw::SimHal hal(sim, 256);
  auto dev = tpuemu::make_firmware_device(std::make_unique<SimTransport>(hal));
  sim.throw_on_step = true;
  try {
    dev->run();
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "HBM timing violation: tRCD");
  }
  EXPECT_FALSE(hal.failed());  // cleared by the rethrow
  sim.throw_on_step = false;
  EXPECT_EQ(dev->ping(pattern(2)), pattern(2));

  // Without the rethrow, the firmware itself reports the failure.
  sim.throw_on_step = true;
  tpuemu::InProcessTransport plain(hal.hal());
  const auto req = tpuemu::protocol::encode_request(
      FW_CMD_RUN, 1, std::vector<std::uint8_t>{0, 0, 0, 0, 0xFF, 0xFF, 0, 0, 0, 0, 0, 0});
  core.status = 0;
  plain.send(req);
  const auto resp = tpuemu::protocol::decode_frame(plain.receive());
  EXPECT_EQ(resp.status, FW_ST_HAL_ERROR);
  EXPECT_TRUE(hal.failed());
  EXPECT_THROW(hal.rethrow_if_failed(), std::runtime_error);
}

TEST(SimHal, CoreMemoryFaultEndsTheRun) {
  FakeCore core(1 << 16);
  core.outcome = FakeCore::Outcome::Hang;
  FakeCoreSim sim(core);
  tpuemu::fw::SimHal hal(sim, 256);
  auto dev = tpuemu::make_firmware_device(std::make_unique<SimTransport>(hal));
  sim.fault_ = "DMA read at 0x10000000 beyond capacity 0x10000";
  try {
    dev->run({.max_cycles = 1'000'000'000});
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "core memory fault: DMA read at 0x10000000 beyond capacity 0x10000");
  }
  EXPECT_LE(core.wait_requests.size(), 1u);  // reported at the first poll, not at the watchdog
  EXPECT_FALSE(sim.fault_.has_value());
}


// ---- timelines ------------------------------------------------------------------------------

// A program image from (opcode, wait semaphore or -1, signal semaphore or -1), END last.
struct Op3 {
  tpuemu::spec::Opcode op;
  int wait = -1, signal = -1;
};
std::vector<std::uint8_t> program_of(std::initializer_list<Op3> ops) {
  namespace hdr = tpuemu::spec::instr::header;
  std::vector<std::uint8_t> bytes;
  auto push = [&](const Op3& o) {
    std::array<std::uint32_t, tpuemu::spec::kInstrWords> w{};
    hdr::opcode.put(w, static_cast<std::uint32_t>(o.op));
    if (o.wait >= 0) {
      hdr::wait_en.put(w, 1);
      hdr::wait_sem.put(w, static_cast<std::uint32_t>(o.wait));
      hdr::wait_cnt.put(w, 1);
    }
    if (o.signal >= 0) {
      hdr::sig_en.put(w, 1);
      hdr::sig_sem.put(w, static_cast<std::uint32_t>(o.signal));
    }
    for (std::uint32_t x : w)
      for (unsigned b = 0; b < 4; ++b) bytes.push_back(static_cast<std::uint8_t>(x >> (8 * b)));
  };
  for (const Op3& o : ops) push(o);
  push({tpuemu::spec::Opcode::End});
  return bytes;
}

TEST(Timeline, SpansMapQueueIndicesBackToProgramIndices) {
  using tpuemu::Queue;
  using tpuemu::TimelineEvent;
  using Op = tpuemu::spec::Opcode;
  // pc 0 DMA, 1 MXU (waits s3), 2 DMA, 3 vector, 4 MXU
  const auto program = program_of({{Op::Dma}, {Op::Matmul, 3}, {Op::Dma}, {Op::VAdd}, {Op::MxuNop}});
  const std::vector<TimelineEvent> events = {
      {0, Queue::Dma, TimelineEvent::Issue, 0},       {1, Queue::Mxu, TimelineEvent::WaitBegin, 0},
      {2, Queue::Dma, TimelineEvent::Issue, 1},       {5, Queue::Dma, TimelineEvent::Done, 1},
      {9, Queue::Dma, TimelineEvent::Done, 0},        {9, Queue::Mxu, TimelineEvent::WaitEnd, 0},
      {9, Queue::Mxu, TimelineEvent::Issue, 0},       {3, Queue::Vector, TimelineEvent::Issue, 0},
      {30, Queue::Mxu, TimelineEvent::Done, 0},       {31, Queue::Mxu, TimelineEvent::Issue, 1},
      {31, Queue::Mxu, TimelineEvent::Done, 1},
  };
  const auto spans = tpuemu::instruction_spans(events, program);
  ASSERT_EQ(spans.size(), 5u);
  EXPECT_EQ(spans[2].program_index, 2u);
  EXPECT_EQ(spans[2].queue, Queue::Dma);
  EXPECT_EQ(spans[2].queue_index, 1u);
  EXPECT_EQ(spans[2].issue, 2u);
  EXPECT_EQ(spans[2].done, 5u);   // completed before the earlier DMA
  EXPECT_EQ(spans[0].done, 9u);
  EXPECT_EQ(spans[1].opcode, Op::Matmul);
  EXPECT_EQ(spans[1].wait_sem, 3);
  EXPECT_EQ(spans[1].wait_begin, 1u);
  EXPECT_EQ(spans[1].wait_end, 9u);
  EXPECT_EQ(spans[1].issue, 9u);
  EXPECT_EQ(spans[3].queue, Queue::Vector);
  EXPECT_FALSE(spans[3].done.has_value()) << "no Done event: still running when the run stopped";
  EXPECT_EQ(spans[4].queue_index, 1u);
  EXPECT_FALSE(spans[0].wait_sem.has_value());
  // an index the program does not have
  const std::vector<TimelineEvent> bad = {{0, Queue::Vector, TimelineEvent::Issue, 1}};
  EXPECT_THROW(tpuemu::instruction_spans(bad, program), tpuemu::Error);
  EXPECT_THROW(tpuemu::instruction_spans(events, std::span(program).first(40)), tpuemu::Error);
}

TEST(Timeline, FakeBackendRecordsItsTimeModelOnlyWhenAsked) {
  const tpuemu::Preset p = tpuemu::load_preset("small");
  auto dev = tpuemu::open_device("fake", p);
  using Op = tpuemu::spec::Opcode;
  // a vector NOP that waits on s0, a DMA NOP that signals it
  const auto program = program_of({{Op::VecNop, 0, -1}, {Op::DmaNop, -1, 0}});
  dev->load_program(0x1000, program);
  const auto off = dev->run();
  ASSERT_TRUE(off.ok());
  EXPECT_TRUE(off.timeline.empty());
  tpuemu::RunOptions o;
  o.record_timeline = true;
  const auto on = dev->run(o);
  ASSERT_TRUE(on.ok());
  EXPECT_TRUE(on.hbm_timeline.empty());
  const auto spans = tpuemu::instruction_spans(on.timeline, program);
  ASSERT_EQ(spans.size(), 2u);
  ASSERT_TRUE(spans[0].wait_begin && spans[0].issue && spans[1].issue && spans[1].done);
  EXPECT_LE(*spans[1].done, *spans[0].issue) << "the vector NOP waits for the DMA NOP's signal";
  EXPECT_EQ(spans[0].wait_sem, 0);
  EXPECT_EQ(spans[0].wait_end, spans[0].issue);
  EXPECT_EQ(spans[1].done, spans[1].issue) << "a NOP completes as it issues";
}

}  // namespace
