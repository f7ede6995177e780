// SPDX-License-Identifier: Apache-2.0
// The "remote://host:port" backend: the wire protocol over TCP (Boost.Asio) to `tpuemu serve` or
// a board's network front end. Every socket operation has a deadline; a lost or silent server is
// one Error naming the server and the request that was pending. docs/remote.md.
#include <utility>  // before Boost.Asio: Boost 1.74 under g++ 12 -std=c++20 needs it first

#include <boost/asio.hpp>

#include <deque>
#include <thread>

#include <fmt/chrono.h>
#include <fmt/format.h>

#include "tpuemu/device/backend_registry.h"
#include "remote_address.h"
#include "tpuemu/config/config.h"
#include "tpuemu/device/protocol.h"
#include "tpuemu/device/session.h"

namespace tpuemu {

namespace {

namespace asio = boost::asio;
using asio::ip::tcp;
using std::chrono::milliseconds;

// Session requests (HELLO, MEM_STATS, TIMELINE_*) number their frames from here, so their seq never
// meets the firmware device's, which counts from 1.
constexpr std::uint32_t kSessionSeqBase = 0x80000000u;

std::string seconds(milliseconds ms) { return fmt::format("{:g} s", static_cast<double>(ms.count()) / 1000.0); }

class RemoteTransport final : public Transport {
 public:
  RemoteTransport(RemoteAddress address, const Preset& preset)
      : address_(std::move(address)), socket_(io_) {
    connect();
    hello(preset);
  }

  ~RemoteTransport() override {
    boost::system::error_code ignored;
    socket_.shutdown(tcp::socket::shutdown_both, ignored);
    socket_.close(ignored);
  }

  void send(std::span<const std::uint8_t> frame) override {
    const Pending p = pending_of(frame);
    write_all(frame, address_.timeout, describe(p));
    pending_.push_back(p);
  }

  std::vector<std::uint8_t> receive() override {
    if (pending_.empty()) fail("receive without a pending request");
    const Pending p = pending_.front();
    std::vector<std::uint8_t> frame = read_frame(p);
    pending_.pop_front();
    return frame;
  }

  std::string name() const override { return address_.name; }
  std::size_t max_in_flight() const override { return session_.max_in_flight; }
  std::string cycles_approximate() const override {
    if ((session_.capabilities & session::kCyclesApproximate) == 0) return {};
    return fmt::format("the server simulates the device with its '{}' backend, whose cycles are approximate", session_.backend);
  }

  std::optional<MemoryStatistics> memory_statistics() const override {
    if ((session_.capabilities & session::kCanMemStats) == 0) return std::nullopt;
    return session::decode_memory_statistics(session_call(FW_CMD_MEM_STATS, {}));
  }

  bool begin_timeline() override {
    if ((session_.capabilities & session::kCanTimeline) == 0) return false;
    session_call(FW_CMD_TIMELINE_START, {});
    return true;
  }

  void end_timeline(RunResult& r) override {
    const session::TimelineSize size = session::decode_timeline_size(session_call(FW_CMD_TIMELINE_STOP, {}));
    r.timeline.clear();
    r.hbm_timeline.clear();
    r.timeline.reserve(size.events);
    for (const auto& [which, total] : {std::pair{FW_TIMELINE_EVENTS, size.events}, std::pair{FW_TIMELINE_HBM, size.hbm_intervals}}) {
      for (std::uint32_t first = 0; first < total;) {
        const session::TimelineRead read{which, first, session::max_records_per_page(which)};
        const std::uint32_t n = session::decode_timeline_page(session_call(FW_CMD_TIMELINE_READ, session::encode(read)), read, r);
        if (n == 0) fail(fmt::format("TIMELINE_READ: the server has {} records of kind {}, sent {}", total, which, first));
        first += n;
      }
    }
  }

 private:
  struct Pending {
    std::uint8_t command = 0;
    std::uint32_t seq = 0;
  };

