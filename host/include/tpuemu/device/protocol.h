// SPDX-License-Identifier: Apache-2.0
// Host side of the tpuemu wire protocol (docs/protocol.md): frames as C++ values, built and
// checked with the firmware's own freestanding codec (tpuemu/fw/protocol.h), so the format exists
// once. Every defect is reported as tpuemu::Error "protocol: <cause>".
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "tpuemu/base/error.h"
#include "tpuemu/fw/protocol.h"

namespace tpuemu::protocol {

inline constexpr std::size_t kHeaderSize = FW_HEADER_SIZE;
inline constexpr std::size_t kMaxPayload = FW_MAX_PAYLOAD;
inline constexpr std::size_t kMaxFrame = FW_MAX_FRAME;
inline constexpr std::size_t kMaxChunk = FW_MAX_CHUNK;

struct Frame {
  std::uint8_t type = FW_TYPE_REQUEST;
  std::uint8_t command = 0;
  std::uint8_t status = FW_ST_OK;
  std::uint32_t seq = 0;
  std::vector<std::uint8_t> payload;
};

// A complete frame (header + payload, CRC filled in). Throws when payload > kMaxPayload.
std::vector<std::uint8_t> encode_frame(std::uint8_t type, std::uint8_t command, std::uint8_t status,
                                       std::uint32_t seq, std::span<const std::uint8_t> payload);
// Same, into out (resized; its capacity is reused across calls).
void encode_frame_into(std::vector<std::uint8_t>& out, std::uint8_t type, std::uint8_t command,
                       std::uint8_t status, std::uint32_t seq,
                       std::span<const std::uint8_t> payload);
inline std::vector<std::uint8_t> encode_request(std::uint8_t command, std::uint32_t seq,
                                                std::span<const std::uint8_t> payload = {}) {
  return encode_frame(FW_TYPE_REQUEST, command, FW_ST_OK, seq, payload);
}

// A decoded frame whose payload stays in the bytes it was decoded from.
struct FrameView {
  std::uint8_t type = FW_TYPE_REQUEST;
  std::uint8_t command = 0;
  std::uint8_t status = FW_ST_OK;
  std::uint32_t seq = 0;
  std::span<const std::uint8_t> payload;
};

// Validates a complete frame (magic, version, length, CRC) and returns it. Throws Error
// "protocol: <cause>" on any defect.
FrameView decode_frame_view(std::span<const std::uint8_t> bytes);
// Same, with the payload copied out.
Frame decode_frame(std::span<const std::uint8_t> bytes);

// For stream transports: checks the first kHeaderSize bytes of a frame and returns how many
// payload bytes follow. Throws like decode_frame.
std::size_t payload_size_from_header(std::span<const std::uint8_t> header);

// The 16-byte payload of an error frame.
struct ErrorDetail {
  std::uint64_t detail0 = 0;
  std::uint64_t detail1 = 0;
};
ErrorDetail decode_error_detail(std::span<const std::uint8_t> payload);

// "CRC mismatch (frame says 0x1234abcd, computed 0x...)": the status name with its details.
// command, when known, says what the details count (OUT_OF_RANGE of an SMEM command: words).
std::string describe_status(std::uint8_t status, const ErrorDetail& detail,
                            std::uint8_t command = 0);
std::string command_name(std::uint8_t command);  // "WRITE_MEM", or "0x7f"

// Growable little-endian payload builder.
class PayloadWriter {
 public:
  PayloadWriter& u32(std::uint32_t v);
  PayloadWriter& u64(std::uint64_t v);
  PayloadWriter& bytes(std::span<const std::uint8_t> data);
  const std::vector<std::uint8_t>& data() const noexcept { return buf_; }
  std::vector<std::uint8_t> take() { return std::move(buf_); }
  void clear() { buf_.clear(); }

 private:
  std::vector<std::uint8_t> buf_;
};

// Bounded little-endian payload reader; a read past the end throws
// Error "protocol: <what>: payload too short (N bytes)".
class PayloadReader {
 public:
  PayloadReader(std::span<const std::uint8_t> payload, std::string what);
  std::uint32_t u32();
  std::uint64_t u64();
  std::span<const std::uint8_t> bytes(std::size_t n);
  std::size_t remaining() const noexcept { return fw_rd_remaining(&r_); }
  // Throws unless every byte was consumed.
  void finish() const;

 private:
  [[noreturn]] void too_short() const;
  fw_reader r_{};
  std::string what_;
};

}  // namespace tpuemu::protocol
