// SPDX-License-Identifier: Apache-2.0
// `tpuemu serve` and the remote backend on loopback: the same reports as in-process, the session
// commands, faults of the stream and of the peers, shutdown, and many clients on a small pool.
#include <utility>  // before Boost.Asio: Boost 1.74 under g++ 12 -std=c++20 needs it first

#include <boost/asio.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <mutex>
#include <random>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "loopback_server.h"
#include "raw_client.h"
#include "tpuemu/compile/model.h"
#include "tpuemu/compile/workload.h"
#include "tpuemu/device/protocol.h"
#include "tpuemu/device/session.h"
#include "tpuemu/program/program.h"
#include "tpuemu/run/runner.h"

namespace tpuemu {
namespace {

using testing_support::LoopbackServer;
using testing_support::RawClient;
namespace asio = boost::asio;
using asio::ip::tcp;
using namespace std::chrono_literals;

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "no error";
}

nlohmann::json comparable(const WorkloadReport& r) {
  nlohmann::json j = report_to_json(r);
  for (const char* volatile_key : {"backend", "simulation"}) j.erase(volatile_key);
  return j;
}

// The log of a server, kept for assertions.
struct Log {
  std::mutex mutex;
  std::vector<nlohmann::json> events;
  ServerOptions attach(ServerOptions o = {}) {
    o.log = [this](const std::string&, const nlohmann::json& fields) {
      const std::lock_guard lock(mutex);
      events.push_back(fields);
    };
    return o;
  }
  std::vector<nlohmann::json> of(const std::string& event) {
    const std::lock_guard lock(mutex);
    std::vector<nlohmann::json> out;
    for (const auto& e : events) {
      if (e.value("event", "") == event) out.push_back(e);
    }
    return out;
  }
  // Waits until n events of this kind were logged (sessions end asynchronously).
  std::vector<nlohmann::json> wait_for(const std::string& event, std::size_t n) {
    for (int i = 0; i < 500; ++i) {
      auto e = of(event);
      if (e.size() >= n) return e;
      std::this_thread::sleep_for(10ms);
    }
    return of(event);
  }
};

// A HELLO for the `small` preset the tests' servers run.
std::vector<std::uint8_t> hello_payload(std::uint32_t lo = session::kMinVersion, std::uint32_t hi = session::kMaxVersion) {
  session::Hello h;
  h.min_version = lo;
  h.max_version = hi;
  h.client = "test";
  h.preset_digest = session::preset_digest(load_preset("small"));
  return session::encode(h);
}

// ---------------------------------------------------------------------------------------------
// Same results as in-process
// ---------------------------------------------------------------------------------------------

TEST(RemoteMatchesRtl, WorkloadReportsAndTimelinesAreIdentical) {
  LoopbackServer server("small");
  const Preset preset = load_preset("small");
  const Model model = model_from_workload(load_workload(TPUEMU_TEST_DATA_DIR "/mlp.json"));
  RunSettings s;
  s.record_timeline = true;
  s.backend = "rtl";
  const WorkloadReport local = run_model(preset, model, s);
  s.backend = server.backend();
  const WorkloadReport remote = run_model(preset, model, s);
  EXPECT_TRUE(remote.bit_exact) << remote.first_mismatch;
  EXPECT_EQ(remote.backend, server.backend());
  EXPECT_EQ(comparable(remote), comparable(local));
  EXPECT_EQ(remote.counters, local.counters);
  ASSERT_EQ(remote.timelines.size(), local.timelines.size());
  for (std::size_t i = 0; i < local.timelines.size(); ++i) {
    EXPECT_EQ(remote.timelines[i].spans.size(), local.timelines[i].spans.size()) << "step " << i;
    EXPECT_FALSE(local.timelines[i].spans.empty());
  }
}

// On an HBM preset the memory statistics come over MEM_STATS, the HBM timeline over TIMELINE_READ.
TEST(RemoteMatchesRtl, HbmStatisticsCountersAndTimelineTravelOverTheProtocol) {
  LoopbackServer server("default");
  const Preset preset = load_preset("default");
  const Program p = assemble(
      "dma hbm=0x10000 local=0 len=512 path=hbm2vmem signal=s0\n"
      "dma hbm=0x80000 local=0 len=512 path=vmem2hbm wait=s0>=1\n"
      "end\n");
  auto run_on = [&](const std::string& backend) {
    auto device = open_device(backend, preset);
    std::vector<std::uint8_t> data(512 * preset.dim);
    for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<std::uint8_t>(i * 31 + 7);
    device->write_hbm(0x10000, data);
    device->load_program(0x200000, p.to_bytes());
    RunOptions o;
    o.record_timeline = true;
    const RunResult r = device->run(o);
    EXPECT_EQ(device->read_hbm(0x80000, data.size()), data) << backend;
    return std::tuple{r, device->counters(), device->memory_statistics()};
  };
  const auto [local, local_counters, local_stats] = run_on("rtl");
  const auto [remote, remote_counters, remote_stats] = run_on(server.backend());
  EXPECT_EQ(remote.cycles, local.cycles);
  EXPECT_EQ(remote_counters, local_counters);
  ASSERT_TRUE(local_stats.has_value());
  ASSERT_TRUE(remote_stats.has_value());
  EXPECT_EQ(remote_stats->to_json(), local_stats->to_json());
  EXPECT_GT(remote_stats->count("reads"), 0u);
  EXPECT_EQ(remote.timeline, local.timeline);
  EXPECT_EQ(remote.hbm_timeline, local.hbm_timeline);
  EXPECT_FALSE(remote.hbm_timeline.empty());
}

TEST(RemoteSession, HelloNegotiatesAndNamesTheDevice) {
  Log log;
  LoopbackServer server("small", log.attach({.devices = 2, .max_in_flight = 5}));
  RawClient c(server.server().port());
  c.request(FW_CMD_HELLO, 1, hello_payload(1, 3));
  const auto answer = c.read();
  ASSERT_TRUE(answer.has_value());
  ASSERT_EQ(answer->status, FW_ST_OK);
  const session::SessionInfo info = session::decode_session_info(answer->payload);
  EXPECT_EQ(info.version, session::kMaxVersion);
  EXPECT_EQ(info.devices, 2u);
  EXPECT_EQ(info.device_id, 0u);
  EXPECT_EQ(info.max_in_flight, 5u);
  EXPECT_EQ(info.preset, "small");
  EXPECT_EQ(info.backend, "rtl");
  EXPECT_EQ(info.capabilities & session::kCyclesApproximate, 0u);
  // No common version: BAD_VERSION naming both sides; the connection stays usable.
  c.request(FW_CMD_HELLO, 2, hello_payload(session::kMaxVersion + 1, session::kMaxVersion + 2));
  const auto refused = c.read();
  ASSERT_TRUE(refused.has_value());
  EXPECT_EQ(refused->status, FW_ST_BAD_VERSION);
  const protocol::ErrorDetail d = protocol::decode_error_detail(refused->payload);
  EXPECT_EQ(d.detail0, session::kMaxVersion + 2);
  EXPECT_EQ(d.detail1, session::kMaxVersion);
  c.request(FW_CMD_PING, 3, std::vector<std::uint8_t>{1, 2, 3});
  const auto pong = c.read();
  ASSERT_TRUE(pong.has_value());
  EXPECT_EQ(pong->payload, (std::vector<std::uint8_t>{1, 2, 3}));
  EXPECT_EQ(log.wait_for("hello", 1).front().value("name", ""), "test");
}

TEST(RemoteSession, PresetMismatchIsRefusedByTheClient) {
  LoopbackServer server("small");
  const std::string e = error_of([&] { open_device(server.backend(), load_preset("default")); });
  EXPECT_TRUE(e.starts_with(fmt::format("device: {}: the server's device is preset 'small'; this command's preset "
                                        "'default' differs from it first in ", server.backend()))) << e;
}

TEST(RemoteSession, PipelinedTransfersAreSplitIntoChunksAndReassembled) {
  LoopbackServer server("small", {.max_in_flight = 4});
  DeviceOptions o;
  o.max_chunk = 4096;  // 1 MiB in 256 pipelined chunks
  auto device = open_device(server.backend(), load_preset("small"), o);
  std::vector<std::uint8_t> data(1 << 20);
  std::mt19937 rng(3);
  for (auto& b : data) b = static_cast<std::uint8_t>(rng());
  device->write_hbm(12345, data);
  EXPECT_EQ(device->read_hbm(12345, data.size()), data);
  // An error in the middle of a pipelined transfer leaves the stream in step.
  EXPECT_THROW(device->read_hbm(load_preset("small").hbm.capacity_bytes - 8192, std::size_t{16384}), Error);
  EXPECT_EQ(device->ping(std::vector<std::uint8_t>{9}), std::vector<std::uint8_t>{9});
  EXPECT_GE(server.server().counters().frames, 512u);
}

// ---------------------------------------------------------------------------------------------
// Faults of the stream: error frames, and the connection kept where the framing survives
// ---------------------------------------------------------------------------------------------

TEST(RemoteFaults, BadCrcAndUnknownCommandAreAnsweredAndTheConnectionStays) {
  LoopbackServer server("small");
  RawClient c(server.server().port());
  ASSERT_EQ(c.call(FW_CMD_HELLO, 6, hello_payload()).value().status, FW_ST_OK);  // the firmware answers in a session
  auto a = c.call_with_bad_crc(FW_CMD_PING, 7, std::vector<std::uint8_t>{1, 2});
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->status, FW_ST_BAD_CRC);
  EXPECT_EQ(a->seq, 7u);
  a = c.call(0x7e, 8);
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->status, FW_ST_UNKNOWN_COMMAND);
  EXPECT_EQ(a->command, 0x7e);
  a = c.call(FW_CMD_MEM_STATS, 9, std::vector<std::uint8_t>{1});  // a session command with a payload it has not
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->status, FW_ST_BAD_PAYLOAD);
  a = c.call(FW_CMD_PING, 10, std::vector<std::uint8_t>{4});
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->status, FW_ST_OK);
  EXPECT_EQ(a->seq, 10u);
}

