// SPDX-License-Identifier: Apache-2.0
// The Chrome trace-event JSON of a run (Perfetto and chrome://tracing load it): process "core"
// with one track per engine queue ("DMA queue", "MXU queue", "vector queue": each instruction a
// complete event from issue to completion, semaphore waits as "wait sN"; instructions of one
// queue that overlap (the MXU's shadow-bank LOADW) go to a second track of that queue), process
// "HBM" with one track per channel ("channel N": "busy" and "refresh"), one async track of
// buffers per memory space (each buffer a slice from its allocation to its free, with its size,
// kind and layer) and counter tracks of bytes in use, largest free block and external
// fragmentation per space (docs/profile.md). Times are core cycles, shown at the preset's clock.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tpuemu/alloc/alloc_trace.h"
#include "tpuemu/alloc/memory_space.h"

namespace tpuemu::profile {

// One instruction on an engine queue, or a wait of the queue's head on a semaphore
// (name "wait sN"), in core cycles since the run started.
struct EngineSlice {
  std::string queue;  // "DMA", "MXU", "vector"
  std::string name;   // the mnemonic: "DMA", "MATMUL", ...; "wait s3"
  std::uint64_t begin = 0, end = 0;
  std::uint32_t pc = 0;  // index in its step's program
  std::string layer;     // the step's layer (and request)
};

// A stretch of one HBM channel busy moving data, or refreshing, in core cycles.
struct ChannelSlice {
  unsigned channel = 0;
  bool refresh = false;
  std::uint64_t begin = 0, end = 0;
};

struct ChromeTraceInputs {
  std::vector<EngineSlice> engine;
  std::vector<ChannelSlice> hbm_channels;
  unsigned hbm_channel_count = 0;  // tracks for every channel, even one that stayed idle
  const alloc::AllocTrace* allocations = nullptr;
  // Per space: the allocator's state after every allocation and free (MemorySpace samples).
  std::map<std::string, std::vector<alloc::SpaceSnapshot>> samples;
  double clock_ghz = 1;  // core cycles -> microseconds
  std::string title;     // the workload
};

nlohmann::json chrome_trace(const ChromeTraceInputs& in);

}  // namespace tpuemu::profile
