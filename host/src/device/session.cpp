// SPDX-License-Identifier: Apache-2.0
// Session commands of the wire protocol (docs/protocol.md 7), encoded with the same payload
// cursors as the firmware commands.
#include "tpuemu/device/session.h"

#include <algorithm>

#include <fmt/format.h>

#include "tpuemu/device/protocol.h"

namespace tpuemu::session {

namespace {

using protocol::PayloadReader;
using protocol::PayloadWriter;

void put_name(PayloadWriter& w, const std::string& name) {
  if (name.size() > kMaxName)
    throw Error("protocol", fmt::format("name '{}...' is longer than {} bytes", name.substr(0, 32), kMaxName));
  w.u32(static_cast<std::uint32_t>(name.size()));
  w.bytes({reinterpret_cast<const std::uint8_t*>(name.data()), name.size()});
}

std::string get_name(PayloadReader& r, const char* what) {
  const std::uint32_t n = r.u32();
  if (n > kMaxName) throw Error("protocol", fmt::format("{}: name of {} bytes, the limit is {}", what, n, kMaxName));
  const auto bytes = r.bytes(n);
  return {bytes.begin(), bytes.end()};
}

void walk_difference(const nlohmann::json* ours, const nlohmann::json* theirs, const std::string& path,
                     std::optional<PresetDifference>& found) {
  if (found) return;
  const auto text = [](const nlohmann::json* v) { return v != nullptr ? v->dump() : std::string("absent"); };
  if (ours != nullptr && theirs != nullptr && ours->is_object() && theirs->is_object()) {
    // nlohmann::json keeps object keys sorted: merge both key lists in that order.
    auto a = ours->begin();
    auto b = theirs->begin();
    while (!found && (a != ours->end() || b != theirs->end())) {
      const bool take_a = b == theirs->end() || (a != ours->end() && a.key() <= b.key());
      const bool take_b = a == ours->end() || (b != theirs->end() && b.key() <= a.key());
      const std::string& key = take_a ? a.key() : b.key();
      walk_difference(take_a ? &a.value() : nullptr, take_b ? &b.value() : nullptr,
                      path.empty() ? key : path + "." + key, found);
      if (take_a) ++a;
      if (take_b) ++b;
    }
    return;
  }
  if (ours != nullptr && theirs != nullptr && *ours == *theirs) return;
  found = PresetDifference{path.empty() ? std::string("(the whole preset)") : path, text(ours), text(theirs)};
}

}  // namespace

std::string canonical_preset(const Preset& preset) { return to_json(preset).dump(); }

std::uint64_t preset_digest(std::string_view canonical) {
  std::uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a 64
  for (const char c : canonical) {
    h ^= static_cast<std::uint8_t>(c);
    h *= 0x100000001b3ull;
  }
  return h;
}

std::optional<PresetDifference> first_preset_difference(const nlohmann::json& ours, const nlohmann::json& theirs) {
  std::optional<PresetDifference> found;
  walk_difference(&ours, &theirs, "", found);
  return found;
}

std::vector<std::uint8_t> encode(const Hello& hello) {
  PayloadWriter w;
  w.u32(hello.min_version).u32(hello.max_version);
  put_name(w, hello.client);
  if (hello.preset_digest) w.u64(*hello.preset_digest);
  return w.take();
}

Hello decode_hello(std::span<const std::uint8_t> payload) {
  PayloadReader r(payload, "HELLO");
  Hello h;
  h.min_version = r.u32();
  h.max_version = r.u32();
  h.client = get_name(r, "HELLO");
  if (r.remaining() != 0) h.preset_digest = r.u64();
  r.finish();
  return h;
}

std::vector<std::uint8_t> encode(const SessionInfo& info) {
  PayloadWriter w;
  w.u32(info.version).u32(info.device_id).u32(info.devices).u32(info.max_in_flight);
  w.u32(info.idle_timeout_ms).u32(info.request_timeout_ms).u32(info.capabilities);
  put_name(w, info.preset);
  put_name(w, info.backend);
  w.u64(info.preset_digest);
  return w.take();
}

SessionInfo decode_session_info(std::span<const std::uint8_t> payload) {
  PayloadReader r(payload, "HELLO response");
  SessionInfo s;
  s.version = r.u32();
  s.device_id = r.u32();
  s.devices = r.u32();
  s.max_in_flight = r.u32();
  s.idle_timeout_ms = r.u32();
  s.request_timeout_ms = r.u32();
  s.capabilities = r.u32();
  s.preset = get_name(r, "HELLO response");
  s.backend = get_name(r, "HELLO response");
  s.preset_digest = r.u64();
  r.finish();
  return s;
}

std::vector<std::uint8_t> encode(const PresetRecord& record) {
  if (record.canonical.size() > kMaxPresetText)
    throw Error("protocol", fmt::format("PRESET: {} bytes of preset text, the limit is {}", record.canonical.size(), kMaxPresetText));
  PayloadWriter w;
  w.u64(record.digest).u32(static_cast<std::uint32_t>(record.canonical.size()));
  w.bytes({reinterpret_cast<const std::uint8_t*>(record.canonical.data()), record.canonical.size()});
  return w.take();
}

PresetRecord decode_preset_record(std::span<const std::uint8_t> payload) {
  PayloadReader r(payload, "PRESET response");
  PresetRecord p;
  p.digest = r.u64();
  const std::uint32_t n = r.u32();
  if (n > kMaxPresetText)
    throw Error("protocol", fmt::format("PRESET response: {} bytes of preset text, the limit is {}", n, kMaxPresetText));
  const auto bytes = r.bytes(n);
  r.finish();
  p.canonical.assign(bytes.begin(), bytes.end());
  p.preset = JsonDocument::parse(p.canonical, "PRESET response").root();
  if (preset_digest(p.canonical) != p.digest)
    throw Error("protocol", fmt::format("PRESET response: the text's digest is 0x{:016x}, the record says 0x{:016x}",
                                        preset_digest(p.canonical), p.digest));
  return p;
}

std::vector<std::uint8_t> encode(const std::optional<MemoryStatistics>& stats) {
  if (!stats) return {};
  const std::string text = stats->to_json().dump();
  return {text.begin(), text.end()};
}

std::optional<MemoryStatistics> decode_memory_statistics(std::span<const std::uint8_t> payload) {
  if (payload.empty()) return std::nullopt;
  const nlohmann::json j = nlohmann::json::parse(payload.begin(), payload.end(), nullptr, false);
  if (j.is_discarded()) throw Error("protocol", "MEM_STATS response: not JSON");
  try {
    return MemoryStatistics::from_json(j);
  } catch (const Error& e) {
    throw Error("protocol", fmt::format("MEM_STATS response: {}", e.what()));
  }
}

std::vector<std::uint8_t> encode(const TimelineSize& size) {
  PayloadWriter w;
  w.u32(size.events).u32(size.hbm_intervals);
  return w.take();
}

TimelineSize decode_timeline_size(std::span<const std::uint8_t> payload) {
  PayloadReader r(payload, "TIMELINE_STOP response");
  TimelineSize s;
  s.events = r.u32();
  s.hbm_intervals = r.u32();
  r.finish();
  return s;
}

std::vector<std::uint8_t> encode(const TimelineRead& read) {
  PayloadWriter w;
  w.u32(read.which).u32(read.first).u32(read.max);
  return w.take();
}

TimelineRead decode_timeline_read(std::span<const std::uint8_t> payload) {
  PayloadReader r(payload, "TIMELINE_READ");
  TimelineRead t;
  t.which = r.u32();
  t.first = r.u32();
  t.max = r.u32();
  r.finish();
  if (t.which != FW_TIMELINE_EVENTS && t.which != FW_TIMELINE_HBM)
    throw BadArgument(fmt::format("TIMELINE_READ: unknown record kind {}", t.which), t.which,
                      FW_TIMELINE_HBM);
  return t;
}

std::uint32_t max_records_per_page(std::uint32_t which) {
  const std::uint32_t size = which == FW_TIMELINE_EVENTS ? FW_TIMELINE_EVENT_SIZE : FW_TIMELINE_HBM_SIZE;
  return static_cast<std::uint32_t>((protocol::kMaxPayload - 12) / size);
}

std::vector<std::uint8_t> encode_timeline_page(const TimelineRead& read, const RunResult& result) {
  const std::size_t total = read.which == FW_TIMELINE_EVENTS ? result.timeline.size() : result.hbm_timeline.size();
  const std::size_t first = std::min<std::size_t>(read.first, total);
  const std::size_t n = std::min<std::size_t>({total - first, read.max, max_records_per_page(read.which)});
  PayloadWriter w;
  w.u32(read.which).u32(static_cast<std::uint32_t>(first)).u32(static_cast<std::uint32_t>(n));
  for (std::size_t i = first; i < first + n; ++i) {
    if (read.which == FW_TIMELINE_EVENTS) {
      const TimelineEvent& e = result.timeline[i];
      w.u64(e.cycle).u32(static_cast<std::uint32_t>(e.queue) | static_cast<std::uint32_t>(e.kind) << 8);
      w.u32(e.queue_index);
    } else {
      const HbmInterval& h = result.hbm_timeline[i];
      w.u32(h.channel).u32(h.kind).u64(h.begin).u64(h.end);
    }
  }
  return w.take();
}

std::uint32_t decode_timeline_page(std::span<const std::uint8_t> payload, const TimelineRead& read,
                                   RunResult& result) {
  PayloadReader r(payload, "TIMELINE_READ response");
  const std::uint32_t which = r.u32();
  const std::uint32_t first = r.u32();
  const std::uint32_t n = r.u32();
  if (which != read.which || first != read.first || n > read.max)
    throw Error("protocol", fmt::format("TIMELINE_READ response: asked for kind {} from {} (at most {}), got kind {} "
                                        "from {} ({} records)", read.which, read.first, read.max, which, first, n));
  for (std::uint32_t i = 0; i < n; ++i) {
    if (which == FW_TIMELINE_EVENTS) {
      TimelineEvent e;
      e.cycle = r.u64();
      const std::uint32_t queue_kind = r.u32();
      if ((queue_kind & 0xff) > static_cast<std::uint32_t>(Queue::Vector) || (queue_kind >> 8) > TimelineEvent::WaitEnd)
        throw Error("protocol", fmt::format("TIMELINE_READ response: record {}: bad queue/kind 0x{:x}", first + i, queue_kind));
      e.queue = static_cast<Queue>(queue_kind & 0xff);
      e.kind = static_cast<TimelineEvent::Kind>(queue_kind >> 8);
      e.queue_index = r.u32();
      result.timeline.push_back(e);
    } else {
      HbmInterval h;
      h.channel = r.u32();
      const std::uint32_t kind = r.u32();
      if (kind > HbmInterval::Refresh)
        throw Error("protocol", fmt::format("TIMELINE_READ response: record {}: bad interval kind {}", first + i, kind));
      h.kind = static_cast<HbmInterval::Kind>(kind);
      h.begin = r.u64();
      h.end = r.u64();
      result.hbm_timeline.push_back(h);
    }
  }
  r.finish();
  return n;
}

}  // namespace tpuemu::session