// Magic, version or length that cannot be trusted: one error frame, then the connection closes.
TEST(RemoteFaults, UnusableHeadersAreAnsweredThenTheConnectionCloses) {
  LoopbackServer server("small");
  struct Case {
    std::size_t offset;
    std::uint8_t value;
    std::uint8_t status;
  };
  for (const Case k : {Case{FW_OFF_MAGIC, 0x00, FW_ST_BAD_MAGIC}, Case{FW_OFF_VERSION, 2, FW_ST_BAD_VERSION},
                       Case{FW_OFF_LENGTH + 3, 0x7f, FW_ST_TOO_LARGE}}) {
    RawClient c(server.server().port());
    std::vector<std::uint8_t> frame = protocol::encode_request(FW_CMD_PING, 5);
    frame[k.offset] = k.value;
    c.write(frame);
    const auto a = c.read();
    ASSERT_TRUE(a.has_value()) << int(k.status);
    EXPECT_EQ(a->status, k.status);
    EXPECT_TRUE(c.closed_within(2s)) << int(k.status);
  }
  // The server still serves.
  EXPECT_EQ(open_device(server.backend(), load_preset("small"))->ping(std::vector<std::uint8_t>{1}).size(), 1u);
}

// A client that half-closes after part of a frame still reads why it was refused.
TEST(RemoteFaults, TruncatedFramesAreAnsweredBeforeTheConnectionCloses) {
  LoopbackServer server("small");
  const std::vector<std::uint8_t> frame = protocol::encode_request(FW_CMD_PING, 77, std::vector<std::uint8_t>(100, 5));
  {
    RawClient c(server.server().port());
    c.write(std::span(frame).first(12));
    c.shutdown_send();
    const auto a = c.read();
    ASSERT_TRUE(a.has_value());
    EXPECT_EQ(a->status, FW_ST_TRUNCATED);
    EXPECT_EQ(a->seq, 0u);  // fewer than 20 bytes: nothing to echo
    const protocol::ErrorDetail d = protocol::decode_error_detail(a->payload);
    EXPECT_EQ(d.detail0, 12u);
    EXPECT_EQ(d.detail1, 20u);
    EXPECT_TRUE(c.closed_within(2s));
  }
  {
    RawClient c(server.server().port());
    c.write(std::span(frame).first(60));
    c.shutdown_send();
    const auto a = c.read();
    ASSERT_TRUE(a.has_value());
    EXPECT_EQ(a->status, FW_ST_BAD_LENGTH);
    EXPECT_EQ(a->seq, 77u);
    EXPECT_EQ(a->command, FW_CMD_PING);
    const protocol::ErrorDetail d = protocol::decode_error_detail(a->payload);
    EXPECT_EQ(d.detail0, 100u);
    EXPECT_EQ(d.detail1, 40u);
  }
}

