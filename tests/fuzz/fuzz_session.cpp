// SPDX-License-Identifier: Apache-2.0
// libFuzzer target `session`: the decoders of what a `tpuemu serve` peer sends - the session
// commands' payloads (HELLO and its answer, PRESET's record, MEM_STATS JSON, TIMELINE_* records) and whole frames
// (protocol::decode_frame). The first byte picks the decoder, the rest is its input. Any
// tpuemu::Error is the expected answer; anything else is a finding.
#include <cstddef>
#include <cstdint>
#include <span>

#include "tpuemu/base/error.h"
#include "tpuemu/device/protocol.h"
#include "tpuemu/device/session.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::span<const std::uint8_t> in(data + 1, size - 1);
  namespace session = tpuemu::session;
  try {
    switch (data[0] % 8) {
      case 0: (void)session::decode_hello(in); break;
      case 1: (void)session::decode_session_info(in); break;
      case 2: (void)session::decode_memory_statistics(in); break;
      case 3: (void)session::decode_timeline_size(in); break;
      case 4: {
        // A request decoded and answered as the server does, from a recording of its own.
        const session::TimelineRead read = session::decode_timeline_read(in);
        tpuemu::RunResult recorded;
        recorded.timeline.resize(3);
        recorded.hbm_timeline.resize(2);
        (void)session::encode_timeline_page(read, recorded);
        break;
      }
      case 5: {
        // A page as the client reads it: the header's which/first/max from the input itself.
        session::TimelineRead read;
        read.which = size > 1 ? data[1] % 2 : 0;
        read.max = size > 2 ? data[2] : 0;
        tpuemu::RunResult result;
        (void)session::decode_timeline_page(in, read, result);
        break;
      }
      case 7: {
        // PRESET's answer as the client reads it, compared with a preset of its own.
        const session::PresetRecord record = session::decode_preset_record(in);
        (void)session::first_preset_difference(record.preset, nlohmann::json::object());
        break;
      }
      default: (void)tpuemu::protocol::decode_frame(in); break;
    }
  } catch (const tpuemu::Error&) {
  }
  return 0;
}
