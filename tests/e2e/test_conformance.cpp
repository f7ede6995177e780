// SPDX-License-Identifier: Apache-2.0
// The Device conformance suite (IREE's CTS is the model): one set of tests, run against every
// backend - the in-process "rtl" and "fake", "remote" (a `tpuemu serve` over rtl that the test
// starts on a loopback port) and, with TPUEMU_BOARD=host:port set, "board": that device, the
// hardware-in-the-loop regression (`ctest -L hil`, docs/hil.md). The board runs the preset
// TPUEMU_BOARD_PRESET (default small).
#include <gtest/gtest.h>

#include <cstdlib>

#include <fmt/format.h>
#include <memory>
#include <random>

#include "loopback_server.h"
#include "raw_client.h"
#include "tpuemu/compile/model.h"
#include "tpuemu/compile/reference.h"
#include "tpuemu/compile/workload.h"
#include "tpuemu/config/config.h"
#include "tpuemu/device/backend_registry.h"
#include "tpuemu/device/device.h"
#include "tpuemu/device/protocol.h"
#include "tpuemu/device/session.h"
#include "tpuemu/program/program.h"
#include "tpuemu/run/runner.h"
#include "tpuemu/spec/contract.h"

namespace tpuemu {
namespace {

std::vector<std::string> backends() {
  std::vector<std::string> out;
  const DeviceBackendRegistry registry = built_in_device_backends();
  for (const DeviceBackend& b : registry.backends()) {
    if (!b.name.ends_with("://")) out.push_back(b.name);
  }
  out.push_back("remote");
  if (std::getenv("TPUEMU_BOARD") != nullptr) out.push_back("board");
  return out;
}

std::string board_preset() {
  const char* p = std::getenv("TPUEMU_BOARD_PRESET");
  return p != nullptr ? p : "small";
}

// The server behind "remote": one per test process, started on first use; two devices, since a
// test holds one while run() opens another.
const std::string& loopback_backend() {
  static testing_support::LoopbackServer server("small", {.devices = 2});
  static const std::string name = server.backend();
  return name;
}

// What the suite opens for a parameter: the name, or the server behind it.
std::string resolve(const std::string& param) {
  if (param == "remote") return loopback_backend();
  if (param == "board") return std::string("remote://") + std::getenv("TPUEMU_BOARD");
  return param;
}

// Requests straight to the firmware, past the host's own checks, as a client of its own sends
// them: in process through the backend's transport, remote over a raw connection (after the
// session's HELLO when a server answers it; a bare firmware answers UNKNOWN_COMMAND).
class RawFirmware {
 public:
  RawFirmware(const std::string& backend, const Preset& preset) {
    if (!backend.starts_with("remote://")) {
      transport_ = built_in_device_backends().open_transport(backend, preset, {});
      return;
    }
    const std::string where = backend.substr(9, backend.find('?') - 9);
    const std::size_t colon = where.rfind(':');
    client_ = std::make_unique<testing_support::RawClient>(
        static_cast<std::uint16_t>(std::stoi(where.substr(colon + 1))), where.substr(0, colon));
    session::Hello hello;
    hello.client = "conformance raw client";
    hello.preset_digest = session::preset_digest(preset);
    const auto answer = client_->call(FW_CMD_HELLO, 1, session::encode(hello));
    if (!answer || (answer->status != FW_ST_OK && answer->status != FW_ST_UNKNOWN_COMMAND))
      throw Error("raw client", "HELLO was not answered");
  }
  protocol::Frame call(std::uint8_t command, std::span<const std::uint8_t> payload) {
    const std::uint32_t seq = ++seq_;
    if (transport_) {
      transport_->send(protocol::encode_request(command, seq, payload));
      return protocol::decode_frame(transport_->receive());
    }
    auto answer = client_->call(command, seq, payload);
    if (!answer)
      throw Error("raw client", fmt::format("no answer to {}", protocol::command_name(command)));
    return *answer;
  }