TEST(RemoteFaults, SlowLorisIsDroppedAtTheRequestTimeout) {
  Log log;
  LoopbackServer server("small", log.attach({.request_timeout = 400ms}));
  RawClient c(server.server().port());
  const std::vector<std::uint8_t> frame = protocol::encode_request(FW_CMD_PING, 1);
  const auto start = std::chrono::steady_clock::now();
  bool dropped = false;
  for (std::size_t i = 0; i < frame.size() && !dropped; ++i) {
    try {
      c.write(std::span(frame).subspan(i, 1));
    } catch (const std::exception&) {
      dropped = true;
    }
    dropped = dropped || c.closed_within(150ms);
  }
  EXPECT_TRUE(dropped);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
  const auto sessions = log.wait_for("session", 1);
  ASSERT_EQ(sessions.size(), 1u);
  EXPECT_NE(sessions[0].value("end", "").find("not complete within 0.4 s"), std::string::npos) << sessions[0].dump();
}

TEST(RemoteFaults, IdleSessionIsClosed) {
  LoopbackServer server("small", {.idle_timeout = 300ms});
  RawClient c(server.server().port());
  c.request(FW_CMD_HELLO, 1, hello_payload());
  ASSERT_TRUE(c.read().has_value());
  EXPECT_TRUE(c.closed_within(3s));
}

