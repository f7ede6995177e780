// SPDX-License-Identifier: Apache-2.0
// One client connection of `tpuemu serve`: frames read one at a time (docs/protocol.md 1), each
// executed on the session's device thread, its answer written whole before the next is read - so
// a connection never holds more than one request and one answer. Before a valid HELLO there is no
// device: the few frames allowed then are answered on the I/O thread (docs/remote.md, "Sessions").
#include <fmt/format.h>

#include "server_impl.h"
#include "tpuemu/device/session.h"
#include "tpuemu/fw/protocol.h"

namespace tpuemu::serve {

namespace {

std::string seconds(std::chrono::milliseconds ms) { return fmt::format("{:g} s", static_cast<double>(ms.count()) / 1000.0); }

std::string endpoint_of(const tcp::socket& s) {
  boost::system::error_code ec;
  const tcp::endpoint e = s.remote_endpoint(ec);
  return ec ? std::string("?") : format_endpoint(e);
}

bool is_session_command(std::uint8_t command) {
  return command == FW_CMD_HELLO || command == FW_CMD_PRESET || command == FW_CMD_MEM_STATS || command == FW_CMD_TIMELINE_START ||
         command == FW_CMD_TIMELINE_STOP || command == FW_CMD_TIMELINE_READ;
}

std::string why_closed(const boost::system::error_code& ec) {
  if (ec == asio::error::eof) return "closed by the client";
  if (ec == asio::error::operation_aborted) return "aborted";
  return ec.message();
}

}  // namespace

Connection::Connection(ServerState& server, tcp::socket socket, std::uint64_t id)
    : server_(server), socket_(std::move(socket)), timer_(server.io), id_(id), client_(endpoint_of(socket_)) {
  boost::system::error_code ignored;
  socket_.set_option(tcp::no_delay(true), ignored);
}

// No device yet: a device is assigned only after a valid HELLO, so a connection that never speaks
// holds nothing, and is closed at the HELLO timeout.
void Connection::start() { read_next(); }

std::chrono::milliseconds Connection::hello_time_left() const {
  const auto left = started_ + server_.options.hello_timeout - std::chrono::steady_clock::now();
  return std::chrono::ceil<std::chrono::milliseconds>(left);
}

std::string Connection::hello_timeout_reason() const {
  return fmt::format("no valid HELLO within {} of connecting", seconds(server_.options.hello_timeout));
}

void Connection::arm_timer(std::chrono::milliseconds timeout, std::string reason) {
  const std::uint64_t generation = ++timer_generation_;
  timeout_reason_ = std::move(reason);
  timed_out_ = false;
  timer_.expires_after(timeout);
  timer_.async_wait([self = shared_from_this(), generation](const boost::system::error_code& ec) {
    if (ec || generation != self->timer_generation_ || self->state_ == State::Closed) return;
    if (self->state_ == State::Queued) {
      self->refuse(self->timeout_reason_);
    } else if (self->state_ == State::Reading) {
      // The read in progress ends first (aborted), so that the bytes of the frame cut short count.
      self->timed_out_ = true;
      boost::system::error_code ignored;
      self->socket_.cancel(ignored);
    } else {
      self->close(self->timeout_reason_);
    }
  });
}

void Connection::granted(DeviceSlot& slot) {
  slot_ = &slot;
  state_ = State::Opening;
  ++timer_generation_;
  timer_.cancel();
  server_.sessions++;
  asio::post(slot.context, [self = shared_from_this(), guard = asio::make_work_guard(server_.io)] {
    std::string failure;
    bool approximate = false;
    try {
      self->transport_ = self->server_.registry.open_transport(self->server_.options.backend, self->server_.preset,
                                                               self->server_.options.device);
      approximate = !self->transport_->cycles_approximate().empty();
    } catch (const std::exception& e) {
      failure = e.what();
    }
    asio::post(self->server_.io, [self, failure = std::move(failure), approximate] {
      if (self->state_ == State::Closed) return;
      if (!failure.empty()) {
        self->device_error(FW_CMD_HELLO, fmt::format("cannot open the device: {}", failure));
        self->answer_ = self->error_frame(FW_ST_HAL_ERROR, 0, 0);
        self->close_after_answer_ = true;
        self->close_reason_ = "cannot open the device";
      } else {
        self->cycles_approximate_ = approximate;
        self->server_.log(fmt::format("session {}: client {} says hello: '{}'", self->id_, self->client_, self->hello_client_),
                          {{"event", "hello"}, {"session", self->id_}, {"client", self->client_},
                           {"device", self->slot_->id}, {"name", self->hello_client_}});
        self->answer_ = self->hello_answer(FW_CMD_HELLO, self->hello_seq_);
      }
      self->write_answer();
    });
  });
}

// No device within the queue timeout: the HELLO waiting in header_ is answered BUSY with the
// pool's size, so the client reports why instead of a bare disconnect.
void Connection::refuse(std::string reason) {
  if (state_ == State::Closed) return;
  server_.refused++;
  answer_ = error_frame(FW_ST_BUSY, server_.options.devices, static_cast<std::uint64_t>(server_.options.queue_timeout.count()));
  close_after_answer_ = true;
  close_reason_ = std::move(reason);
  write_answer();
}

void Connection::shutdown() {
  switch (state_) {
    case State::Queued: return close("the server is shutting down");
    case State::Idle:
    case State::Reading: return close("the server is shutting down");
    case State::Opening:  // read_next() sees the stop
    case State::Processing:
    case State::Writing:
      close_after_answer_ = true;
      close_reason_ = "the server is shutting down";
      return;
    case State::Closed: return;
  }
}

void Connection::read_next() {
  if (server_.stopping) return close("the server is shutting down");
  state_ = State::Idle;
  header_.fill(0);  // an error answer echoes command and seq only from bytes that arrived
  if (slot_ == nullptr) {  // before the session: the HELLO deadline runs from connecting
    const auto left = hello_time_left();
    if (left.count() <= 0) return close(hello_timeout_reason());
    arm_timer(left, hello_timeout_reason());
  } else {
    arm_timer(server_.options.idle_timeout, fmt::format("idle for {}", seconds(server_.options.idle_timeout)));
  }
  // Bytes are counted as they arrive, so a frame cut short counts what came of it.
  asio::async_read(socket_, asio::buffer(header_.data(), 1), [self = shared_from_this()](const boost::system::error_code& ec, std::size_t n) {
    self->bytes_in_ += n;
    if (self->state_ == State::Closed) return;
    if (ec) return self->close(why_closed(ec));
    self->on_header(1);
  });
}

void Connection::on_header(std::size_t first_bytes) {
  state_ = State::Reading;
  if (slot_ == nullptr && hello_time_left() < server_.options.request_timeout) {
    arm_timer(std::max(hello_time_left(), std::chrono::milliseconds{1}), hello_timeout_reason());
  } else {
    arm_timer(server_.options.request_timeout,
              fmt::format("a frame was not complete within {} (slow or stuck client)", seconds(server_.options.request_timeout)));
  }
  asio::async_read(socket_, asio::buffer(header_.data() + first_bytes, header_.size() - first_bytes),
                   [self = shared_from_this(), first_bytes](const boost::system::error_code& ec, std::size_t n) {
    self->bytes_in_ += n;
    if (self->state_ == State::Closed) return;
    if (self->timed_out_) return self->close(self->timeout_reason_);
    if (ec == asio::error::eof) {  // the client half-closed: it may still read why its frame is refused
      return self->answer_and_close(FW_ST_TRUNCATED, first_bytes + n, protocol::kHeaderSize,
                                    "closed by the client in the middle of a frame header");
    }
    if (ec) return self->close(fmt::format("{} in the middle of a frame header", why_closed(ec)));
    fw_frame_header h{};
    std::uint64_t d0 = 0, d1 = 0;
    const int st = fw_header_check(self->header_.data(), self->header_.size(), FW_MAX_PAYLOAD, &h, &d0, &d1);
    if (st != FW_ST_OK) {
      // Magic, version or length cannot be trusted: the stream has lost its framing.
      self->answer_ = self->error_frame(static_cast<std::uint8_t>(st), d0, d1);
      self->close_after_answer_ = true;
      self->close_reason_ = fmt::format("unusable frame header ({})", fw_status_name(static_cast<std::uint8_t>(st)));
      return self->write_answer();
    }
    self->frame_.resize(protocol::kHeaderSize + h.payload_len);
    std::copy(self->header_.begin(), self->header_.end(), self->frame_.begin());
    if (h.payload_len == 0) return self->on_frame();
    asio::async_read(self->socket_, asio::buffer(self->frame_.data() + protocol::kHeaderSize, h.payload_len),
                     [self, payload_len = h.payload_len](const boost::system::error_code& ec2, std::size_t n) {
      self->bytes_in_ += n;
      if (self->state_ == State::Closed) return;
      if (self->timed_out_) return self->close(self->timeout_reason_);
      if (ec2 == asio::error::eof) {
        return self->answer_and_close(FW_ST_BAD_LENGTH, payload_len, n, "closed by the client in the middle of a frame");
      }
      if (ec2) return self->close(fmt::format("{} in the middle of a frame", why_closed(ec2)));
      self->on_frame();
    });
  });
}

// A frame cut short by the client's half-close: answered as the firmware answers a short buffer
// (docs/protocol.md 1.1), never executed, and the connection closed after the answer.
void Connection::answer_and_close(std::uint8_t status, std::uint64_t d0, std::uint64_t d1, std::string reason) {
  if (status == FW_ST_TRUNCATED) header_.fill(0);  // fewer than 20 bytes: command and seq are 0
  answer_ = error_frame(status, d0, d1);
  close_after_answer_ = true;
  close_reason_ = std::move(reason);
  write_answer();
}

void Connection::on_frame() {
  if (slot_ == nullptr) return on_greeting_frame();
  state_ = State::Processing;
  ++timer_generation_;  // a RUN takes as long as the program: no deadline while the device works
  timer_.cancel();
  asio::post(slot_->context, [self = shared_from_this(), guard = asio::make_work_guard(server_.io)] {
    self->process_on_device();
    asio::post(self->server_.io, [self] {
      if (self->state_ != State::Closed) self->write_answer();
    });
  });
}

void Connection::on_greeting_frame() {
  state_ = State::Processing;
  ++timer_generation_;
  timer_.cancel();
  if (const std::optional<protocol::Frame> request = decode_session_request()) {
    if (request->command == FW_CMD_HELLO) {
      std::optional<std::vector<std::uint8_t>> refusal;
      try {
        refusal = check_hello(*request);
      } catch (const session::BadArgument& e) {
        refusal = error_frame(FW_ST_BAD_ARGUMENT, e.value(), e.limit());
      } catch (const Error&) {
        refusal = error_frame(FW_ST_BAD_PAYLOAD, request->payload.size(), 0);
      }
      if (!refusal) {  // answered once a device is open (granted) or none came in time (refuse)
        hello_seq_ = request->seq;
        state_ = State::Queued;
        return server_.acquire(shared_from_this());
      }
      answer_ = std::move(*refusal);
    } else if (request->command == FW_CMD_PRESET) {
      answer_ = request->payload.empty()
                    ? protocol::encode_frame(FW_TYPE_RESPONSE, request->command, FW_ST_OK, request->seq,
                                             session::encode(server_.preset_record))
                    : error_frame(FW_ST_BAD_PAYLOAD, request->payload.size(), 0);
    } else {
      answer_ = error_frame(FW_ST_NO_SESSION, request->command, FW_CMD_HELLO);
    }
  }
  write_answer();
}

std::optional<protocol::Frame> Connection::decode_session_request() {
  fw_frame_header h{};
  const std::uint8_t* payload = nullptr;
  std::uint64_t d0 = 0, d1 = 0;
  const int st = fw_frame_decode(frame_.data(), frame_.size(), FW_MAX_PAYLOAD, &h, &payload, &d0, &d1);
  if (st != FW_ST_OK) {
    answer_ = error_frame(static_cast<std::uint8_t>(st), d0, d1);
    return std::nullopt;
  }
  if (h.type != FW_TYPE_REQUEST) {
    answer_ = error_frame(FW_ST_BAD_TYPE, h.type, FW_TYPE_REQUEST);
    return std::nullopt;
  }
  protocol::Frame request;
  request.command = frame_[FW_OFF_COMMAND];
  request.seq = h.seq;
  request.payload.assign(payload, payload + h.payload_len);
  return request;
}

// A preset is compared by its digest only: the server never parses a client's JSON. A client
// refused PRESET_MISMATCH asks PRESET and names the differing field itself.
std::optional<std::vector<std::uint8_t>> Connection::check_hello(const protocol::Frame& request) {
  const session::Hello hello = session::decode_hello(request.payload);
  const std::uint32_t lo = std::max(hello.min_version, session::kMinVersion);
  const std::uint32_t hi = std::min(hello.max_version, session::kMaxVersion);
  if (lo > hi) return error_frame(FW_ST_BAD_VERSION, hello.max_version, session::kMaxVersion);
  if (!hello.preset_digest) return error_frame(FW_ST_BAD_PAYLOAD, request.payload.size(), request.payload.size() + 8);
  if (*hello.preset_digest != server_.preset_record.digest) {
    server_.refused++;
    server_.log(fmt::format("session {}: client {} ('{}'): HELLO refused: its preset (digest {:016x}) is not this server's "
                            "'{}' ({:016x})",
                            id_, client_, hello.client, *hello.preset_digest, server_.preset.name, server_.preset_record.digest),
                {{"event", "refused"}, {"session", id_}, {"client", client_}, {"name", hello.client},
                 {"why", "preset mismatch"}, {"preset_digest", fmt::format("{:016x}", *hello.preset_digest)}});
    return error_frame(FW_ST_PRESET_MISMATCH, *hello.preset_digest, server_.preset_record.digest);
  }
  hello_version_ = hi;
  hello_client_ = hello.client;
  return std::nullopt;
}

std::vector<std::uint8_t> Connection::hello_answer(std::uint8_t command, std::uint32_t seq) const {
  session::SessionInfo info;
  info.version = hello_version_;
  info.device_id = slot_->id;
  info.devices = static_cast<std::uint32_t>(server_.options.devices);
  info.max_in_flight = server_.options.max_in_flight;
  info.idle_timeout_ms = static_cast<std::uint32_t>(server_.options.idle_timeout.count());
  info.request_timeout_ms = static_cast<std::uint32_t>(server_.options.request_timeout.count());
  info.capabilities = session::kCanMemStats | session::kCanTimeline | (cycles_approximate_ ? session::kCyclesApproximate : 0);
  info.preset = server_.preset.name;
  info.backend = server_.options.backend;
  info.preset_digest = server_.preset_record.digest;
  return protocol::encode_frame(FW_TYPE_RESPONSE, command, FW_ST_OK, seq, session::encode(info));
}

std::vector<std::uint8_t> Connection::error_frame(std::uint8_t status, std::uint64_t d0, std::uint64_t d1) const {
  protocol::PayloadWriter w;
  w.u64(d0).u64(d1);
  return protocol::encode_frame(FW_TYPE_RESPONSE, header_[FW_OFF_COMMAND], status, fw_get_u32(header_.data() + FW_OFF_SEQ), w.data());
}

void Connection::device_error(std::uint8_t command, const std::string& what) const {
  server_.log(fmt::format("session {}: device {}: {} failed: {}", id_, slot_->id, protocol::command_name(command), what),
              {{"event", "error"}, {"session", id_}, {"device", slot_->id}, {"command", protocol::command_name(command)},
               {"error", what}});
}

void Connection::process_on_device() {
  const std::uint8_t command = frame_[FW_OFF_COMMAND];
  if (!is_session_command(command)) {
    try {
      transport_->send(frame_);
      answer_ = transport_->receive();
    } catch (const std::exception& e) {
      device_error(command, e.what());
      answer_ = error_frame(FW_ST_HAL_ERROR, 0, 0);
    }
    return;
  }
  // Validated in the firmware's order (docs/protocol.md 1.1) before the server acts on it.
  const std::optional<protocol::Frame> request = decode_session_request();
  if (!request) return;
  try {
    answer_ = session_command(*request);
  } catch (const session::BadArgument& e) {
    answer_ = error_frame(FW_ST_BAD_ARGUMENT, e.value(), e.limit());
  } catch (const Error& e) {
    device_error(command, e.what());
    answer_ = error_frame(FW_ST_BAD_PAYLOAD, request->payload.size(), 0);
  } catch (const std::exception& e) {
    device_error(command, e.what());
    answer_ = error_frame(FW_ST_HAL_ERROR, 0, 0);
  }
}

std::vector<std::uint8_t> Connection::session_command(const protocol::Frame& request) {
  const auto ok = [&](std::span<const std::uint8_t> payload) {
    return protocol::encode_frame(FW_TYPE_RESPONSE, request.command, FW_ST_OK, request.seq, payload);
  };
  switch (request.command) {
    case FW_CMD_HELLO:  // again, within the session: checked as the first
      if (auto refusal = check_hello(request)) return std::move(*refusal);
      return hello_answer(request.command, request.seq);
    case FW_CMD_PRESET:
      if (!request.payload.empty()) return error_frame(FW_ST_BAD_PAYLOAD, request.payload.size(), 0);
      return ok(session::encode(server_.preset_record));
    case FW_CMD_MEM_STATS:
      if (!request.payload.empty()) return error_frame(FW_ST_BAD_PAYLOAD, request.payload.size(), 0);
      return ok(session::encode(transport_->memory_statistics()));
    case FW_CMD_TIMELINE_START:
      if (!request.payload.empty()) return error_frame(FW_ST_BAD_PAYLOAD, request.payload.size(), 0);
      if (!transport_->begin_timeline()) return error_frame(FW_ST_BAD_ARGUMENT, 0, 0);
      timeline_active_ = true;
      return ok({});
    case FW_CMD_TIMELINE_STOP: {
      if (!request.payload.empty()) return error_frame(FW_ST_BAD_PAYLOAD, request.payload.size(), 0);
      if (!timeline_active_) return error_frame(FW_ST_BAD_ARGUMENT, 0, 0);
      timeline_active_ = false;
      timeline_ = RunResult{};
      transport_->end_timeline(timeline_);
      const session::TimelineSize size{static_cast<std::uint32_t>(timeline_.timeline.size()),
                                       static_cast<std::uint32_t>(timeline_.hbm_timeline.size())};
      return ok(session::encode(size));
    }
    case FW_CMD_TIMELINE_READ: {
      const session::TimelineRead read = session::decode_timeline_read(request.payload);
      return ok(session::encode_timeline_page(read, timeline_));
    }
    default:
      return error_frame(FW_ST_UNKNOWN_COMMAND, request.command, 0);
  }
}

void Connection::write_answer() {
  state_ = State::Writing;
  arm_timer(server_.options.request_timeout,
            fmt::format("the client did not take an answer within {}", seconds(server_.options.request_timeout)));
  asio::async_write(socket_, asio::buffer(answer_), [self = shared_from_this()](const boost::system::error_code& ec, std::size_t n) {
    if (self->state_ == State::Closed) return;
    if (ec) return self->close(fmt::format("{} while answering", why_closed(ec)));
    self->bytes_out_ += n;
    self->frames_++;
    self->server_.frames++;
    if (self->close_after_answer_) return self->close(self->close_reason_);
    self->read_next();
  });
}

void Connection::close(std::string reason) {
  if (state_ == State::Closed) return;
  state_ = State::Closed;
  ++timer_generation_;
  timer_.cancel();
  boost::system::error_code ignored;
  socket_.shutdown(tcp::socket::shutdown_both, ignored);
  socket_.close(ignored);
  server_.bytes_in += bytes_in_;
  server_.bytes_out += bytes_out_;
  const double duration = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  const std::string device = slot_ != nullptr ? std::to_string(slot_->id) : std::string("none");
  server_.log(fmt::format("session {}: client {} device {}: {} frames, {} B in, {} B out, {:.3f} s: {}", id_, client_, device,
                          frames_, bytes_in_, bytes_out_, duration, reason),
              {{"event", "session"}, {"session", id_}, {"client", client_},
               {"device", slot_ != nullptr ? nlohmann::json(slot_->id) : nlohmann::json(nullptr)}, {"frames", frames_},
               {"bytes_in", bytes_in_}, {"bytes_out", bytes_out_}, {"seconds", duration}, {"end", reason}});
  server_.forget(this);
  if (slot_ == nullptr) return;
  // The device is closed on its own thread (it was opened there), then handed to the next client.
  DeviceSlot* slot = std::exchange(slot_, nullptr);
  asio::post(slot->context, [transport = std::move(transport_), &server = server_, slot, guard = asio::make_work_guard(server_.io)]() mutable {
    transport.reset();
    asio::post(server.io, [&server, slot] { server.release(*slot); });
  });
}

}  // namespace tpuemu::serve