 private:
  std::unique_ptr<Transport> transport_;
  std::unique_ptr<testing_support::RawClient> client_;
  std::uint32_t seq_ = 1;
};

std::vector<std::uint8_t> words_payload(std::initializer_list<std::uint32_t> words) {
  protocol::PayloadWriter w;
  for (const std::uint32_t v : words) w.u32(v);
  return w.take();
}

template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

class Conformance : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    preset_ = load_preset(GetParam() == "board" ? board_preset() : "small");
    backend_ = resolve(GetParam());
    device_ = open_device(backend_, preset_);
  }
  // A whole run through the host stack on this backend.
  WorkloadReport run(const Model& model) const {
    RunSettings s;
    s.backend = backend_;
    return run_model(preset_, model, s);
  }
  Preset preset_;
  std::string backend_;
  std::unique_ptr<Device> device_;
};

TEST_P(Conformance, InfoMatchesThePreset) {
  const DeviceInfo& info = device_->info();
  EXPECT_EQ(info.id, spec::kIdValue);
  EXPECT_EQ(info.config, preset_.config_csr());
  EXPECT_EQ(info.dim, preset_.dim);
  EXPECT_EQ(info.vmem_rows, preset_.vmem_rows);
  EXPECT_EQ(info.acc_rows, preset_.acc_rows);
  EXPECT_EQ(info.hbm_capacity, preset_.hbm.capacity_bytes);
  EXPECT_EQ(info.smem_words, preset_.smem_words);
  EXPECT_EQ(info.num_semaphores, spec::kNumSems);
  EXPECT_EQ(info.num_counters, spec::kNumCounters);
  EXPECT_EQ(info.backend, backend_);
}

TEST_P(Conformance, PingEchoesThePayload) {
  std::vector<std::uint8_t> payload(300);
  for (std::size_t i = 0; i < payload.size(); ++i) payload[i] = static_cast<std::uint8_t>(i * 13 + 5);
  EXPECT_EQ(device_->ping(payload), payload);
  EXPECT_TRUE(device_->ping({}).empty());
}

TEST_P(Conformance, HbmRoundTripsRandomData) {
  std::mt19937 rng(11);
  for (std::size_t size : {1u, 7u, 4096u, 3u << 20}) {
    std::vector<std::uint8_t> data(size);
    for (auto& b : data) b = static_cast<std::uint8_t>(rng());
    const std::uint64_t addr = rng() % (preset_.hbm.capacity_bytes - size);
    device_->write_hbm(addr, data);
    EXPECT_EQ(device_->read_hbm(addr, size), data) << "size " << size << " at " << addr;
  }
}

TEST_P(Conformance, SmemRoundTrips) {
  std::vector<std::uint32_t> words(preset_.smem_words);
  for (std::size_t i = 0; i < words.size(); ++i) words[i] = static_cast<std::uint32_t>(i * 2654435761u);
  device_->write_smem(0, words);
  std::vector<std::uint32_t> back(words.size());
  device_->read_smem(0, back);
  EXPECT_EQ(back, words);
}

TEST_P(Conformance, RunsAProgramAndCountsIt) {
  std::vector<std::uint8_t> src(64 * 8);
  for (std::size_t i = 0; i < src.size(); ++i) src[i] = static_cast<std::uint8_t>(i * 7 + 1);
  device_->write_hbm(0x1000, src);
  const Program p = assemble(
      "dma hbm=0x1000 local=0 len=64 path=hbm2vmem signal=s0\n"
      "dma hbm=0x8000 local=0 len=64 path=vmem2hbm wait=s0>=1\n"
      "end\n");
  device_->load_program(0x100000, p.to_bytes());
  const RunResult r = device_->run();
  EXPECT_EQ(r.status, RunStatus::Done);
  EXPECT_EQ(device_->read_hbm(0x8000, src.size()), src);
  const Counters c = device_->counters();
  EXPECT_EQ(c.bytes_hbm_to_vmem, src.size());
  EXPECT_EQ(c.bytes_vmem_to_hbm, src.size());
  EXPECT_EQ(c.instructions_fetched, 2u);
  EXPECT_GT(c.cycles, 64u);
}

