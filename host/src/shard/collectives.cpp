// SPDX-License-Identifier: Apache-2.0
#include "tpuemu/shard/collectives.h"

#include <charconv>

#include <fmt/format.h>

#include "tpuemu/base/error.h"

namespace tpuemu::shard {

namespace {

std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) { return (a + b - 1) / b; }

// N-1 steps of a ring of n devices over chunks of `chunk` bytes; `directions` links carry each
// chunk's halves at the same time.
CollectiveCost ring_pass(std::uint64_t chunk, std::uint32_t n, std::uint32_t directions, const InterconnectConfig& ic) {
  CollectiveCost c;
  if (n <= 1) return c;
  const std::uint64_t per_link = ceil_div(chunk, directions);
  c.steps = n - 1;
  c.cycles = c.steps * (ic.latency_cycles + ceil_div(per_link, ic.link_bytes_per_cycle));
  c.bytes_per_device = c.steps * chunk;
  c.total_bytes = c.bytes_per_device * n;
  return c;
}

// Directions per ring: a ring preset's links; a torus gives each dimension two.
std::uint32_t directions(const Mesh& mesh, const InterconnectConfig& ic) {
  return mesh.torus() || ic.topology == "torus2d" ? 2 : ic.links_per_device;
}

void add(CollectiveCost& a, const CollectiveCost& b, std::uint64_t devices_in_b_passes) {
  a.cycles += b.cycles;
  a.steps += b.steps;
  a.bytes_per_device += b.bytes_per_device;
  a.total_bytes += b.bytes_per_device * devices_in_b_passes;
}

// An all-gather whose result is `bytes`: along the rows (chunks of bytes/N), then along the
// columns (chunks of bytes/rows) for a torus.
CollectiveCost all_gather(std::uint64_t bytes, const Mesh& mesh, const InterconnectConfig& ic) {
  const std::uint32_t n = mesh.devices();
  const std::uint32_t dirs = directions(mesh, ic);
  CollectiveCost c;
  add(c, ring_pass(ceil_div(bytes, n), mesh.cols, dirs, ic), n);
  if (mesh.torus()) add(c, ring_pass(ceil_div(bytes, mesh.rows), mesh.rows, dirs, ic), n);
  return c;
}

}  // namespace

std::string_view to_string(Collective c) {
  switch (c) {
    case Collective::AllGather: return "all-gather";
    case Collective::ReduceScatter: return "reduce-scatter";
    case Collective::AllReduce: return "all-reduce";
    case Collective::SendRecv: return "send/recv";
  }
  return "?";
}

Mesh parse_mesh_shape(std::string_view text) {
  auto number = [&](std::string_view part) {
    std::uint32_t v = 0;
    const auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), v);
    if (part.empty() || ec != std::errc{} || end != part.data() + part.size() || v == 0)
      throw Error("--mesh", fmt::format("'{}' is not N or AxB with positive integers", text));
    return v;
  };
  Mesh m;
  if (const auto x = text.find('x'); x != std::string_view::npos) {
    m.rows = number(text.substr(0, x));
    m.cols = number(text.substr(x + 1));
  } else {
    m.cols = number(text);
  }
  return m;
}

Mesh parse_mesh(std::string_view text, std::uint32_t devices, const InterconnectConfig& ic) {
  const Mesh m = parse_mesh_shape(text);
  if (m.devices() != devices)
    throw Error(fmt::format("--mesh {} has {} devices, --devices is {}", text, m.devices(), devices));
  if (m.torus() && ic.topology != "torus2d")
    throw Error(fmt::format("--mesh {}: a 2-D torus needs an interconnect with topology torus2d, the preset's is {}",
                            text, ic.topology));
  return m;
}

CollectiveCost collective_cost(Collective c, std::uint64_t bytes, const Mesh& mesh, const InterconnectConfig& ic,
                               std::uint32_t from, std::uint32_t to) {
  const std::uint32_t n = mesh.devices();
  if (ic.link_bytes_per_cycle == 0) throw Error("interconnect: link_bytes_per_cycle is 0");
  switch (c) {
    case Collective::AllGather:
    case Collective::ReduceScatter:  // the same steps, reducing instead of copying
      return all_gather(bytes, mesh, ic);
    case Collective::AllReduce: {
      CollectiveCost a = all_gather(bytes, mesh, ic);
      const CollectiveCost b = a;
      a.cycles += b.cycles;
      a.steps += b.steps;
      a.bytes_per_device += b.bytes_per_device;
      a.total_bytes += b.total_bytes;
      return a;
    }
    case Collective::SendRecv: {
      if (from >= n || to >= n) throw Error(fmt::format("send/recv between devices {} and {} of {}", from, to, n));
      auto ring_hops = [&](std::uint32_t a, std::uint32_t b, std::uint32_t size) {
        const std::uint32_t forward = (b + size - a) % size;
        return directions(mesh, ic) >= 2 ? std::min(forward, size - forward) : forward;
      };
      const std::uint32_t hops = ring_hops(from % mesh.cols, to % mesh.cols, mesh.cols) +
                                 (mesh.torus() ? ring_hops(from / mesh.cols, to / mesh.cols, mesh.rows) : 0);
      CollectiveCost s;
      if (hops == 0) return s;
      s.steps = hops;
      s.cycles = hops * ic.latency_cycles + ceil_div(bytes, ic.link_bytes_per_cycle);
      s.bytes_per_device = bytes;  // of the sender
      s.total_bytes = bytes * hops;
      return s;
    }
  }
  return {};
}

std::uint64_t analytic_min_bytes(Collective c, std::uint64_t bytes, std::uint32_t devices) {
  if (devices <= 1) return 0;
  const std::uint64_t lacking = bytes - ceil_div(bytes, devices);  // per device
  switch (c) {
    case Collective::AllGather:
    case Collective::ReduceScatter: return lacking * devices;
    case Collective::AllReduce: return 2 * lacking * devices;
    case Collective::SendRecv: return bytes;
  }
  return 0;
}

}  // namespace tpuemu::shard
