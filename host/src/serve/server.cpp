// SPDX-License-Identifier: Apache-2.0
// `tpuemu serve`: the listening socket, the device pool and the graceful stop.
#include <fcntl.h>
#include <unistd.h>

#include <csignal>

#include <fmt/format.h>

#include "server_impl.h"

namespace tpuemu {

namespace serve {

namespace {

tcp::endpoint parse_listen(const std::string& listen) {
  std::string host = listen, port;
  if (listen.starts_with('[')) {
    const auto close = listen.find(']');
    if (close != std::string::npos && close + 1 < listen.size() && listen[close + 1] == ':') {
      host = listen.substr(1, close - 1);
      port = listen.substr(close + 2);
    }
  } else if (const auto colon = listen.rfind(':'); colon != std::string::npos) {
    host = listen.substr(0, colon);
    port = listen.substr(colon + 1);
  }
  unsigned long number = 0;
  std::size_t used = 0;
  try {
    number = std::stoul(port, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (host.empty() || port.empty() || used != port.size() || number > 65535)
    throw Error("serve", fmt::format("--listen {}: expected ADDRESS:PORT, e.g. 127.0.0.1:7000 or [::1]:7000", listen));
  boost::system::error_code ec;
  const asio::ip::address address = asio::ip::make_address(host == "localhost" ? "127.0.0.1" : host, ec);
  if (ec) throw Error("serve", fmt::format("--listen {}: '{}' is not an IP address", listen, host));
  return {address, static_cast<unsigned short>(number)};
}

}  // namespace

std::string format_endpoint(const tcp::endpoint& e) {
  return e.address().is_v6() ? fmt::format("[{}]:{}", e.address().to_string(), e.port())
                             : fmt::format("{}:{}", e.address().to_string(), e.port());
}

ServerState::ServerState(Preset p, ServerOptions o)
    : preset(std::move(p)),
      preset_record{session::preset_digest(session::canonical_preset(preset)), session::canonical_preset(preset)},
      options(std::move(o)),
      registry(built_in_device_backends()) {
  if (options.devices == 0 || options.devices > 256)
    throw Error("serve", fmt::format("--devices {}: expected 1..256", options.devices));
  if (options.max_in_flight == 0) throw Error("serve", "the pipelining window must be at least 1");
  // Fails now - naming the in-process backends, or the core this build lacks - rather than at
  // every client's HELLO.
  registry.check_transport(options.backend, preset, options.device);
  const tcp::endpoint endpoint = parse_listen(options.listen);
  boost::system::error_code ec;
  acceptor.open(endpoint.protocol(), ec);
  if (!ec) acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) acceptor.bind(endpoint, ec);
  if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) throw Error("serve", fmt::format("cannot listen on {}: {}", options.listen, ec.message()));
  for (std::size_t i = 0; i < options.devices; ++i) slots.push_back(std::make_unique<DeviceSlot>(static_cast<std::uint32_t>(i)));
}

void ServerState::acquire(const std::shared_ptr<Connection>& conn) {
  if (stopping) return conn->shutdown();
  for (auto& slot : slots) {
    if (!slot->busy) {
      slot->busy = true;
      return conn->granted(*slot);
    }
  }
  waiting.push_back(conn);
  conn->arm_timer(options.queue_timeout,
                  fmt::format("all {} device{} busy for {:g} s (the queue timeout)", options.devices,
                              options.devices == 1 ? "" : "s", static_cast<double>(options.queue_timeout.count()) / 1000.0));
}

void ServerState::release(DeviceSlot& slot) {
  slot.busy = false;
  while (!waiting.empty() && !stopping) {
    const std::shared_ptr<Connection> next = std::move(waiting.front());
    waiting.pop_front();
    if (next && next->waiting_for_device()) {
      slot.busy = true;
      return next->granted(slot);
    }
  }
}

void ServerState::forget(const Connection* conn) {
  std::erase_if(waiting, [conn](const std::shared_ptr<Connection>& c) { return c.get() == conn; });
  connections.remove_if([conn](const std::weak_ptr<Connection>& w) {
    const auto c = w.lock();
    return !c || c.get() == conn;
  });
}

namespace {

// A descriptor held in reserve (/dev/null): at the open-files limit accept() fails and leaves the
// connection queued, which the listening socket reports again at once; giving the reserve up lets
// the server take that connection and refuse it instead.
class ReserveDescriptor {
 public:
  ReserveDescriptor() { acquire(); }
  ~ReserveDescriptor() { release(); }
  ReserveDescriptor(const ReserveDescriptor&) = delete;
  ReserveDescriptor& operator=(const ReserveDescriptor&) = delete;
  bool held() const { return fd_ >= 0; }
  void acquire() {
    if (fd_ < 0) fd_ = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  }
  void release() {
    if (fd_ >= 0) ::close(std::exchange(fd_, -1));
  }

