// SPDX-License-Identifier: Apache-2.0
// The interconnect model (docs/sharding.md): every collective's cycles and bytes against the
// closed-form ring formulas, for several sizes, device counts and both topologies; the bytes of
// ring algorithms equal the analytic minimum; meshes and presets validated.
#include <gtest/gtest.h>

#include "tpuemu/base/error.h"
#include "tpuemu/config/config.h"
#include "tpuemu/config/hbm_config.h"
#include "tpuemu/shard/collectives.h"

namespace tpuemu::shard {
namespace {

InterconnectConfig ring(std::uint32_t links, std::uint32_t bw, std::uint32_t latency) {
  return {.topology = "ring", .links_per_device = links, .link_bytes_per_cycle = bw, .latency_cycles = latency};
}

std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) { return (a + b - 1) / b; }

TEST(Collectives, RingAllGatherMatchesTheClosedForm) {
  for (std::uint32_t links : {1u, 2u}) {
    for (std::uint32_t n : {2u, 3u, 4u, 8u}) {
      for (std::uint64_t bytes : {std::uint64_t{8} * n, std::uint64_t{4096} * n, std::uint64_t{1} << 20}) {
        const InterconnectConfig ic = ring(links, 4, 100);
        const CollectiveCost c = collective_cost(Collective::AllGather, bytes, ring_of(n), ic);
        const std::uint64_t chunk = ceil_div(bytes, n);
        // (N-1) steps of: latency + chunk (split over the links) / bandwidth
        EXPECT_EQ(c.cycles, (n - 1) * (100 + ceil_div(ceil_div(chunk, links), 4))) << n << " " << bytes;
        EXPECT_EQ(c.steps, n - 1u);
        EXPECT_EQ(c.bytes_per_device, (n - 1) * chunk);
        EXPECT_EQ(c.total_bytes, std::uint64_t{n} * (n - 1) * chunk);
        if (bytes % n == 0) EXPECT_EQ(c.total_bytes, analytic_min_bytes(Collective::AllGather, bytes, n));
      }
    }
  }
}

TEST(Collectives, ReduceScatterCostsAnAllGatherAndAllReduceBoth) {
  const InterconnectConfig ic = ring(2, 2, 50);
  for (std::uint32_t n : {2u, 4u, 8u}) {
    const std::uint64_t bytes = 65536;
    const CollectiveCost ag = collective_cost(Collective::AllGather, bytes, ring_of(n), ic);
    const CollectiveCost rs = collective_cost(Collective::ReduceScatter, bytes, ring_of(n), ic);
    const CollectiveCost ar = collective_cost(Collective::AllReduce, bytes, ring_of(n), ic);
    EXPECT_EQ(rs.cycles, ag.cycles);
    EXPECT_EQ(ar.cycles, 2 * ag.cycles);
    EXPECT_EQ(ar.steps, 2u * (n - 1));
    // 2 (N-1) (alpha + S / (2 N B)) on a bidirectional ring
    EXPECT_EQ(ar.cycles, 2u * (n - 1) * (50 + bytes / n / 2 / 2));
    EXPECT_EQ(ar.total_bytes, analytic_min_bytes(Collective::AllReduce, bytes, n));
  }
}

TEST(Collectives, TorusRunsRowsThenColumnsAndStaysAtTheMinimum) {
  const InterconnectConfig ic{.topology = "torus2d", .links_per_device = 4, .link_bytes_per_cycle = 8, .latency_cycles = 10};
  const Mesh m = parse_mesh("2x4", 8, ic);
  const std::uint64_t bytes = 1 << 16;
  const CollectiveCost c = collective_cost(Collective::AllGather, bytes, m, ic);
  // rows: 3 steps of chunks S/8; columns: 1 step of chunks S/2; both directions of each dimension
  EXPECT_EQ(c.cycles, 3 * (10 + bytes / 8 / 2 / 8) + 1 * (10 + bytes / 2 / 2 / 8));
  EXPECT_EQ(c.steps, 4u);
  EXPECT_EQ(c.total_bytes, analytic_min_bytes(Collective::AllGather, bytes, 8));
  // A torus beats the ring of the same 8 devices on latency-bound sizes.
  const CollectiveCost r = collective_cost(Collective::AllGather, 64, ring_of(8), ic);
  EXPECT_LT(collective_cost(Collective::AllGather, 64, m, ic).cycles, r.cycles);
}

TEST(Collectives, SendRecvTakesTheShortestPathCutThrough) {
  const InterconnectConfig bi = ring(2, 4, 100), uni = ring(1, 4, 100);
  EXPECT_EQ(collective_cost(Collective::SendRecv, 4000, ring_of(8), bi, 0, 7).cycles, 100 + 1000u);
  EXPECT_EQ(collective_cost(Collective::SendRecv, 4000, ring_of(8), uni, 0, 7).cycles, 7 * 100 + 1000u);
  EXPECT_EQ(collective_cost(Collective::SendRecv, 4000, ring_of(8), bi, 2, 6).total_bytes, 4 * 4000u);
  EXPECT_EQ(collective_cost(Collective::SendRecv, 4000, ring_of(8), bi, 3, 3).cycles, 0u);
  EXPECT_THROW(collective_cost(Collective::SendRecv, 1, ring_of(4), bi, 0, 4), Error);
}

TEST(Collectives, OneDeviceCostsNothing) {
  const CollectiveCost c = collective_cost(Collective::AllReduce, 1 << 20, ring_of(1), ring(2, 1, 1000));
  EXPECT_EQ(c.cycles, 0u);
  EXPECT_EQ(c.total_bytes, 0u);
}

TEST(Collectives, MeshesAreChecked) {
  const InterconnectConfig r = ring(2, 1, 1);
  EXPECT_EQ(parse_mesh("4", 4, r).cols, 4u);
  auto message = [&](std::string_view text, std::uint32_t n) {
    try {
      parse_mesh(text, n, r);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message("2x2", 4), "--mesh 2x2: a 2-D torus needs an interconnect with topology torus2d, the preset's is ring");
  EXPECT_EQ(message("3", 4), "--mesh 3 has 3 devices, --devices is 4");
  EXPECT_EQ(message("2y2", 4), "--mesh: '2y2' is not N or AxB with positive integers");
  EXPECT_EQ(message("0x4", 0), "--mesh: '0x4' is not N or AxB with positive integers");
}

TEST(Collectives, ShippedPresetsCarryAnInterconnect) {
  for (const char* name : {"small", "default", "tpu-v4-like"}) {
    const Preset p = load_preset(name);
    ASSERT_TRUE(p.interconnect.has_value()) << name;
    // Calibrated to TPU v4's all-reduce bandwidth per chip over its HBM bandwidth (~0.22,
    // docs/sharding.md): between 0.15 and 0.3 of the preset's HBM bytes per cycle.
    const double ratio = static_cast<double>(p.interconnect->links_per_device * p.interconnect->link_bytes_per_cycle) /
                         memory_port_peak(p).bytes_per_cycle;
    EXPECT_GT(ratio, 0.15) << name;
    EXPECT_LT(ratio, 0.3) << name;
    EXPECT_EQ(to_json(p).at("interconnect").at("links_per_device"), p.interconnect->links_per_device);
  }
}

}  // namespace
}  // namespace tpuemu::shard