  static Pending pending_of(std::span<const std::uint8_t> frame) {
    Pending p;
    if (frame.size() >= protocol::kHeaderSize) {
      p.command = frame[FW_OFF_COMMAND];
      p.seq = fw_get_u32(frame.data() + FW_OFF_SEQ);
    }
    return p;
  }

  static std::string describe(const Pending& p) {
    return fmt::format("{} (seq {})", protocol::command_name(p.command), p.seq);
  }

  [[noreturn]] void fail(std::string_view cause) const {
    boost::system::error_code ignored;
    socket_.close(ignored);
    broken_ = true;
    pending_.clear();  // no answer will come
    throw Error("device", fmt::format("{}: {}", address_.name, cause));
  }

  std::string io_failure(const boost::system::error_code& ec, std::string_view what) const {
    if (ec == asio::error::eof) return fmt::format("the server closed the connection while {} was pending", what);
    if (ec == asio::error::connection_reset || ec == asio::error::broken_pipe)
      return fmt::format("the connection was reset while {} was pending ({})", what, ec.message());
    return fmt::format("{} failed: {}", what, ec.message());
  }

  // Runs one asynchronous operation to its end or its deadline (0: none).
  template <class Start>
  boost::system::error_code run_io(Start start, milliseconds timeout, std::string_view what) const {
    if (broken_) fail(fmt::format("the connection is lost; {} cannot be sent", what));
    boost::system::error_code result = asio::error::would_block;
    start([&result](const boost::system::error_code& ec, auto&&...) { result = ec; });
    io_.restart();
    if (timeout.count() > 0) {
      io_.run_for(timeout);
    } else {
      io_.run();
    }
    if (result == asio::error::would_block) {  // the deadline passed: cancel and let the handler run
      boost::system::error_code ignored;
      socket_.close(ignored);
      io_.restart();
      io_.run();
      broken_ = true;
      throw Error("device", fmt::format("{}: no answer to {} within {} (the server is gone or stuck)", address_.name,
                                        what, seconds(timeout)));
    }
    return result;
  }

  void write_all(std::span<const std::uint8_t> bytes, milliseconds timeout, std::string_view what) const {
    const auto ec = run_io([&](auto handler) { asio::async_write(socket_, asio::buffer(bytes.data(), bytes.size()), handler); },
                           timeout, what);
    if (ec) fail(io_failure(ec, what));
  }

  void read_exact(std::uint8_t* data, std::size_t n, milliseconds timeout, std::string_view what) const {
    const auto ec = run_io([&](auto handler) { asio::async_read(socket_, asio::buffer(data, n), handler); }, timeout, what);
    if (ec) fail(io_failure(ec, what));
  }

  // One whole frame, framed as docs/protocol.md 1 says: the header, its check, then the payload.
  std::vector<std::uint8_t> read_frame(const Pending& p) const {
    const std::string what = describe(p);
    const milliseconds timeout = p.command == FW_CMD_RUN ? address_.run_timeout : address_.timeout;
    std::vector<std::uint8_t> frame(protocol::kHeaderSize);
    read_exact(frame.data(), frame.size(), timeout, what);
    std::size_t payload = 0;
    try {
      payload = protocol::payload_size_from_header(frame);
    } catch (const Error& e) {
      fail(fmt::format("bad answer to {}: {}", what, e.what()));
    }
    frame.resize(protocol::kHeaderSize + payload);
    read_exact(frame.data() + protocol::kHeaderSize, payload, address_.timeout, what);
    return frame;
  }

