// SPDX-License-Identifier: Apache-2.0
// The session of `tpuemu serve` on the fake backend (no Verilated model runs): the preset is
// compared by its contents - for every field of every shipped preset, a preset differing in that
// one field is refused naming the field -, a device is assigned only after a valid HELLO, a fake
// server's cycles are reported approximate, and a server refuses to start without its core.
#include <utility>  // before Boost.Asio: Boost 1.74 under g++ 12 -std=c++20 needs it first

#include <gtest/gtest.h>

#include <chrono>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "loopback_server.h"
#include "raw_client.h"
#include "test_support.h"
#include "tpuemu/device/protocol.h"
#include "tpuemu/device/session.h"

namespace tpuemu {
namespace {

using nlohmann::json;
using testing_support::LoopbackServer;
using testing_support::RawClient;
using test::error_of;
using namespace std::chrono_literals;

const std::filesystem::path kPresetDir = TPUEMU_TEST_PRESET_DIR;

Preset shipped(const std::string& name) { return load_preset(name, std::span(&kPresetDir, 1)); }

ServerOptions fake(ServerOptions o = {}) {
  o.backend = "fake";
  return o;
}

// The log of a server, kept for assertions.
struct Log {
  std::mutex mutex;
  std::vector<json> events;
  ServerOptions attach(ServerOptions o) {
    o.log = [this](const std::string&, const json& fields) {
      const std::lock_guard lock(mutex);
      events.push_back(fields);
    };
    return o;
  }
  std::vector<json> wait_for(const std::string& event, std::size_t n) {
    for (int i = 0; i < 300; ++i) {
      {
        const std::lock_guard lock(mutex);
        std::vector<json> out;
        for (const json& e : events) {
          if (e.value("event", "") == event) out.push_back(e);
        }
        if (out.size() >= n || i == 299) return out;
      }
      std::this_thread::sleep_for(10ms);
    }
    return {};
  }
};

std::vector<std::uint8_t> hello_payload(std::optional<std::uint64_t> digest, std::uint32_t lo = session::kMinVersion,
                                        std::uint32_t hi = session::kMaxVersion) {
  session::Hello h;
  h.min_version = lo;
  h.max_version = hi;
  h.client = "unit test";
  h.preset_digest = digest;
  return session::encode(h);
}

// "/hbm/latency_cycles" -> "hbm.latency_cycles"
std::string dotted(const std::string& pointer) {
  std::string s = pointer.substr(1);
  std::replace(s.begin(), s.end(), '/', '.');
  return s;
}

// Every key of the preset's JSON, objects and leaves, as JSON pointers.
void keys_of(const json& j, const std::string& pointer, std::vector<std::string>& out) {
  for (const auto& [key, value] : j.items()) {
    out.push_back(pointer + "/" + key);
    if (value.is_object()) keys_of(value, pointer + "/" + key, out);
  }
}

// Values to try in place of v at `pointer`: every kind of JSON value a preset holds, and the
// values other shipped presets have there (the enumerations: "ring", "hbm2-2000", ...).
std::vector<json> candidates(const json& v, const json::json_pointer& pointer, const std::vector<json>& others) {
  std::vector<json> out;
  if (v.is_number_unsigned()) {
    const auto x = v.get<std::uint64_t>();
    for (const std::uint64_t y : {x * 2, x / 2, x + 1, x - 1, x + 64}) out.push_back(y);
  } else if (v.is_number()) {
    out.push_back(v.get<double>() * 2);
    out.push_back(v.get<double>() / 2);
  } else if (v.is_string()) {
    out.push_back(v.get<std::string>() + "-changed");
    for (const std::string e : {"open", "closed", "ring", "torus2d", "simple", "hbm"}) out.push_back(e);
  } else if (v.is_boolean()) {
    out.push_back(!v.get<bool>());
  }
  for (const json& o : others) {
    if (o.contains(pointer)) out.push_back(o[pointer]);
  }
  return out;
}

// A preset from JSON, or nullopt where the JSON is not a valid preset.
std::optional<Preset> valid_preset(const json& j) {
  try {
    return preset_from_json(JsonDocument::parse(j.dump(), "variant"));
  } catch (const Error&) {
    return std::nullopt;
  }
}

TEST(PresetDigest, CoversTheContentsNotTheName) {
  const Preset small = shipped("small");
  EXPECT_EQ(session::canonical_preset(small), to_json(small).dump());
  EXPECT_EQ(session::preset_digest(small), session::preset_digest(shipped("small")));
  Preset other = small;
  other.hbm.latency_cycles = 600;
  EXPECT_NE(session::preset_digest(other), session::preset_digest(small));
  // FNV-1a 64 of "": the offset basis (the same function on both sides of the wire).
  EXPECT_EQ(session::preset_digest(std::string_view{}), 0xcbf29ce484222325ull);
}

TEST(PresetDigest, FirstDifferenceWalksTheKeysInOrder) {
  const json a = json::parse(R"({"b": 1, "hbm": {"latency_cycles": 60, "model": "simple"}, "z": [1]})");
  json b = a;
  b["hbm"]["latency_cycles"] = 600;
  b["z"] = json::array({2});
  auto d = session::first_preset_difference(a, b);
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->field, "hbm.latency_cycles");
  EXPECT_EQ(d->ours, "60");
  EXPECT_EQ(d->theirs, "600");
  b = a;
  b["a"] = "new";  // a key only one side has, sorted first
  d = session::first_preset_difference(a, b);
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->field, "a");
  EXPECT_EQ(d->ours, "absent");
  EXPECT_EQ(d->theirs, "\"new\"");
  EXPECT_FALSE(session::first_preset_difference(a, a).has_value());
}