TEST_P(Conformance, VaddAndBiasedVquantAreBitExact) {
  const std::uint32_t d = preset_.dim, rows = 16;
  std::mt19937 rng(2026);
  auto int8s = [&](std::size_t n) {
    std::vector<std::int8_t> v(n);
    for (auto& x : v) x = static_cast<std::int8_t>(rng());
    return v;
  };
  const auto a = int8s(rows * d), b = int8s(rows * d), x = int8s(rows * d), w = int8s(d * d);
  std::vector<std::int32_t> bias(d);
  for (auto& v : bias) v = static_cast<std::int32_t>(rng() % 200001) - 100000;
  auto put = [&](std::uint64_t addr, const void* data, std::size_t n) {
    const auto* p = static_cast<const std::uint8_t*>(data);
    device_->write_hbm(addr, std::vector<std::uint8_t>(p, p + n));
  };
  put(0x1000, a.data(), a.size());
  put(0x2000, b.data(), b.size());
  put(0x3000, x.data(), x.size());
  put(0x4000, w.data(), w.size());
  put(0x5000, bias.data(), 4 * d);
  const std::int32_t scale = 7;
  const std::uint32_t shift = 9;
  device_->write_smem(4, std::vector<std::uint32_t>{static_cast<std::uint32_t>(-3), 5});
  const Program p = assemble(
      "dma hbm=0x1000 local=0 len=16 path=hbm2vmem\n"
      "dma hbm=0x2000 local=32 len=16 path=hbm2vmem\n"
      "dma hbm=0x3000 local=64 len=16 path=hbm2vmem\n"
      "dma hbm=0x4000 local=96 len=" + std::to_string(d) + " path=hbm2vmem\n"
      "dma hbm=0x5000 local=128 len=4 path=hbm2vmem\n"
      "nop.dma signal=s0\n"
      "nop.dma signal=s4\n"
      "vadd a=0 b=32 out=200 rows=16 wait=s0>=1\n"
      "vadd a=0 b=32 out=0 rows=16 relu\n"
      "loadw vmem=96 wait=s4>=1\n"
      "matmul vmem=64 acc=0 rows=16 signal=s2\n"
      "vquant acc=0 vmem=300 rows=16 scale=7 shift=9 bias=vmem:128 wait=s2>=1\n"
      "vquant acc=0 vmem=316 rows=16 params=smem:4 bias=vmem:128 relu signal=s3\n"
      "dma hbm=0x8000 local=200 len=16 path=vmem2hbm wait=s3>=1\n"
      "dma hbm=0x9000 local=0 len=16 path=vmem2hbm\n"
      "dma hbm=0xA000 local=300 len=32 path=vmem2hbm\n"
      "end\n");
  ASSERT_TRUE(check_program(p, preset_).empty()) << check_program(p, preset_).front();
  device_->load_program(0x100000, p.to_bytes());
  const RunResult r = device_->run();
  ASSERT_EQ(r.status, RunStatus::Done);
  auto int8_at = [&](std::uint64_t addr, std::size_t n) {
    const auto bytes = device_->read_hbm(addr, n);
    return std::vector<std::int8_t>(bytes.begin(), bytes.end());
  };
  EXPECT_EQ(int8_at(0x8000, rows * d), add_saturate(a, b, false));
  EXPECT_EQ(int8_at(0x9000, rows * d), add_saturate(a, b, true));
  const auto acc = matmul_int8(x, w, rows, d, d);
  auto want = requantize(acc, bias, scale, shift, false);
  const auto smem = requantize(acc, bias, -3, 5, true);
  want.insert(want.end(), smem.begin(), smem.end());
  EXPECT_EQ(int8_at(0xA000, 2 * rows * d), want);
  EXPECT_EQ(device_->counters().vector_add_rows, 2u * rows);
}