 private:
  int fd_ = -1;
};

// How long a refused connection may take to send its first frame, and to take the answer: a
// client sends HELLO as soon as it has connected, so it arrives right behind the handshake (and
// is usually there when the connection is taken from the queue). Short, because refusals take
// turns with the one reserve descriptor: a queue of silent connections costs this much each.
constexpr std::chrono::milliseconds kRefusalDeadline{50};
// The largest first frame whose payload is read before the answer (a HELLO is about 60 bytes);
// the answer then does not race unread bytes, whose arrival at a closed socket would reset the
// connection before the client read it.
constexpr std::uint32_t kRefusalMaxPayload = 4096;

// A connection taken with the reserve descriptor: its first frame is read (briefly) and answered
// BUSY with detail0 0 (no device: no descriptor), detail1 the connections open, echoing its
// command and seq; then it is closed and `done` runs.
class Refusal : public std::enable_shared_from_this<Refusal> {
 public:
  Refusal(asio::io_context& io, tcp::socket socket, std::uint64_t open_connections,
          std::function<void()> done)
      : socket_(std::move(socket)),
        timer_(io),
        open_connections_(open_connections),
        done_(std::move(done)) {}
  ~Refusal() {
    boost::system::error_code ignored;
    socket_.close(ignored);
    done_();
  }

  void start() {
    timer_.expires_after(kRefusalDeadline);
    timer_.async_wait([self = shared_from_this()](const Ec& ec) {
      if (!ec) self->socket_.cancel();
    });
    asio::async_read(
        socket_, asio::buffer(header_),
        [self = shared_from_this()](const Ec& ec, std::size_t) { self->on_header(ec); });
  }

 private:
  using Ec = boost::system::error_code;

  void on_header(const Ec& ec) {
    if (ec) return stop();  // nothing came in time: closed without an answer
    const std::uint32_t payload = fw_get_u32(header_.data() + FW_OFF_LENGTH);
    if (payload > kRefusalMaxPayload) return answer();
    payload_.resize(payload);
    asio::async_read(socket_, asio::buffer(payload_),
                     [self = shared_from_this()](const Ec& read, std::size_t) {
                       if (read) return self->stop();
                       self->answer();
                     });
  }

  void answer() {
    protocol::PayloadWriter w;
    w.u64(0).u64(open_connections_);
    answer_ = protocol::encode_frame(FW_TYPE_RESPONSE, header_[FW_OFF_COMMAND], FW_ST_BUSY,
                                     fw_get_u32(header_.data() + FW_OFF_SEQ), w.data());
    asio::async_write(socket_, asio::buffer(answer_),
                      [self = shared_from_this()](const Ec&, std::size_t) {
                        Ec ignored;
                        self->socket_.shutdown(tcp::socket::shutdown_send, ignored);
                        self->stop();
                      });
  }

  // Ends the deadline: once no handler holds this, the destructor closes the connection.
  void stop() { timer_.cancel(); }

  tcp::socket socket_;
  asio::steady_timer timer_;
  std::uint64_t open_connections_;
  std::function<void()> done_;
  std::array<std::uint8_t, protocol::kHeaderSize> header_{};
  std::vector<std::uint8_t> payload_, answer_;
};

bool out_of_descriptors(const boost::system::error_code& ec) {
  return ec == asio::error::no_descriptors ||
         ec == boost::system::errc::too_many_files_open_in_system;
}

// After an accept error that no refusal cleared: the time before the next attempt, so that a
// listening socket that reports the same queued connection again does not spin the I/O thread.
constexpr std::chrono::milliseconds kAcceptBackoff{100};

}  // namespace

}  // namespace serve

struct Server::Impl {
  Impl(Preset preset, ServerOptions options)
      : state(std::move(preset), std::move(options)), backoff(state.io) {}
  // A refusal still pending when the I/O context goes finds the server gone.
  ~Impl() { alive.reset(); }

  // Accepting: a connection is served; at the open-files limit it is refused with the reserve
  // descriptor (or, while the reserve is in use, left queued until the back-off ends). An episode
  // of failures is logged once when it begins and once when accepting works again.
  void accept() {
    state.acceptor.async_accept(
        [this](const boost::system::error_code& ec, serve::tcp::socket socket) {
          on_accept(ec, std::move(socket));
        });
  }

  void on_accept(const boost::system::error_code& ec, serve::tcp::socket socket) {
    if (state.stopping || ec == serve::asio::error::operation_aborted) return;
    if (!ec) {
      end_accept_failures();
      auto conn = std::make_shared<serve::Connection>(state, std::move(socket),
                                                      state.next_session++);
      state.connections.push_back(conn);
      conn->start();
      return accept();
    }
    begin_accept_failures(ec);
    if (serve::out_of_descriptors(ec) && refuse_with_reserve()) return accept();
    backoff.expires_after(serve::kAcceptBackoff);
    backoff.async_wait([this](const boost::system::error_code&) {
      if (!state.stopping) accept();
    });
  }