TEST(PresetDigest, PresetRecordsAreCheckedOnDecode) {
  const Preset small = shipped("small");
  session::PresetRecord r{session::preset_digest(small), session::canonical_preset(small), {}};
  const session::PresetRecord back = session::decode_preset_record(session::encode(r));
  EXPECT_EQ(back.canonical, r.canonical);
  EXPECT_EQ(back.preset, to_json(small));
  r.digest ^= 1;  // a text that is not the digest's
  test::expect_contains(error_of([&] { session::decode_preset_record(session::encode(r)); }), "digest");
  r.canonical = std::string(100, '[') + std::string(100, ']');  // nested past the JSON limit
  r.digest = session::preset_digest(r.canonical);
  test::expect_contains(error_of([&] { session::decode_preset_record(session::encode(r)); }), "PRESET response:1:");
}

// The acceptance test of the preset check: for every key of every shipped preset, a preset that
// differs from the server's in that key alone is refused, naming it. The keys are read from the
// preset's JSON, so a field added to presets is covered without touching this test. A variant is
// a real preset (preset_from_json accepts it) that the client opens the server with; where no
// one-key change makes a valid preset (hbm.model changes which keys exist), the key is still
// checked on the wire: its digest is refused and the difference is named.
TEST(RemoteSession, APresetDifferingInAnyOneFieldIsRefusedNamingTheField) {
  std::vector<json> all;
  for (const std::string& name : list_presets(std::span(&kPresetDir, 1))) all.push_back(to_json(shipped(name)));
  ASSERT_GE(all.size(), 2u);
  std::size_t opened = 0, on_the_wire = 0;
  const auto differing = [](const json& value, const std::vector<json>& values) {
    for (const json& v : values) {
      if (v != value) return v;
    }
    return json(nullptr);
  };
  for (const json& base : all) {
    const Preset server_preset = valid_preset(base).value();
    LoopbackServer server(server_preset.name, fake({.devices = 2}));
    std::vector<std::string> keys;
    keys_of(base, "", keys);
    std::size_t refused = 0;
    for (const std::string& key : keys) {
      SCOPED_TRACE(fmt::format("preset {}, field {}", server_preset.name, dotted(key)));
      const json::json_pointer pointer(key);
      std::vector<json> variants;
      for (const json& value : candidates(base[pointer], pointer, all)) {
        json v = base;
        v[pointer] = value;
        variants.push_back(std::move(v));
      }
      json removed = base;
      removed[pointer.parent_pointer()].erase(pointer.back());
      variants.push_back(std::move(removed));
      bool checked = false;
      for (const json& variant : variants) {
        // Exactly this key differs, in the preset as loaded (to_json of the parsed variant).
        const std::optional<Preset> p = valid_preset(variant);
        if (!p) continue;
        const json loaded = to_json(*p);
        const json patch = json::diff(base, loaded);
        if (patch.size() != 1 || patch[0]["path"] != key) continue;
        const std::string e = error_of([&] { open_device(server.backend(), *p); });
        EXPECT_NE(e.find(fmt::format("differs from it first in {}: ", dotted(key))), std::string::npos) << e;
        EXPECT_NE(e.find(fmt::format("the server's device is preset '{}'", server_preset.name)), std::string::npos) << e;
        checked = true;
        ++opened;
        ++refused;
        break;
      }
      // An object differs where one of its keys does (each checked on its own).
      if (checked || base[pointer].is_object()) continue;
      // No valid preset differs in this key alone: the wire refuses its digest all the same.
      json variant = base;
      variant[pointer] = differing(base[pointer], candidates(base[pointer], pointer, all));
      ++refused;
      RawClient c(server.server().port());
      const auto a = c.call(FW_CMD_HELLO, 1, hello_payload(session::preset_digest(variant.dump())));
      ASSERT_TRUE(a.has_value());
      EXPECT_EQ(a->status, FW_ST_PRESET_MISMATCH);
      const auto d = session::first_preset_difference(variant, base);
      ASSERT_TRUE(d.has_value());
      EXPECT_EQ(d->field, dotted(key));
      ++on_the_wire;
    }
    // The preset itself is served, on the first try.
    EXPECT_NO_THROW(open_device(server.backend(), server_preset));
    EXPECT_EQ(server.server().counters().refused, refused);
  }
  EXPECT_GE(opened, 3 * on_the_wire) << "most fields are checked through the client, not only on the wire";
}

