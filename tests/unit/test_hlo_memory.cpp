// SPDX-License-Identifier: Apache-2.0
// The analysis in little memory (docs/hlo.md, "Memory"): the compact structures give the
// figures the plain ones gave. The xla heap simulator's index by time against a scan of every
// placed chunk, on random sets of every shape of live range; the schedules' peaks, swept without
// their buffers, against the buffers' own; the dataflow without its positions.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <random>
#include <vector>

#include <fmt/format.h>

#include "tpuemu/hlo/alias_analysis.h"
#include "tpuemu/hlo/buffers.h"
#include "tpuemu/hlo/hlo_parser.h"
#include "tpuemu/hlo/liveness.h"
#include "tpuemu/hlo/placement.h"

namespace tpuemu::hlo {
namespace {

std::uint64_t align_up(std::uint64_t value, std::uint64_t alignment) {
  const std::uint64_t rem = value % alignment;
  return rem == 0 ? value : value + (alignment - rem);
}

// One decreasing-size best-fit run that scans every placed buffer: the rule of docs/hlo.md,
// "Buffer assignment", written the plain way.
std::vector<std::uint64_t> scan_heap(const BufferSet& set, const std::vector<std::size_t>& order, std::uint64_t alignment,
                                     std::uint64_t& heap) {
  std::vector<std::uint64_t> offsets(set.buffers.size(), 0);
  std::vector<std::size_t> placed;
  heap = 0;
  for (const std::size_t i : order) {
    const LiveBuffer& b = set.buffers[i];
    if (b.bytes == 0) continue;
    std::vector<std::pair<std::uint64_t, std::uint64_t>> used;  // offset, end
    for (const std::size_t j : placed) {
      const LiveBuffer& o = set.buffers[j];
      if (o.start <= b.end && o.end >= b.start) used.emplace_back(offsets[j], offsets[j] + o.bytes);
    }
    std::sort(used.begin(), used.end());
    std::uint64_t best = 0, best_size = std::numeric_limits<std::uint64_t>::max(), free_start = 0;
    bool found = false;
    std::size_t k = 0;
    while (k < used.size()) {
      const std::uint64_t extent_start = used[k].first;
      std::uint64_t extent_end = used[k].second;
      for (++k; k < used.size() && used[k].first < extent_end; ++k) extent_end = std::max(extent_end, used[k].second);
      const std::uint64_t at = align_up(free_start, alignment);
      if (extent_start > free_start && at <= extent_start && extent_start - at >= b.bytes &&
          (!found || extent_start - free_start < best_size)) {
        found = true;
        best_size = extent_start - free_start;
        best = at;
      }
      free_start = std::max(free_start, align_up(extent_end, alignment));
    }
    if (!found) best = align_up(free_start, alignment);
    offsets[i] = best;
    heap = std::max(heap, best + b.bytes);
    placed.push_back(i);
  }
  return offsets;
}

// Both orders, the smaller heap, spatial on a tie.
std::vector<std::uint64_t> scan_xla(const BufferSet& set, std::uint64_t alignment, std::uint64_t& heap) {
  std::vector<std::size_t> spatial(set.buffers.size());
  for (std::size_t i = 0; i < spatial.size(); ++i) spatial[i] = i;
  std::vector<std::size_t> temporal = spatial;
  const auto duration = [&](std::size_t i) { return set.buffers[i].end - set.buffers[i].start; };
  const auto bytes = [&](std::size_t i) { return set.buffers[i].bytes; };
  std::sort(spatial.begin(), spatial.end(), [&](std::size_t x, std::size_t y) {
    if (bytes(x) != bytes(y)) return bytes(x) > bytes(y);
    if (duration(x) != duration(y)) return duration(x) > duration(y);
    return x < y;
  });
  std::sort(temporal.begin(), temporal.end(), [&](std::size_t x, std::size_t y) {
    if (duration(x) != duration(y)) return duration(x) > duration(y);
    if (bytes(x) != bytes(y)) return bytes(x) > bytes(y);
    return x < y;
  });
  std::uint64_t by_space = 0, by_time = 0;
  std::vector<std::uint64_t> a = scan_heap(set, spatial, alignment, by_space);
  std::vector<std::uint64_t> b = scan_heap(set, temporal, alignment, by_time);
  heap = std::min(by_space, by_time);
  return by_space <= by_time ? a : b;
}

// `n` buffers over `positions`: short ranges, long ones, ones in a single position, 0-byte ones.
BufferSet random_set(std::mt19937_64& rng, std::size_t n, std::int64_t positions) {
  BufferSet set;
  set.positions = positions;
  for (std::size_t i = 0; i < n; ++i) {
    LiveBuffer b;
    b.name = fmt::format("b{}", i);
    b.start = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(positions));
    const std::uint64_t kind = rng() % 4;
    const std::int64_t span = kind == 0 ? 0 : kind == 1 ? static_cast<std::int64_t>(rng() % 4)
                                            : kind == 2 ? static_cast<std::int64_t>(rng() % 64)
                                                        : static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(positions));
    b.end = std::min(positions - 1, b.start + span);
    b.bytes = rng() % 16 == 0 ? 0 : 256 * (1 + rng() % 32);
    b.unpadded = b.bytes / 2;
    set.buffers.push_back(b);
  }
  return set;
}