  // Takes the queued connection with the reserve descriptor and refuses it; false when the reserve
  // is in use (another refusal) or nothing was queued.
  bool refuse_with_reserve() {
    if (!reserve.held()) return false;
    reserve.release();
    boost::system::error_code ec;
    serve::tcp::socket socket(state.io);
    state.acceptor.non_blocking(true, ec);
    if (!ec) state.acceptor.accept(socket, ec);
    boost::system::error_code ignored;
    state.acceptor.non_blocking(false, ignored);
    if (ec) {
      reserve.acquire();
      return false;
    }
    state.refused++;
    refused_in_episode++;
    std::make_shared<serve::Refusal>(
        state.io, std::move(socket), state.connections.size(),
        [this, server = std::weak_ptr<bool>(alive)] {
          if (server.expired()) return;
          reserve.acquire();
          backoff.cancel();  // accept again now, not at the back-off's end
        })
        ->start();
    return true;
  }

  void begin_accept_failures(const boost::system::error_code& ec) {
    if (failing_since) return;
    failing_since = std::chrono::steady_clock::now();
    refused_in_episode = 0;
    const bool descriptors = serve::out_of_descriptors(ec);
    state.log(
        fmt::format("serve: accept failed: {} ({} connections open): {}", ec.message(),
                    state.connections.size(),
                    descriptors ? "new connections are answered BUSY and closed until one ends"
                                : "accepting again every 0.1 s"),
        {{"event", "error"}, {"error", ec.message()}, {"connections", state.connections.size()}});
  }

  void end_accept_failures() {
    if (!failing_since) return;
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - *failing_since).count();
    failing_since.reset();
    state.log(
        fmt::format("serve: accepting again after {:.1f} s ({} connections refused meanwhile)",
                    seconds, refused_in_episode),
        {{"event", "accepting"}, {"seconds", seconds}, {"refused", refused_in_episode}});
  }

  void begin_stop(const std::string& why) {
    if (state.stopping) return;
    state.stopping = true;
    state.log(fmt::format("serve: stopping ({}): answering the requests in flight", why), {{"event", "stopping"}, {"why", why}});
    boost::system::error_code ignored;
    state.acceptor.close(ignored);
    backoff.cancel();
    state.signals.cancel(ignored);
    const auto connections = state.connections;  // shutdown() may remove entries
    for (const auto& w : connections) {
      if (const auto c = w.lock()) c->shutdown();
    }
  }

  serve::ServerState state;
  serve::asio::steady_timer backoff;
  serve::ReserveDescriptor reserve;
  std::optional<std::chrono::steady_clock::time_point> failing_since;  // set while accepting fails
  std::uint64_t refused_in_episode = 0;
  std::shared_ptr<bool> alive = std::make_shared<bool>(true);
};

Server::Server(Preset preset, ServerOptions options) : impl_(std::make_unique<Impl>(std::move(preset), std::move(options))) {}

Server::~Server() = default;

std::string Server::endpoint() const {
  boost::system::error_code ec;
  const serve::tcp::endpoint e = impl_->state.acceptor.local_endpoint(ec);
  return ec ? impl_->state.options.listen : serve::format_endpoint(e);
}

std::uint16_t Server::port() const {
  boost::system::error_code ec;
  return impl_->state.acceptor.local_endpoint(ec).port();
}

void Server::run() {
  serve::ServerState& s = impl_->state;
  if (s.options.stop_on_signals) {
    s.signals.add(SIGINT);
    s.signals.add(SIGTERM);
    s.signals.async_wait([this](const boost::system::error_code& ec, int signal) {
      if (!ec) impl_->begin_stop(signal == SIGINT ? "SIGINT" : "SIGTERM");
    });
  }
  s.log(fmt::format("serve: preset {} (digest {:016x}) on {}: {} {} device{} (HELLO timeout {:g} s, idle timeout {:g} s, "
                    "request timeout {:g} s)",
                    s.preset.name, s.preset_record.digest, endpoint(), s.options.devices, s.options.backend,
                    s.options.devices == 1 ? "" : "s", static_cast<double>(s.options.hello_timeout.count()) / 1000.0,
                    static_cast<double>(s.options.idle_timeout.count()) / 1000.0,
                    static_cast<double>(s.options.request_timeout.count()) / 1000.0),
        {{"event", "listening"}, {"endpoint", endpoint()}, {"port", port()}, {"preset", s.preset.name},
         {"preset_digest", fmt::format("{:016x}", s.preset_record.digest)}, {"backend", s.options.backend},
         {"devices", s.options.devices}});
  impl_->accept();
  s.io.run();
  s.log(fmt::format("serve: stopped after {} sessions ({} refused), {} frames", s.sessions.load(), s.refused.load(), s.frames.load()),
        {{"event", "stopped"}, {"sessions", s.sessions.load()}, {"refused", s.refused.load()}, {"frames", s.frames.load()}});
}

void Server::stop() {
  serve::asio::post(impl_->state.io, [this] { impl_->begin_stop("stop requested"); });
}

ServerCounters Server::counters() const {
  const serve::ServerState& s = impl_->state;
  return {s.sessions.load(), s.refused.load(), s.frames.load(), s.bytes_in.load(), s.bytes_out.load()};
}

}  // namespace tpuemu