// A client that dies in the middle of a frame frees its device for the next one.
TEST(RemoteFaults, ClientKilledMidFrameFreesItsDevice) {
  Log log;
  LoopbackServer server("small", log.attach({.devices = 1}));
  {
    RawClient c(server.server().port());
    c.request(FW_CMD_HELLO, 1, hello_payload());
    ASSERT_TRUE(c.read().has_value());
    const std::vector<std::uint8_t> frame = protocol::encode_request(FW_CMD_WRITE_MEM, 2, std::vector<std::uint8_t>(4096, 1));
    c.write(std::span(frame).first(1000));
    c.close();
  }
  auto device = open_device(server.backend(), load_preset("small"));
  EXPECT_EQ(device->info().hbm_capacity, load_preset("small").hbm.capacity_bytes);
  const auto sessions = log.wait_for("session", 1);
  ASSERT_GE(sessions.size(), 1u);
  EXPECT_NE(sessions[0].value("end", "").find("in the middle of a frame"), std::string::npos) << sessions[0].dump();
}

// Every device held: a new client waits queue_timeout, then its HELLO is answered BUSY.
TEST(RemoteFaults, ClientBeyondThePoolIsRefusedWithBusy) {
  LoopbackServer server("small", {.devices = 1, .queue_timeout = 200ms});
  auto holder = open_device(server.backend(), load_preset("small"));
  const std::string e = error_of([&] { open_device(server.backend(), load_preset("small")); });
  EXPECT_NE(e.find("HELLO refused: all 1 device busy"), std::string::npos) << e;
  EXPECT_NE(e.find(server.backend()), std::string::npos) << e;
  EXPECT_EQ(server.server().counters().refused, 1u);
  holder.reset();  // the device is free again
  EXPECT_NO_THROW(open_device(server.backend(), load_preset("small")));
}

