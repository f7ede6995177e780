// SPDX-License-Identifier: Apache-2.0
// Host side of the wire protocol, on top of the firmware's freestanding codec.
#include "tpuemu/device/protocol.h"

#include <fmt/format.h>

namespace tpuemu::protocol {

namespace {
Error protocol_error(std::string_view cause) { return Error("protocol", cause); }
}  // namespace

void encode_frame_into(std::vector<std::uint8_t>& out, std::uint8_t type, std::uint8_t command,
                       std::uint8_t status, std::uint32_t seq,
                       std::span<const std::uint8_t> payload) {
  if (payload.size() > kMaxPayload)
    throw protocol_error(fmt::format("payload of {} bytes exceeds the limit of {} bytes",
                                     payload.size(), kMaxPayload));
  out.resize(kHeaderSize + payload.size());
  std::size_t n = 0;
  const int st = fw_frame_encode(type, command, status, seq, payload.data(), payload.size(),
                                 out.data(), out.size(), &n);
  if (st != FW_ST_OK || n != out.size())
    throw protocol_error(fmt::format("cannot encode a frame of {} payload bytes", payload.size()));
}

std::vector<std::uint8_t> encode_frame(std::uint8_t type, std::uint8_t command, std::uint8_t status,
                                       std::uint32_t seq, std::span<const std::uint8_t> payload) {
  std::vector<std::uint8_t> out;
  encode_frame_into(out, type, command, status, seq, payload);
  return out;
}

FrameView decode_frame_view(std::span<const std::uint8_t> bytes) {
  fw_frame_header h{};
  const std::uint8_t* payload = nullptr;
  std::uint64_t d0 = 0;
  std::uint64_t d1 = 0;
  const int st =
      fw_frame_decode(bytes.data(), bytes.size(), kMaxPayload, &h, &payload, &d0, &d1);
  if (st != FW_ST_OK)
    throw protocol_error(
        fmt::format("bad frame: {}", describe_status(static_cast<std::uint8_t>(st), {d0, d1})));
  if (h.type != FW_TYPE_REQUEST && h.type != FW_TYPE_RESPONSE)
    throw protocol_error(fmt::format("bad frame: unknown frame type {}", h.type));
  return {.type = h.type, .command = h.command, .status = h.status, .seq = h.seq,
          .payload = {payload, h.payload_len}};
}

Frame decode_frame(std::span<const std::uint8_t> bytes) {
  const FrameView v = decode_frame_view(bytes);
  return {.type = v.type, .command = v.command, .status = v.status, .seq = v.seq,
          .payload = {v.payload.begin(), v.payload.end()}};
}

std::size_t payload_size_from_header(std::span<const std::uint8_t> header) {
  fw_frame_header h{};
  std::uint64_t d0 = 0;
  std::uint64_t d1 = 0;
  const int st = fw_header_check(header.data(), header.size(), kMaxPayload, &h, &d0, &d1);
  if (st != FW_ST_OK)
    throw protocol_error(
        fmt::format("bad frame: {}", describe_status(static_cast<std::uint8_t>(st), {d0, d1})));
  return h.payload_len;
}

ErrorDetail decode_error_detail(std::span<const std::uint8_t> payload) {
  ErrorDetail d;
  if (payload.size() >= 8) d.detail0 = fw_get_u64(payload.data());
  if (payload.size() >= 16) d.detail1 = fw_get_u64(payload.data() + 8);
  return d;
}

std::string command_name(std::uint8_t command) {
  const char* n = fw_command_name(command);
  if (std::string_view(n) == "unknown") return fmt::format("0x{:02x}", command);
  return n;
}

std::string describe_status(std::uint8_t status, const ErrorDetail& d, std::uint8_t command) {
  const auto d0 = d.detail0;
  const auto d1 = d.detail1;
  switch (status) {
    case FW_ST_OK: return "ok";
    case FW_ST_TRUNCATED:
      return fmt::format("truncated frame ({} bytes, the header alone is {})", d0, d1);
    case FW_ST_BAD_MAGIC: return fmt::format("bad magic 0x{:08x} (expected 0x{:08x})", d0, d1);
    case FW_ST_BAD_VERSION:
      return fmt::format("unsupported protocol version {} (supported: {})", d0, d1);
    case FW_ST_BAD_TYPE: return fmt::format("bad frame type {} (expected {})", d0, d1);
    case FW_ST_BAD_LENGTH:
      return fmt::format("bad length: the header declares {} payload bytes, {} were received",
                         d0, d1);
    case FW_ST_BAD_CRC:
      return fmt::format("CRC mismatch (frame says 0x{:08x}, computed 0x{:08x})", d0, d1);
    case FW_ST_UNKNOWN_COMMAND: return fmt::format("unknown command 0x{:02x}", d0);
    case FW_ST_BAD_PAYLOAD:
      return fmt::format("malformed payload ({} bytes, expected {})", d0, d1);
    case FW_ST_BAD_ARGUMENT: return fmt::format("bad argument {:#x} (limit or unit {:#x})", d0, d1);
    case FW_ST_OUT_OF_RANGE:
      if (command == FW_CMD_WRITE_SMEM || command == FW_CMD_READ_SMEM)
        return fmt::format("SMEM words [{}, {}) are outside the device's SMEM", d0, d0 + d1);
      return fmt::format("address range [0x{:x}, 0x{:x}) is outside device memory", d0, d0 + d1);
    case FW_ST_TOO_LARGE: return fmt::format("too large: {} (limit {})", d0, d1);
    case FW_ST_BUSY: return fmt::format("device busy (STATUS 0x{:08x})", d0);
    case FW_ST_HAL_ERROR: return "device access failed";
    case FW_ST_NO_SESSION: return fmt::format("{} needs a session: HELLO first", command_name(static_cast<std::uint8_t>(d0)));
    case FW_ST_PRESET_MISMATCH:
      return fmt::format("the preset differs (digest 0x{:016x}, the device's 0x{:016x})", d0, d1);
    default: return fmt::format("unknown status 0x{:02x} ({:#x}, {:#x})", status, d0, d1);
  }
}

PayloadWriter& PayloadWriter::u32(std::uint32_t v) {
  const std::size_t at = buf_.size();
  buf_.resize(at + 4);
  fw_put_u32(buf_.data() + at, v);
  return *this;
}

PayloadWriter& PayloadWriter::u64(std::uint64_t v) {
  const std::size_t at = buf_.size();
  buf_.resize(at + 8);
  fw_put_u64(buf_.data() + at, v);
  return *this;
}

PayloadWriter& PayloadWriter::bytes(std::span<const std::uint8_t> data) {
  buf_.insert(buf_.end(), data.begin(), data.end());
  return *this;
}

PayloadReader::PayloadReader(std::span<const std::uint8_t> payload, std::string what)
    : what_(std::move(what)) {
  fw_reader_init(&r_, payload.data(), payload.size());
}

void PayloadReader::too_short() const {
  throw protocol_error(fmt::format("{}: payload too short ({} bytes)", what_, r_.len));
}

std::uint32_t PayloadReader::u32() {
  const std::uint32_t v = fw_rd_u32(&r_);
  if (r_.short_read) too_short();
  return v;
}

std::uint64_t PayloadReader::u64() {
  const std::uint64_t v = fw_rd_u64(&r_);
  if (r_.short_read) too_short();
  return v;
}

std::span<const std::uint8_t> PayloadReader::bytes(std::size_t n) {
  const std::uint8_t* p = fw_rd_bytes(&r_, n);
  if (r_.short_read) too_short();
  return {p, n};
}

void PayloadReader::finish() const {
  if (fw_rd_remaining(&r_) != 0)
    throw protocol_error(fmt::format("{}: {} unexpected trailing payload bytes", what_,
                                     fw_rd_remaining(&r_)));
}

}  // namespace tpuemu::protocol