  // A session request: sent and answered at once, checked like the firmware device checks its own.
  std::vector<std::uint8_t> session_call(std::uint8_t command, std::span<const std::uint8_t> payload) const {
    if (!pending_.empty()) fail(fmt::format("{} while {} answers are pending", protocol::command_name(command), pending_.size()));
    const Pending p{command, kSessionSeqBase + next_session_seq_++};
    const std::vector<std::uint8_t> request = protocol::encode_request(command, p.seq, payload);
    write_all(request, address_.timeout, describe(p));
    const protocol::Frame resp = [&] {
      try {
        return protocol::decode_frame(read_frame(p));
      } catch (const Error& e) {
        if (broken_) throw;
        fail(fmt::format("bad answer to {}: {}", describe(p), e.what()));
      }
    }();
    if (resp.type != FW_TYPE_RESPONSE || resp.seq != p.seq || resp.command != command)
      fail(fmt::format("the answer to {} is {} (seq {})", describe(p), protocol::command_name(resp.command), resp.seq));
    if (resp.status != FW_ST_OK) {
      last_status_ = resp.status;
      last_detail_ = protocol::decode_error_detail(resp.payload);
      throw Error("device", fmt::format("{}: {} failed: {}", address_.name, protocol::command_name(command),
                                        protocol::describe_status(resp.status, protocol::decode_error_detail(resp.payload))));
    }
    return resp.payload;
  }

  // Connecting is the one step retried: nothing has been sent, so a refused attempt (the server is
  // still starting) costs nothing. Once a session holds a device nothing is retried - the device's
  // memory belongs to that session and does not survive it.
  void connect() {
    const auto deadline = std::chrono::steady_clock::now() + address_.connect_timeout;
    tcp::resolver resolver(io_);
    std::string last_error = "timed out";
    for (milliseconds backoff{20};; backoff = std::min(backoff * 2, milliseconds{500})) {
      const auto left = std::chrono::duration_cast<milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) break;
      tcp::resolver::results_type endpoints;
      boost::system::error_code ec = run_io([&](auto handler) {
        resolver.async_resolve(address_.host, address_.port, [&, handler](const boost::system::error_code& e, tcp::resolver::results_type r) {
          endpoints = std::move(r);
          handler(e);
        });
      }, left, "resolving the server's name");
      if (!ec) {
        ec = run_io([&](auto handler) { asio::async_connect(socket_, endpoints, handler); },
                    std::max(milliseconds{1}, std::chrono::duration_cast<milliseconds>(deadline - std::chrono::steady_clock::now())),
                    "connecting");
      }
      if (!ec) {
        socket_.set_option(tcp::no_delay(true));
        return;
      }
      last_error = ec.message();
      if (ec != asio::error::connection_refused && ec != asio::error::host_not_found_try_again) break;
      boost::system::error_code ignored;
      socket_.close(ignored);
      std::this_thread::sleep_for(std::min(backoff, std::chrono::duration_cast<milliseconds>(deadline - std::chrono::steady_clock::now())));
    }
    throw Error("device", fmt::format("{}: cannot connect within {}: {}", address_.name, seconds(address_.connect_timeout),
                                      last_error));
  }

  // The session compares the preset's contents, not its name: HELLO carries the digest of every
  // field (session::preset_digest) and the server refuses another one; this side then fetches the
  // server's preset to name the first field that differs.
  void hello(const Preset& preset) {
    const std::string canonical = session::canonical_preset(preset);
    session::Hello h;
    h.client = fmt::format("tpuemu client, preset {}", preset.name);
    h.preset_digest = session::preset_digest(canonical);
    try {
      session_ = session::decode_session_info(session_call(FW_CMD_HELLO, session::encode(h)));
    } catch (const Error&) {
      if (broken_) throw;
      if (last_status_ == FW_ST_PRESET_MISMATCH) refuse_preset(preset, canonical);
      if (last_status_ == FW_ST_BUSY && last_detail_.detail0 == 0) {
        fail(
            fmt::format("HELLO refused: the server is out of file descriptors ({} connections "
                        "open); retry when a "
                        "session has ended",
                        last_detail_.detail1));
      }
      if (last_status_ == FW_ST_BUSY) {
        const std::uint64_t n = last_detail_.detail0;
        fail(fmt::format("HELLO refused: all {} device{} busy (none became free within the server's queue timeout of {:g} s)",
                         n, n == 1 ? "" : "s", static_cast<double>(last_detail_.detail1) / 1000.0));
      }
      if (last_status_ != FW_ST_UNKNOWN_COMMAND) throw;
      // A bare firmware behind a plain byte pipe: no pipelining, no session commands, and no
      // preset but the core's sizes in its INFO record to check (docs/remote.md).
      session_ = session::SessionInfo{};
      return;
    }
    if (session_.version < session::kMinVersion || session_.version > session::kMaxVersion)
      fail(fmt::format("the server chose protocol version {}, this client speaks {}..{}", session_.version,
                       session::kMinVersion, session::kMaxVersion));
    // A server that did not compare (it should have refused): checked here as well.
    if (session_.preset_digest != *h.preset_digest) refuse_preset(preset, canonical);
    session_.max_in_flight = std::clamp<std::uint32_t>(session_.max_in_flight, 1, 64);
  }