TEST_P(Conformance, DeadlockIsReportedWithQueueStatesAndResetRecovers) {
  const Program p = assemble("nop.mxu wait=s5>=2\nend\n");
  device_->load_program(0, p.to_bytes());
  try {
    device_->run();
    FAIL() << "a deadlocked program must not complete";
  } catch (const RunError& e) {
    EXPECT_EQ(e.result().status, RunStatus::Deadlock);
    EXPECT_TRUE(e.result().queues.mxu.head_waits);
    EXPECT_EQ(e.result().queues.mxu.wait_sem, 5u);
    EXPECT_NE(std::string(e.what()).find("s5>=2"), std::string::npos) << e.what();
  }
  device_->reset();
  device_->load_program(0, assemble("end\n").to_bytes());
  EXPECT_EQ(device_->run().status, RunStatus::Done);
}

TEST_P(Conformance, WatchdogStopsARunawayProgram) {
  std::string text;
  for (int i = 0; i < 40; ++i) text += "dma hbm=0x0 local=0 len=1000 path=hbm2vmem\n";
  device_->load_program(0x200000, assemble(text + "end\n").to_bytes());
  RunOptions o;
  o.max_cycles = 2000;
  o.throw_on_failure = false;
  EXPECT_EQ(device_->run(o).status, RunStatus::Timeout);
}

TEST_P(Conformance, OutOfRangeAccessIsAnError) {
  std::vector<std::uint8_t> data(16);
  EXPECT_THROW(device_->write_hbm(preset_.hbm.capacity_bytes - 8, data), Error);
  EXPECT_THROW(device_->read_hbm(preset_.hbm.capacity_bytes, data), Error);
}

// The core wraps SMEM_ADDR around at its size: a transfer past the end would overwrite word 0. The
// host refuses it whole, naming the range and the size, and nothing is written.
TEST_P(Conformance, SmemPastTheEndIsRefusedBeforeAnythingIsWritten) {
  const std::uint32_t words = preset_.smem_words;
  device_->write_smem(0, std::vector<std::uint32_t>{0xA0, 0xA1});
  device_->write_smem(words - 1, std::vector<std::uint32_t>{0xAF});
  EXPECT_EQ(error_of([&] {
              device_->write_smem(words - 1, std::vector<std::uint32_t>{7, 8, 9});
            }),
            fmt::format("device: write_smem: words [{}, {}) are outside SMEM ({} words)", words - 1,
                        words + 2, words));
  std::vector<std::uint32_t> many(4096), ten(10), first(2), last(1);
  EXPECT_EQ(error_of([&] { device_->read_smem(0, many); }),
            fmt::format("device: read_smem: words [0, 4096) are outside SMEM ({} words)", words));
  EXPECT_THROW(device_->read_smem(words - 6, ten), Error);
  device_->read_smem(0, first);
  device_->read_smem(words - 1, last);
  EXPECT_EQ(first, (std::vector<std::uint32_t>{0xA0, 0xA1}));
  EXPECT_EQ(last, std::vector<std::uint32_t>{0xAF});
}

