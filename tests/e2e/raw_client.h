// SPDX-License-Identifier: Apache-2.0
// A raw TCP client of the wire protocol for tests (test_remote.cpp, test_board_link.cpp): it
// writes any bytes and reads frames with a deadline, so a test can play the misbehaving peer.
#pragma once

#include <utility>  // before Boost.Asio: Boost 1.74 under g++ 12 -std=c++20 needs it first

#include <boost/asio.hpp>

#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "tpuemu/device/protocol.h"

namespace tpuemu::testing_support {

namespace raw_client_detail {
namespace asio = boost::asio;
using asio::ip::tcp;
using namespace std::chrono_literals;

// A raw TCP client that writes bytes and reads frames with a deadline: the misbehaving peer.
class RawClient {
 public:
  explicit RawClient(std::uint16_t port, const std::string& host = "127.0.0.1") : socket_(io_) {
    socket_.connect({asio::ip::make_address(host), port});
    socket_.set_option(tcp::no_delay(true));
  }
  void write(std::span<const std::uint8_t> bytes) { asio::write(socket_, asio::buffer(bytes.data(), bytes.size())); }
  void request(std::uint8_t command, std::uint32_t seq, std::span<const std::uint8_t> payload = {}) {
    write(protocol::encode_request(command, seq, payload));
  }
  // A request and its answer (nullopt: none in time).
  std::optional<protocol::Frame> call(std::uint8_t command, std::uint32_t seq, std::span<const std::uint8_t> payload = {}) {
    request(command, seq, payload);
    return read();
  }
  // The same request with its last byte flipped, so that its CRC does not match.
  std::optional<protocol::Frame> call_with_bad_crc(std::uint8_t command, std::uint32_t seq,
                                                   std::span<const std::uint8_t> payload) {
    std::vector<std::uint8_t> frame = protocol::encode_request(command, seq, payload);
    frame.back() ^= 0xff;
    write(frame);
    return read();
  }
  // The next frame, or nullopt when the server closed the connection (or nothing came in time).
  std::optional<protocol::Frame> read(std::chrono::milliseconds timeout = 5s) {
    std::vector<std::uint8_t> header(protocol::kHeaderSize);
    if (!read_exact(header.data(), header.size(), timeout)) return std::nullopt;
    const std::size_t n = protocol::payload_size_from_header(header);
    header.resize(protocol::kHeaderSize + n);
    if (!read_exact(header.data() + protocol::kHeaderSize, n, timeout)) return std::nullopt;
    return protocol::decode_frame(header);
  }
  // True when the server closes the connection within the timeout.
  bool closed_within(std::chrono::milliseconds timeout) {
    std::uint8_t byte = 0;
    return !read_exact(&byte, 1, timeout) && !timed_out_;
  }
  void close() { socket_.close(); }
  void shutdown_send() { socket_.shutdown(tcp::socket::shutdown_send); }
  bool timed_out() const { return timed_out_; }

 private:
  bool read_exact(std::uint8_t* data, std::size_t n, std::chrono::milliseconds timeout) {
    boost::system::error_code result = asio::error::would_block;
    asio::async_read(socket_, asio::buffer(data, n), [&](const boost::system::error_code& ec, std::size_t) { result = ec; });
    io_.restart();
    io_.run_for(timeout);
    timed_out_ = result == asio::error::would_block;
    if (timed_out_) {
      socket_.cancel();
      io_.restart();
      io_.run();
    }
    return !result;
  }
  asio::io_context io_;
  tcp::socket socket_;
  bool timed_out_ = false;
};

}  // namespace raw_client_detail

using raw_client_detail::RawClient;

}  // namespace tpuemu::testing_support