TEST(RemoteSession, AFakeServerMakesTheClientSayCyclesAreApproximate) {
  LoopbackServer server("small", fake());
  const auto device = open_device(server.backend(), shipped("small"));
  EXPECT_NE(device->info().cycles_approximate.find("'fake' backend"), std::string::npos) << device->info().cycles_approximate;
  // In process, the fake backend says so itself.
  EXPECT_FALSE(open_device("fake", shipped("small"))->info().cycles_approximate.empty());
}

// Before a valid HELLO the server holds no device and answers HELLO and PRESET only.
TEST(RemoteSession, BeforeHelloOnlyHelloAndPresetAreAnswered) {
  LoopbackServer server("small", fake());
  const std::uint64_t digest = session::preset_digest(shipped("small"));
  RawClient c(server.server().port());
  auto a = c.call(FW_CMD_PING, 1, std::vector<std::uint8_t>{1});
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->status, FW_ST_NO_SESSION);
  EXPECT_EQ(protocol::decode_error_detail(a->payload).detail0, FW_CMD_PING);
  a = c.call(FW_CMD_PRESET, 2);
  ASSERT_TRUE(a.has_value());
  ASSERT_EQ(a->status, FW_ST_OK);
  const session::PresetRecord record = session::decode_preset_record(a->payload);
  EXPECT_EQ(record.digest, digest);
  EXPECT_EQ(record.canonical, session::canonical_preset(shipped("small")));
  // A version 1 HELLO (no digest: the name check this version replaces) is refused by version.
  a = c.call(FW_CMD_HELLO, 3, hello_payload(std::nullopt, 1, 1));
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->status, FW_ST_BAD_VERSION);
  EXPECT_EQ(protocol::decode_error_detail(a->payload).detail1, session::kMaxVersion);
  a = c.call(FW_CMD_HELLO, 4, hello_payload(std::nullopt));
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->status, FW_ST_BAD_PAYLOAD);
  a = c.call(FW_CMD_HELLO, 5, hello_payload(digest ^ 1));
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->status, FW_ST_PRESET_MISMATCH);
  a = c.call(FW_CMD_HELLO, 6, hello_payload(digest));
  ASSERT_TRUE(a.has_value());
  ASSERT_EQ(a->status, FW_ST_OK);
  const session::SessionInfo info = session::decode_session_info(a->payload);
  EXPECT_EQ(info.version, session::kMaxVersion);
  EXPECT_EQ(info.preset_digest, digest);
  EXPECT_NE(info.capabilities & session::kCyclesApproximate, 0u);
  a = c.call(FW_CMD_PING, 7, std::vector<std::uint8_t>{9});
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->status, FW_ST_OK);
  EXPECT_EQ(a->payload, std::vector<std::uint8_t>{9});
}