TEST(HloMemory, XlaHeapIndexPlacesAsAScanOfEveryChunk) {
  std::mt19937_64 rng(20261207);
  for (const std::int64_t positions : {1, 7, 8, 9, 100, 1000, 4097}) {
    for (const std::uint64_t alignment : {1u, 512u}) {
      const BufferSet set = random_set(rng, 600, positions);
      std::uint64_t heap = 0;
      const std::vector<std::uint64_t> expected = scan_xla(set, alignment, heap);
      const Placement p = place_xla(set, {.alignment = alignment});
      EXPECT_EQ(p.heap_bytes, heap) << positions << " positions, alignment " << alignment;
      EXPECT_EQ(p.offsets, expected) << positions << " positions, alignment " << alignment;
    }
  }
}

TEST(HloMemory, XlaAssignmentSimulatesTheTemporariesAlone) {
  std::mt19937_64 rng(7);
  BufferSet set = random_set(rng, 500, 300);
  for (std::size_t i = 0; i < set.buffers.size(); i += 5) set.buffers[i].kind = BufferKind::Output;
  for (std::size_t i = 1; i < set.buffers.size(); i += 7) set.buffers[i].kind = BufferKind::Parameter;
  BufferSet temporaries;
  temporaries.positions = set.positions;
  std::vector<std::size_t> index;
  for (std::size_t i = 0; i < set.buffers.size(); ++i) {
    if (set.buffers[i].kind != BufferKind::Temp) continue;
    temporaries.buffers.push_back(set.buffers[i]);
    index.push_back(i);
  }
  const Placement block = place_xla(temporaries, {});
  const Placement p = assign_xla(set, {});
  EXPECT_EQ(p.temporaries_block_bytes, block.heap_bytes);
  std::uint64_t own = 0;
  for (const LiveBuffer& b : set.buffers)
    if (b.kind != BufferKind::Temp) own += b.bytes;
  for (std::size_t k = 0; k < index.size(); ++k) {
    if (temporaries.buffers[k].bytes != 0) {
      EXPECT_EQ(p.offsets[index[k]], own + block.offsets[k]) << k;
    }
  }
  EXPECT_EQ(p.heap_bytes, own + block.heap_bytes);
}

std::vector<std::filesystem::path> modules() {
  std::vector<std::filesystem::path> files;
  const std::filesystem::path data = std::filesystem::path(TPUEMU_TEST_DATA_DIR) / "hlo";
  for (const auto& e : std::filesystem::directory_iterator(data))
    if (e.is_regular_file() && e.path().extension() == ".hlo") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}

TEST(HloMemory, SchedulePeaksWithoutBuffersAreTheBuffersPeaks) {
  const std::vector<std::filesystem::path> files = modules();
  ASSERT_GE(files.size(), 10u);
  for (const std::filesystem::path& file : files) {
    const Module m = read_hlo_file(file);
    for (const SizeOptions& sizes : {SizeOptions{}, SizeOptions{.tiled = false}}) {
      std::vector<ScheduleChoice::Peak> expected;
      for (const Schedule& s : {text_schedule(m), dfs_schedule(m, sizes), list_schedule(m, sizes)}) {
        const BufferSet set = live_buffers(m, s, sizes);
        expected.push_back({s.name, peak_live_bytes(set), peak_live_unpadded_bytes(set)});
      }
      for (const std::string name : {"text", "dfs", "list", "best"}) {
        const ScheduleChoice c = choose_schedule(m, name, sizes);
        ASSERT_EQ(c.peaks.size(), 3u);
        for (std::size_t k = 0; k < 3; ++k) {
          EXPECT_EQ(c.peaks[k].name, expected[k].name);
          EXPECT_EQ(c.peaks[k].peak_live_bytes, expected[k].peak_live_bytes) << file << " " << name << " " << k;
          EXPECT_EQ(c.peaks[k].peak_live_bytes_unpadded, expected[k].peak_live_bytes_unpadded) << file << " " << name;
        }
        EXPECT_EQ(c.schedule.name, c.name);
        EXPECT_EQ(peak_live_bytes(c.buffers), peak_live_bytes(live_buffers(m, c.schedule, sizes))) << file;
        if (name != "best") {
          EXPECT_EQ(c.name, name);
        } else {
          std::size_t best = 0;
          for (std::size_t k = 1; k < 3; ++k)
            if (expected[k].peak_live_bytes < expected[best].peak_live_bytes) best = k;
          EXPECT_EQ(c.name, expected[best].name) << file;
        }
      }
    }
  }
}

TEST(HloMemory, DataflowWithoutItsPositionsKeepsItsValuesAndBuffers) {
  const Module m = read_hlo_file(std::filesystem::path(TPUEMU_TEST_DATA_DIR) / "hlo" / "while_loop.hlo");
  AliasAnalysis alias = AliasAnalysis::run(m, text_schedule(m), {});
  const std::int64_t positions = alias.dataflow().positions();
  const std::vector<HloValue> values = alias.dataflow().values();
  const std::size_t windows = alias.dataflow().windows().size();
  const std::size_t buffers = alias.buffer_count();
  ASSERT_GT(positions, 0);
  EXPECT_FALSE(alias.dataflow().result(0).empty() && alias.dataflow().operands(positions - 1).empty());
  alias.release_positions();
  EXPECT_EQ(alias.dataflow().positions(), positions);
  ASSERT_EQ(alias.dataflow().values().size(), values.size());
  for (std::size_t v = 0; v < values.size(); ++v) {
    EXPECT_EQ(alias.dataflow().values()[v].position, values[v].position);
    EXPECT_EQ(alias.dataflow().values()[v].bytes, values[v].bytes);
  }
  EXPECT_EQ(alias.dataflow().windows().size(), windows);
  EXPECT_EQ(alias.buffer_count(), buffers);
}

}  // namespace
}  // namespace tpuemu::hlo
