// SPDX-License-Identifier: Apache-2.0
// `tpuemu serve`: the listening socket, the device pool and the graceful stop.
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

}  // namespace serve

struct Server::Impl {
  Impl(Preset preset, ServerOptions options) : state(std::move(preset), std::move(options)) {}

  void accept() {
    state.acceptor.async_accept([this](const boost::system::error_code& ec, serve::tcp::socket socket) {
      if (ec) {
        if (!state.stopping)
          state.log(fmt::format("serve: accept failed: {}", ec.message()), {{"event", "error"}, {"error", ec.message()}});
        if (ec == serve::asio::error::operation_aborted || state.stopping) return;
      } else {
        auto conn = std::make_shared<serve::Connection>(state, std::move(socket), state.next_session++);
        state.connections.push_back(conn);
        conn->start();
      }
      if (!state.stopping) accept();
    });
  }

  void begin_stop(const std::string& why) {
    if (state.stopping) return;
    state.stopping = true;
    state.log(fmt::format("serve: stopping ({}): answering the requests in flight", why), {{"event", "stopping"}, {"why", why}});
    boost::system::error_code ignored;
    state.acceptor.close(ignored);
    state.signals.cancel(ignored);
    const auto connections = state.connections;  // shutdown() may remove entries
    for (const auto& w : connections) {
      if (const auto c = w.lock()) c->shutdown();
    }
  }

  serve::ServerState state;
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