// The firmware refuses the same ranges itself, OUT_OF_RANGE with the word and the count, for a
// client that does not check (a raw connection, another host's runtime); INFO reports the size.
TEST_P(Conformance, FirmwareRefusesSmemPastTheEndFromAnyClient) {
  device_.reset();  // a board takes one connection at a time
  RawFirmware fw(backend_, preset_);
  const std::uint32_t words = preset_.smem_words;
  ASSERT_EQ(fw.call(FW_CMD_WRITE_SMEM, words_payload({0, 2, 0xB0, 0xB1})).status, FW_ST_OK);
  const protocol::Frame refused =
      fw.call(FW_CMD_WRITE_SMEM, words_payload({words - 1, 3, 7, 8, 9}));
  EXPECT_EQ(refused.status, FW_ST_OUT_OF_RANGE);
  const protocol::ErrorDetail detail = protocol::decode_error_detail(refused.payload);
  EXPECT_EQ(detail.detail0, words - 1);
  EXPECT_EQ(detail.detail1, 3u);
  EXPECT_EQ(fw.call(FW_CMD_READ_SMEM, words_payload({words - 6, 10})).status, FW_ST_OUT_OF_RANGE);
  EXPECT_EQ(fw.call(FW_CMD_READ_SMEM, words_payload({0, 4096})).status, FW_ST_OUT_OF_RANGE);
  const protocol::Frame back = fw.call(FW_CMD_READ_SMEM, words_payload({0, 2}));
  ASSERT_EQ(back.status, FW_ST_OK);
  EXPECT_EQ(back.payload, words_payload({0, 2, 0xB0, 0xB1}));
  const protocol::Frame info = fw.call(FW_CMD_INFO, {});
  ASSERT_EQ(info.payload.size(), FW_INFO_SIZE);
  EXPECT_EQ(fw_get_u32(info.payload.data() + 48), words);
}

// A transfer of several chunks whose last bytes lie past the end is refused whole: its first
// chunks, inside HBM, are not written either.
TEST_P(Conformance, HbmPastTheEndIsRefusedWhole) {
  const std::uint64_t capacity = preset_.hbm.capacity_bytes;
  const std::size_t size = (2u << 20) + 16;
  const std::uint64_t addr = capacity - size + 8;
  const std::vector<std::uint8_t> before = device_->read_hbm(addr, size - 8);
  EXPECT_EQ(error_of([&] { device_->write_hbm(addr, std::vector<std::uint8_t>(size, 0x5A)); }),
            fmt::format("device: write_hbm: bytes [0x{:x}, 0x{:x}) are outside HBM ({} bytes)",
                        addr, addr + size, capacity));
  EXPECT_EQ(device_->read_hbm(addr, size - 8), before);
}

TEST_P(Conformance, SemaphoresAreSetReadAndWaitedOn) {
  device_->set_semaphore(7, 5);
  device_->set_semaphore(3, 2);
  EXPECT_EQ(device_->state().semaphores[7], 5u);
  // The DMA waits for s3 >= 2 (and takes 2), then signals s9 twice through two NOPs.
  device_->load_program(0x4000, assemble("nop.dma wait=s3>=2 signal=s9\nnop.dma signal=s9\nend\n").to_bytes());
  const RunResult r = device_->run();
  EXPECT_EQ(r.status, RunStatus::Done);
  EXPECT_EQ(r.semaphores[3], 0u);
  EXPECT_EQ(r.semaphores[9], 2u);
  EXPECT_EQ(r.semaphores[7], 5u);
  EXPECT_THROW(device_->set_semaphore(spec::kNumSems, 1), Error);
  EXPECT_THROW(device_->set_semaphore(0, 0x10000), Error);
}

TEST_P(Conformance, IllegalOpcodeStopsTheCoreWithItsPc) {
  std::vector<std::uint8_t> bytes = assemble("nop.dma\nnop.dma\nend\n").to_bytes();
  bytes[32] = 0x7f;  // instruction 1: opcode byte (word 0 bits 7:0) of no instruction
  device_->load_program(0x8000, bytes);
  RunOptions o;
  o.throw_on_failure = false;
  const RunResult r = device_->run(o);
  EXPECT_EQ(r.status, RunStatus::Error);
  EXPECT_EQ(r.error_code, static_cast<std::uint32_t>(spec::ErrorCode::IllegalOpcode));
  EXPECT_EQ(r.error_pc, 1u);
  device_->reset();
  EXPECT_EQ(device_->state().status, RunStatus::Idle);
}

