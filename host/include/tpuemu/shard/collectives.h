// SPDX-License-Identifier: Apache-2.0
// Layer shard: runs split across devices (docs/sharding.md). This header: the interconnect's
// collectives - which bytes each device sends in every step of a ring algorithm, and how many core
// cycles that takes on the preset's links - as closed forms, so the sharded runner, the report
// and the tests share one model.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "tpuemu/config/config.h"

namespace tpuemu::shard {

enum class Collective { AllGather, ReduceScatter, AllReduce, SendRecv };
std::string_view to_string(Collective c);

// The devices' arrangement: a ring of `cols` devices (rows = 1) or a rows x cols 2-D torus.
struct Mesh {
  std::uint32_t rows = 1, cols = 1;
  std::uint32_t devices() const { return rows * cols; }
  bool torus() const { return rows > 1; }
};
// "4" (a ring) or "2x4" (a torus); throws Error naming the text unless it has `devices` devices
// and the preset's interconnect can form it (a torus needs topology torus2d).
Mesh parse_mesh(std::string_view text, std::uint32_t devices, const InterconnectConfig& ic);
// The form alone ("N" or "RxC", positive integers), as the command line checks it when parsed.
Mesh parse_mesh_shape(std::string_view text);
// The mesh of `devices` without --mesh: a ring.
inline Mesh ring_of(std::uint32_t devices) { return {1, devices}; }

struct CollectiveCost {
  std::uint64_t cycles = 0;           // from the first send to the last byte received
  std::uint64_t steps = 0;            // sequential communication steps
  std::uint64_t bytes_per_device = 0; // sent by each device (all send the same in a ring)
  std::uint64_t total_bytes = 0;      // over all links
};

// The cost of one collective over `bytes` - the whole tensor (all-gather: the gathered result;
// reduce-scatter and all-reduce: each device's full input; send/recv: the message) - on `mesh`.
// Ring algorithms (Patarasuk & Yuan 2009; docs/sharding.md): the tensor is cut into one chunk per
// device; each of the N-1 steps moves one chunk per device to its neighbour, split over both
// directions when the ring has 2 links; all-reduce is a reduce-scatter followed by an all-gather;
// a torus runs the ring algorithm along its rows, then along its columns. A step costs the
// link latency plus its bytes over one link's bandwidth, rounded up to whole cycles.
// send/recv moves `bytes` from device `from` to device `to` over the shortest path, cut through.
CollectiveCost collective_cost(Collective c, std::uint64_t bytes, const Mesh& mesh, const InterconnectConfig& ic,
                               std::uint32_t from = 0, std::uint32_t to = 0);

// The least bytes that must cross links for the collective: every device must receive what it
// lacks (all-gather, reduce-scatter: (N-1)/N of the tensor each; all-reduce twice that).
std::uint64_t analytic_min_bytes(Collective c, std::uint64_t bytes, std::uint32_t devices);

}  // namespace tpuemu::shard