// A session request that decodes but names a value the command does not allow is BAD_ARGUMENT
// with the value and the limit, as the firmware answers its own commands; a layout that does not
// decode is BAD_PAYLOAD.
TEST(RemoteSession, SessionArgumentsOutOfRangeAreBadArgument) {
  LoopbackServer server("small", fake());
  RawClient c(server.server().port());
  auto a = c.call(FW_CMD_HELLO, 1, hello_payload(session::preset_digest(shipped("small"))));
  ASSERT_TRUE(a.has_value());
  ASSERT_EQ(a->status, FW_ST_OK);
  a = c.call(FW_CMD_TIMELINE_READ, 2, session::encode(session::TimelineRead{7, 0, 10}));
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->status, FW_ST_BAD_ARGUMENT);
  EXPECT_EQ(protocol::decode_error_detail(a->payload).detail0, 7u);
  EXPECT_EQ(protocol::decode_error_detail(a->payload).detail1, FW_TIMELINE_HBM);
  a = c.call(FW_CMD_TIMELINE_READ, 3, std::vector<std::uint8_t>(5));
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->status, FW_ST_BAD_PAYLOAD);
}

// The log counts the bytes that arrived, also of a frame cut short: by the client's half-close
// (answered BAD_LENGTH) and by the request timeout.
TEST(RemoteSession, TheLogCountsTheBytesOfAFrameCutShort) {
  Log log;
  LoopbackServer server("small", log.attach(fake({.devices = 2, .request_timeout = 300ms})));
  const std::vector<std::uint8_t> hello = protocol::encode_request(
      FW_CMD_HELLO, 1, hello_payload(session::preset_digest(shipped("small"))));
  const std::vector<std::uint8_t> big =
      protocol::encode_request(FW_CMD_WRITE_MEM, 2, std::vector<std::uint8_t>(FW_MAX_CHUNK + 12));
  const std::size_t sent = protocol::kHeaderSize + 500'000;
  {
    RawClient c(server.server().port());
    c.write(hello);
    ASSERT_TRUE(c.read().has_value());
    c.write(std::span(big).first(sent));
    c.shutdown_send();
    const auto a = c.read();
    ASSERT_TRUE(a.has_value());
    EXPECT_EQ(a->status, FW_ST_BAD_LENGTH);
    EXPECT_EQ(protocol::decode_error_detail(a->payload).detail1, sent - protocol::kHeaderSize);
  }
  {
    RawClient c(server.server().port());
    c.write(hello);
    ASSERT_TRUE(c.read().has_value());
    c.write(std::span(big).first(protocol::kHeaderSize + 1000));
    EXPECT_TRUE(c.closed_within(5s));
  }
  const auto sessions = log.wait_for("session", 2);
  ASSERT_EQ(sessions.size(), 2u);
  EXPECT_EQ(sessions[0].value("bytes_in", 0u), hello.size() + sent) << sessions[0].dump();
  EXPECT_EQ(sessions[1].value("bytes_in", 0u), hello.size() + protocol::kHeaderSize + 1000)
      << sessions[1].dump();
  EXPECT_NE(sessions[1].value("end", "").find("not complete within 0.3 s"), std::string::npos)
      << sessions[1].dump();
}

