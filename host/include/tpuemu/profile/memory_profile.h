// SPDX-License-Identifier: Apache-2.0
// Layer profile: what a run's memory looked like, in the formats users already read.
//
// The memory profile is a pprof profile of device memory as jax.profiler.device_memory_profile
// writes one: sample types allocations/count and space/bytes, one sample per buffer live at the
// chosen moment, labels space, buffer, layer and kind, and the "stack" model -> layer -> buffer, so
// that `go tool pprof -top` lists buffers and `-tree` groups them by layer (docs/profile.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tpuemu/alloc/alloc_trace.h"

namespace tpuemu::profile {

struct LiveBuffer {
  std::string space, id, owner;
  std::uint64_t size = 0;  // bytes requested
  std::uint64_t allocated_at = 0;
};

// What kind of buffer an owner names ("layer 0 weights" -> weight, "program" -> program, "input x"
// and "layer 1 output" -> activation, anything else -> scratch), and its layer ("layer 0", or the
// owner's first word: "input", "program").
std::string_view buffer_kind(std::string_view owner);
std::string buffer_layer(std::string_view owner);

struct MemorySnapshot {
  std::uint64_t time = 0;           // trace time of the moment
  std::uint64_t live_bytes = 0;     // sum of the live buffers' sizes
  std::vector<LiveBuffer> buffers;  // in allocation order
};

// The moment a profile shows: the peak of live bytes over every space (the first time it is
// reached), the end of the trace (after its last event), or a given time (after the events at it).
struct ProfileMoment {
  enum class Kind { Peak, End, Time } kind = Kind::Peak;
  std::uint64_t time = 0;  // Kind::Time
  // "peak", "end" or a non-negative integer; Error otherwise.
  static ProfileMoment parse(std::string_view text);
};

// Throws Error "--profile-at N: ..." for a time after the trace's last event: the run is over by
// then and the profile would be empty (`end` is its last moment).
void check_moment(const alloc::AllocTrace& trace, const ProfileMoment& moment);
MemorySnapshot snapshot_at(const alloc::AllocTrace& trace, const ProfileMoment& moment);  // check_moment first

// The gzip-compressed pprof profile of a snapshot (the bytes of memory.pb.gz).
std::string memory_profile(const MemorySnapshot& snapshot, std::string_view model);

// Any memory as a pprof profile of the same sample types (allocations/count, space/bytes): one
// sample per buffer with its stack (leaf first: `go tool pprof -tree` groups by the outer frames),
// string labels and numeric labels with their unit. memory_profile is this with the stack
// model -> layer -> buffer; an HLO program's is its op_name path (docs/hlo.md).
struct StackSample {
  std::vector<std::string> frames;  // leaf first
  std::uint64_t bytes = 0;
  std::vector<std::pair<std::string, std::string>> labels;
  struct Number {
    std::string key;
    std::int64_t value = 0;
    std::string unit;
  };
  std::vector<Number> numbers;
};
std::string stack_profile(const std::vector<StackSample>& samples, const std::string& comment);

}  // namespace tpuemu::profile