TEST(RemoteFaults, ServerGoneIsOneErrorNamingServerAndRequest) {
  auto server = std::make_unique<LoopbackServer>("small");
  const std::string name = server->backend();
  auto device = open_device(name, load_preset("small"));
  server.reset();  // stops: the idle session is closed
  const std::string e = error_of([&] { device->ping(std::vector<std::uint8_t>{1}); });
  EXPECT_TRUE(e.starts_with("device: " + name + ": ")) << e;
  EXPECT_NE(e.find("PING (seq "), std::string::npos) << e;
  // and nothing after that pretends to work
  EXPECT_THROW(device->counters(), Error);
}

TEST(RemoteFaults, ServerSilentPastTheTimeoutIsReported) {
  // A listener that accepts and never answers: a stuck server.
  asio::io_context io;
  tcp::acceptor acceptor(io, {asio::ip::make_address("127.0.0.1"), 0});
  std::thread t([&] {
    tcp::socket s(io);
    acceptor.accept(s);
    std::this_thread::sleep_for(1500ms);
  });
  const std::string name = fmt::format("remote://127.0.0.1:{}?timeout=0.3", acceptor.local_endpoint().port());
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(error_of([&] { open_device(name, load_preset("small")); }),
            fmt::format("device: {}: no answer to HELLO (seq 2147483648) within 0.3 s (the server is gone or stuck)", name));
  EXPECT_LT(std::chrono::steady_clock::now() - start, 1200ms);
  t.join();
}

// stop() while a RUN is in flight: the RUN is answered, then the connection closes.
TEST(RemoteShutdown, RequestInFlightIsAnsweredBeforeTheServerStops) {
  auto server = std::make_unique<LoopbackServer>("small");
  auto device = open_device(server->backend(), load_preset("small"));
  std::string text;
  for (int i = 0; i < 200; ++i) text += "dma hbm=0x0 local=0 len=1000 path=hbm2vmem\n";
  device->load_program(0x200000, assemble(text + "end\n").to_bytes());
  auto run = std::async(std::launch::async, [&] { return device->run(); });
  std::this_thread::sleep_for(100ms);
  server->server().stop();
  const RunResult r = run.get();
  EXPECT_EQ(r.status, RunStatus::Done);
  EXPECT_THROW(device->counters(), Error);  // the session is over
  server.reset();
}

// ---------------------------------------------------------------------------------------------
// Load: many clients, few devices
// ---------------------------------------------------------------------------------------------

TEST(RemoteLoad, ThirtyTwoClientsOnFourDevicesAllGetRightResults) {
  Log log;
  LoopbackServer server("small", log.attach({.devices = 4, .queue_timeout = 300s}));
  const Preset preset = load_preset("small");
  constexpr int kClients = 32, kRuns = 3;
  std::vector<std::future<std::vector<WorkloadReport>>> clients;
  for (int c = 0; c < kClients; ++c) {
    clients.push_back(std::async(std::launch::async, [&, c] {
      std::vector<WorkloadReport> out;
      // Each client its own shape and seed, so mixed-up results cannot pass.
      const Model model = model_from_workload(parse_matmul_shape(fmt::format("{}x24x16", 8 + c), true, 100 + c));
      RunSettings s;
      s.backend = server.backend();
      for (int i = 0; i < kRuns; ++i) out.push_back(run_model(preset, model, s));
      return out;
    }));
  }
  std::set<std::uint64_t> devices_used;
  for (int c = 0; c < kClients; ++c) {
    const std::vector<WorkloadReport> runs = clients[c].get();
    ASSERT_EQ(runs.size(), std::size_t{kRuns});
    for (const WorkloadReport& r : runs) {
      EXPECT_TRUE(r.bit_exact) << "client " << c << ": " << r.first_mismatch;
      EXPECT_EQ(r.checked_values, std::uint64_t(8 + c) * 16) << "client " << c;
      EXPECT_EQ(r.cycles, runs.front().cycles) << "client " << c << ": a fresh device per session, the same cycles";
    }
  }
  const auto sessions = log.wait_for("session", kClients * kRuns);
  EXPECT_EQ(sessions.size(), std::size_t{kClients * kRuns});
  for (const auto& s : sessions) devices_used.insert(s.at("device").get<std::uint64_t>());
  EXPECT_EQ(devices_used.size(), 4u);
  EXPECT_EQ(server.server().counters().refused, 0u);
}

}  // namespace
}  // namespace tpuemu
