// SPDX-License-Identifier: Apache-2.0
// Inside the server: the device pool and one connection's state machine. Threading: everything
// here runs on the I/O thread (the caller of Server::run), except the jobs posted to a device's
// own thread, which touch only that session's transport and frame buffers while the connection
// waits for them.
#pragma once

#include <utility>  // before Boost.Asio: Boost 1.74 under g++ 12 -std=c++20 needs it first

#include <boost/asio.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "tpuemu/device/backend_registry.h"
#include "tpuemu/device/protocol.h"
#include "tpuemu/device/session.h"
#include "tpuemu/serve/server.h"

namespace tpuemu::serve {

namespace asio = boost::asio;
using asio::ip::tcp;

// "127.0.0.1:7000", "[::1]:7000": how addresses appear in logs and in remote:// names.
std::string format_endpoint(const tcp::endpoint& e);

// One device of the pool: a thread of its own that runs the session's jobs in order.
struct DeviceSlot {
  explicit DeviceSlot(std::uint32_t slot_id) : id(slot_id), thread([this] { context.run(); }) {}
  ~DeviceSlot() {
    work.reset();
    thread.join();
  }
  std::uint32_t id;
  asio::io_context context;
  asio::executor_work_guard<asio::io_context::executor_type> work{context.get_executor()};
  bool busy = false;
  std::thread thread;  // last: starts after the members it uses exist
};

class Connection;

struct ServerState {
  ServerState(Preset p, ServerOptions o);

  void log(const std::string& text, nlohmann::json fields) const {
    if (!options.log) return;
    const std::lock_guard lock(log_mutex);  // device threads log too
    options.log(text, fields);
  }
  // Gives conn a device now or queues it (first come, first served).
  void acquire(const std::shared_ptr<Connection>& conn);
  // The device is free again: the longest waiting connection gets it.
  void release(DeviceSlot& slot);
  void forget(const Connection* conn);

  Preset preset;
  session::PresetRecord preset_record;  // its canonical text and digest, what HELLO is checked against
  ServerOptions options;
  DeviceBackendRegistry registry;
  asio::io_context io;
  tcp::acceptor acceptor{io};
  asio::signal_set signals{io};
  std::vector<std::unique_ptr<DeviceSlot>> slots;
  std::deque<std::shared_ptr<Connection>> waiting;  // owned while they wait: nothing else holds them
  std::list<std::weak_ptr<Connection>> connections;
  mutable std::mutex log_mutex;
  bool stopping = false;
  std::uint64_t next_session = 1;
  std::atomic<std::uint64_t> sessions{0}, refused{0}, frames{0}, bytes_in{0}, bytes_out{0};
};

// A connection starts without a device: it reads frames and answers HELLO and PRESET itself (on
// the I/O thread) until a valid HELLO, then queues for a device; HELLO's answer is written once
// the device is open. Everything else before that is answered NO_SESSION.
class Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(ServerState& server, tcp::socket socket, std::uint64_t id);
  void start();
  // The pool's answer to a valid HELLO: a device, or none within the queue timeout (then HELLO
  // is answered BUSY).
  void granted(DeviceSlot& slot);
  void refuse(std::string reason);
  // Graceful stop: closes now when between frames, else after the answer in flight is written.
  void shutdown();
  bool waiting_for_device() const { return state_ == State::Queued; }
  // One deadline at a time: queued (then refused), idle, reading or writing (then closed).
  void arm_timer(std::chrono::milliseconds timeout, std::string reason);

 private:
  enum class State { Queued, Opening, Idle, Reading, Processing, Writing, Closed };

  void read_next();
  void on_header(std::size_t first_bytes);
  void on_frame();
  void answer_and_close(std::uint8_t status, std::uint64_t d0, std::uint64_t d1, std::string reason);
  // A frame before the session (no device): HELLO, PRESET or NO_SESSION, on the I/O thread.
  void on_greeting_frame();
  // The request checked in the firmware's order (docs/protocol.md 1.1); nullopt with answer_ set
  // to the error frame otherwise.
  std::optional<protocol::Frame> decode_session_request();
  // HELLO's checks (versions, preset digest): the error frame, or nullopt for a valid HELLO.
  std::optional<std::vector<std::uint8_t>> check_hello(const protocol::Frame& request);
  std::vector<std::uint8_t> hello_answer(std::uint8_t command, std::uint32_t seq) const;
  void process_on_device();
  void device_error(std::uint8_t command, const std::string& what) const;
  std::vector<std::uint8_t> session_command(const protocol::Frame& request);
  void write_answer();
  void close(std::string reason);
  std::vector<std::uint8_t> error_frame(std::uint8_t status, std::uint64_t d0, std::uint64_t d1) const;
  std::chrono::milliseconds hello_time_left() const;
  std::string hello_timeout_reason() const;

  ServerState& server_;
  tcp::socket socket_;
  asio::steady_timer timer_;
  std::uint64_t id_;
  std::string client_;
  State state_ = State::Queued;
  DeviceSlot* slot_ = nullptr;
  std::unique_ptr<Transport> transport_;  // used on the device's thread only
  RunResult timeline_;                    // TIMELINE_STOP's recording, read by TIMELINE_READ
  bool timeline_active_ = false;
  bool cycles_approximate_ = false;       // the opened transport's, for HELLO's capabilities
  std::uint32_t hello_version_ = 0;       // negotiated by the HELLO that got the device
  std::uint32_t hello_seq_ = 0;
  std::string hello_client_;
  std::array<std::uint8_t, protocol::kHeaderSize> header_{};
  std::vector<std::uint8_t> frame_;   // the request being read: at most one frame of the largest size
  std::vector<std::uint8_t> answer_;  // its answer
  bool close_after_answer_ = false;
  std::string close_reason_;
  std::uint64_t timer_generation_ = 0;
  std::string timeout_reason_;
  bool timed_out_ = false;  // the deadline passed while a frame was being read
  std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
  std::uint64_t frames_ = 0, bytes_in_ = 0, bytes_out_ = 0;
};

}  // namespace tpuemu::serve