  [[noreturn]] void refuse_preset(const Preset& preset, const std::string& canonical) {
    session::PresetRecord theirs;
    try {
      theirs = session::decode_preset_record(session_call(FW_CMD_PRESET, {}));
    } catch (const Error& e) {
      if (broken_) throw;
      fail(fmt::format("the server's device is not preset '{}' as this command's is (its preset cannot be read: {})",
                       preset.name, e.what()));
    }
    const nlohmann::json& server = theirs.preset;
    const std::string server_name =
        server.is_object() && server.contains("name") && server["name"].is_string() ? server["name"].get<std::string>() : "?";
    const auto diff = session::first_preset_difference(nlohmann::json::parse(canonical), server);
    if (!diff) fail(fmt::format("the server refused preset '{}' although its own preset has the same contents", preset.name));
    fail(fmt::format("the server's device is preset '{}'; this command's preset '{}' differs from it first in {}: {} here, "
                     "{} on the server",
                     server_name, preset.name, diff->field, diff->ours, diff->theirs));
  }

  RemoteAddress address_;
  mutable asio::io_context io_;
  mutable tcp::socket socket_;
  mutable std::deque<Pending> pending_;
  session::SessionInfo session_;
  mutable std::uint32_t next_session_seq_ = 0;
  mutable bool broken_ = false;
  mutable std::uint8_t last_status_ = FW_ST_OK;
  mutable protocol::ErrorDetail last_detail_;
};

std::unique_ptr<Device> open_remote(std::string_view backend, const Preset& preset, const DeviceOptions& options) {
  RemoteAddress address = parse_remote_address(backend);
  // The simulation's knobs are the server's (tpuemu serve): refused here, never ignored.
  if (!options.trace_fst.empty())
    throw Error("device", fmt::format("{}: a waveform is recorded by the server (tpuemu serve), not by a client", backend));
  if (options.backpressure_permille != 0 || options.seed != DeviceOptions{}.seed)
    throw Error("device", fmt::format("{}: memory back-pressure is set on the server (tpuemu serve), not by a client", backend));
  if (options.board_shim_max_latency)
    throw Error("device", fmt::format("{}: the board shim is chosen on the server (tpuemu serve), not by a client", backend));
  FirmwareDeviceOptions fo;
  fo.max_chunk = options.max_chunk;
  fo.smem_words = preset.smem_words;
  return make_firmware_device(std::make_unique<RemoteTransport>(std::move(address), preset), fo);
}

}  // namespace

// Called by the backend list of each program that links it (host/src/device/CMakeLists.txt).
void register_remote_backend(DeviceBackendRegistry& registry) {
  registry.add({.name = "remote://",
                .description = "a device behind `tpuemu serve` or a board, over TCP (remote://host:port[?timeout=S])",
                .open = open_remote,
                .open_transport = {}});
}

}  // namespace tpuemu