// A connection that never speaks holds no device: with a pool of one, the next client is served
// at once, and the silent one is closed at the HELLO timeout. "At once" is half the timeout: a
// client served only after it would take all of it. The timeout is long so that a loaded machine
// cannot blur the two: opening the device took 430-470 ms with two syntheses running, and more
// than 2 s once, with two syntheses and the test suite on the 2 cores.
TEST(RemoteSession, ASilentConnectionHoldsNoDevice) {
  Log log;
  LoopbackServer server("small", log.attach(fake({.devices = 1, .hello_timeout = 8s, .queue_timeout = 30s})));
  RawClient silent(server.server().port());
  std::this_thread::sleep_for(50ms);  // accepted before the next client connects
  const auto start = std::chrono::steady_clock::now();
  const auto device = open_device(server.backend(), shipped("small"));
  EXPECT_LT(std::chrono::steady_clock::now() - start, 4s);
  EXPECT_EQ(device->ping(std::vector<std::uint8_t>{5}), std::vector<std::uint8_t>{5});
  EXPECT_TRUE(silent.closed_within(12s));
  const auto sessions = log.wait_for("session", 1);
  ASSERT_EQ(sessions.size(), 1u);
  EXPECT_EQ(sessions[0].value("end", ""), "no valid HELLO within 8 s of connecting");
  EXPECT_TRUE(sessions[0]["device"].is_null());
}

TEST(RemoteSession, AClientBeyondThePoolIsRefusedAllDevicesBusy) {
  LoopbackServer server("small", fake({.devices = 2, .queue_timeout = 200ms}));
  const auto a = open_device(server.backend(), shipped("small"));
  const auto b = open_device(server.backend(), shipped("small"));
  EXPECT_EQ(error_of([&] { open_device(server.backend(), shipped("small")); }),
            fmt::format("device: {}: HELLO refused: all 2 devices busy (none became free within the server's queue "
                        "timeout of 0.2 s)",
                        server.backend()));
  EXPECT_EQ(server.server().counters().refused, 1u);
}

// A server at its open-files limit answers HELLO BUSY with detail0 0 (no device: no descriptor)
// and the connections it holds (tests/cli/server_test.sh drives a real one there); the client says
// so rather than "all 0 devices busy".
TEST(RemoteSession, AServerOutOfDescriptorsIsNamedByTheClient) {
  namespace asio = boost::asio;
  asio::io_context io;
  asio::ip::tcp::acceptor acceptor(io, {asio::ip::make_address("127.0.0.1"), 0});
  std::thread server([&] {
    asio::ip::tcp::socket s(io);
    acceptor.accept(s);
    std::array<std::uint8_t, protocol::kHeaderSize> header{};
    asio::read(s, asio::buffer(header));
    std::vector<std::uint8_t> payload(protocol::payload_size_from_header(header));
    asio::read(s, asio::buffer(payload));
    protocol::PayloadWriter detail;
    detail.u64(0).u64(36);
    asio::write(s, asio::buffer(protocol::encode_frame(
                       FW_TYPE_RESPONSE, header[FW_OFF_COMMAND], FW_ST_BUSY,
                       fw_get_u32(header.data() + FW_OFF_SEQ), detail.data())));
  });
  const std::string backend =
      fmt::format("remote://127.0.0.1:{}", acceptor.local_endpoint().port());
  EXPECT_EQ(error_of([&] { open_device(backend, shipped("small")); }),
            fmt::format("device: {}: HELLO refused: the server is out of file descriptors (36 "
                        "connections open); retry "
                        "when a session has ended",
                        backend));
  server.join();
}

// A preset whose core this build has not compiled: the server does not start (rather than fail
// every client's HELLO). Checked without opening a device.
TEST(Serve, RefusesToStartWithoutTheCore) {
  Preset p = shipped("small");
  p.name = "no-such-core";
  const std::string e = error_of([&] { (void)Server(p, testing_support::loopback_options({.backend = "rtl"})); });
  EXPECT_NE(e.find("no Verilated core for preset 'no-such-core'"), std::string::npos) << e;
  p = shipped("small");
  p.vmem_banks *= 2;
  EXPECT_NE(error_of([&] { (void)Server(p, testing_support::loopback_options({.backend = "rtl"})); }).find("vmem_banks"),
            std::string::npos);
  EXPECT_NO_THROW((void)Server(p, testing_support::loopback_options({.backend = "fake"})));
}

}  // namespace
}  // namespace tpuemu
