// SPDX-License-Identifier: Apache-2.0
// The session commands of the wire protocol (docs/protocol.md 7): what a network front end -
// `tpuemu serve`, or a board's - answers for the connection it owns, beside the firmware's
// commands it forwards: HELLO (version negotiation, the preset's digest, device id, limits),
// PRESET (the device's preset as canonical JSON), MEM_STATS (the memory statistics of the
// device), TIMELINE_START/STOP/READ (a run's instruction and HBM timeline). Encoded and decoded
// here once, for the server and the remote backend, and so is the preset's digest: both sides
// compute it with preset_digest().
// Decoding errors throw Error "protocol: <command>: <cause>": a layout that does not decode (the
// server answers BAD_PAYLOAD), or BadArgument for a field whose value is not allowed
// (BAD_ARGUMENT).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tpuemu/config/config.h"
#include "tpuemu/device/device.h"
#include "tpuemu/device/memory_statistics.h"
#include "tpuemu/fw/protocol.h"

namespace tpuemu::session {

// A request that decodes but whose field has a value the command does not allow: answered
// BAD_ARGUMENT with the value (detail0) and the limit it broke (detail1), docs/protocol.md 2.
class BadArgument : public Error {
 public:
  BadArgument(const std::string& message, std::uint64_t value, std::uint64_t limit)
      : Error("protocol", message), value_(value), limit_(limit) {}
  std::uint64_t value() const noexcept { return value_; }
  std::uint64_t limit() const noexcept { return limit_; }

 private:
  std::uint64_t value_, limit_;
};

// The session protocol versions this build speaks: the layout of HELLO and of the other session
// commands (docs/protocol.md 6). The frame's own version byte (FW_PROTOCOL_VERSION) is separate.
// Version 2 added the preset digest to HELLO; a version 1 client (name check only) is refused.
inline constexpr std::uint32_t kMinVersion = 2;
inline constexpr std::uint32_t kMaxVersion = 2;
// Longest client name or preset/backend name in HELLO.
inline constexpr std::size_t kMaxName = 256;
// Longest canonical preset text in PRESET's answer.
inline constexpr std::size_t kMaxPresetText = 64 * 1024;

// Bits of SessionInfo::capabilities: the session commands the server answers, and what its
// device is.
inline constexpr std::uint32_t kCanMemStats = 1u << 0;
inline constexpr std::uint32_t kCanTimeline = 1u << 1;
// The server's backend counts cycles approximately (the fake backend's functional model).
inline constexpr std::uint32_t kCyclesApproximate = 1u << 2;

// The preset's contents as a session compares them: to_json(preset) as compact JSON with its keys
// sorted (every field, the name and description included), so equal presets give equal text.
std::string canonical_preset(const Preset& preset);
// FNV-1a (64 bits) of the canonical text: what HELLO carries and the server compares.
std::uint64_t preset_digest(std::string_view canonical);
inline std::uint64_t preset_digest(const Preset& preset) { return preset_digest(canonical_preset(preset)); }

// The first field in which two presets' JSON differ, walking both in canonical (sorted key) order:
// the dotted path ("hbm.latency_cycles") and each side's value as JSON text ("absent" when a side
// has no such field). nullopt when they are equal.
struct PresetDifference {
  std::string field;
  std::string ours, theirs;
};
std::optional<PresetDifference> first_preset_difference(const nlohmann::json& ours, const nlohmann::json& theirs);

struct Hello {
  std::uint32_t min_version = kMinVersion;
  std::uint32_t max_version = kMaxVersion;
  std::string client;  // for the server's log: "tpuemu 0.9 pid 1234"
  // preset_digest() of the preset the client's command asks for. Absent in a version 1 HELLO,
  // which decodes (so that the server can answer BAD_VERSION) but is never served.
  std::optional<std::uint64_t> preset_digest;
};

// HELLO's answer: the session the server granted.
struct SessionInfo {
  std::uint32_t version = kMaxVersion;   // the version both sides speak from now on
  std::uint32_t device_id = 0;           // which device of the server's pool this session holds
  std::uint32_t devices = 1;             // the pool's size
  std::uint32_t max_in_flight = 1;       // requests a client may send before reading answers
  std::uint32_t idle_timeout_ms = 0;     // the server closes a session idle for this long
  std::uint32_t request_timeout_ms = 0;  // a frame must arrive whole within this
  std::uint32_t capabilities = 0;        // kCan* bits
  std::string preset;                    // the preset the device was built for
  std::string backend;                   // what simulates it on the server: "rtl", "fake"
  std::uint64_t preset_digest = 0;       // preset_digest() of the device's preset
};

// PRESET's answer: the device's preset, for a client whose HELLO was refused PRESET_MISMATCH to
// name the field that differs.
struct PresetRecord {
  std::uint64_t digest = 0;
  std::string canonical;  // canonical_preset() text
  nlohmann::json preset;  // the text parsed (decode only)
};

std::vector<std::uint8_t> encode(const Hello& hello);
Hello decode_hello(std::span<const std::uint8_t> payload);
std::vector<std::uint8_t> encode(const SessionInfo& info);
SessionInfo decode_session_info(std::span<const std::uint8_t> payload);
std::vector<std::uint8_t> encode(const PresetRecord& record);
// Throws unless the text is JSON (nested at most JsonDocument::kMaxJsonDepth) whose digest is the
// record's.
PresetRecord decode_preset_record(std::span<const std::uint8_t> payload);

// MEM_STATS: JSON text of MemoryStatistics::to_json(), or an empty payload for none.
std::vector<std::uint8_t> encode(const std::optional<MemoryStatistics>& stats);
std::optional<MemoryStatistics> decode_memory_statistics(std::span<const std::uint8_t> payload);

// TIMELINE_STOP's answer.
struct TimelineSize {
  std::uint32_t events = 0;
  std::uint32_t hbm_intervals = 0;
};
std::vector<std::uint8_t> encode(const TimelineSize& size);
TimelineSize decode_timeline_size(std::span<const std::uint8_t> payload);

// TIMELINE_READ: which (FW_TIMELINE_EVENTS / FW_TIMELINE_HBM), first record, at most max records.
// Decoding throws BadArgument for another `which` (detail1 FW_TIMELINE_HBM, the largest kind).
struct TimelineRead {
  std::uint32_t which = FW_TIMELINE_EVENTS;
  std::uint32_t first = 0;
  std::uint32_t max = 0;
};
std::vector<std::uint8_t> encode(const TimelineRead& read);
TimelineRead decode_timeline_read(std::span<const std::uint8_t> payload);
// The most records of one kind that fit one response payload.
std::uint32_t max_records_per_page(std::uint32_t which);
// The answer: records [read.first, read.first + n) of result's timeline (n <= read.max, clipped
// to what exists). Throws Error for an unknown `which`.
std::vector<std::uint8_t> encode_timeline_page(const TimelineRead& read, const RunResult& result);
// Appends the page's records to result.timeline or result.hbm_timeline; returns how many came.
std::uint32_t decode_timeline_page(std::span<const std::uint8_t> payload, const TimelineRead& read,
                                   RunResult& result);

}  // namespace tpuemu::session