// A local address beyond VMEM stops the core with error code 3 at the instruction.
TEST_P(Conformance, DmaBeyondVmemIsAnAddressError) {
  device_->load_program(0, assemble(fmt::format("nop.dma\ndma hbm=0x0 local={} len=8 path=hbm2vmem\nend\n",
                                                preset_.vmem_rows - 4)).to_bytes());
  RunOptions o;
  o.throw_on_failure = false;
  const RunResult r = device_->run(o);
  EXPECT_EQ(r.status, RunStatus::Error);
  EXPECT_EQ(r.error_code, static_cast<std::uint32_t>(spec::ErrorCode::AddressRange));
  EXPECT_EQ(r.error_pc, 1u);
}

TEST_P(Conformance, RunWhileBusyIsRefusedAndResumeFinishes) {
  std::string text;
  for (int i = 0; i < 40; ++i) text += "dma hbm=0x0 local=0 len=1000 path=hbm2vmem\n";
  device_->load_program(0x200000, assemble(text + "end\n").to_bytes());
  RunOptions o;
  o.max_cycles = 1000;
  o.throw_on_failure = false;
  ASSERT_EQ(device_->run(o).status, RunStatus::Timeout);
  EXPECT_EQ(device_->state().status, RunStatus::Busy);
  EXPECT_THROW(device_->run(o), Error);  // BUSY: a new run while one is in progress
  o.resume = true;
  o.max_cycles = 100'000'000;
  EXPECT_EQ(device_->run(o).status, RunStatus::Done);
}

// The whole host stack on the backend: the MLP laid out, compiled (planner-placed VMEM, double
// buffering, semaphores between the queues) and checked bit-exactly against the C++ reference.
TEST_P(Conformance, CompiledMlpIsBitExact) {
  const WorkloadReport r = run(model_from_workload(load_workload(TPUEMU_TEST_DATA_DIR "/mlp.json")));
  EXPECT_TRUE(r.bit_exact) << r.first_mismatch;
  EXPECT_EQ(r.checked_values, 64u * 256 + 64u * 256 + 64u * 64);  // every layer's output
  EXPECT_GT(r.counters.mxu_busy, 0u);
}

// Shapes that are not multiples of DIM: edge tiles, padding, partial weight loads.
TEST_P(Conformance, CompiledMatmulOfRaggedShapeIsBitExact) {
  const WorkloadReport r = run(model_from_workload(parse_matmul_shape("37x50x29", true, 5)));
  EXPECT_TRUE(r.bit_exact) << r.first_mismatch;
  EXPECT_EQ(r.checked_values, 37u * 29);
}

TEST_P(Conformance, ShippedModelsAreBitExact) {
  for (const char* name : {"mlp", "cnn", "ffn"}) {
    const WorkloadReport r = run(load_model(std::string(TPUEMU_EXAMPLES_DIR) + "/" + name + ".json"));
    EXPECT_TRUE(r.bit_exact) << name << ": " << r.first_mismatch;
    EXPECT_GT(r.checked_values, 0u) << name;
  }
}

// The suite runs over every backend only if the program's backend list holds every backend: the
// list tpuemu_device generates from the build's options (all on by default), as the CLI links it.
// A program with another list (unit_device: fake and remote://) names only its own.
TEST(BackendList, HoldsEveryBackendOfTheBuild) {
  Preset p;
  p.name = "small";
  try {
    open_device("fpga", p);
    ADD_FAILURE() << "backend fpga was opened";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "device: unknown backend 'fpga' (known: fake, remote://host:port, rtl, tlm, tlm-at, tlm-cycle)");
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, Conformance, ::testing::ValuesIn(backends()),
                         [](const auto& info) {
                           std::string name = info.param;
                           for (char& c : name) if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return name;
                         });

}  // namespace
}  // namespace tpuemu
