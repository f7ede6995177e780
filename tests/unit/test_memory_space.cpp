// SPDX-License-Identifier: Apache-2.0
// Fragmentation metrics (FreeExtents, MemorySpace) against brute-force recounts, for every policy,
// and the out-of-memory report.
#include <algorithm>
#include <optional>
#include <string>
#include <random>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include <fmt/format.h>

#include "test_support.h"
#include "tpuemu/alloc/memory_space.h"

namespace tpuemu::alloc {
namespace {

struct Extent {
  std::uint64_t offset, size;
  bool operator==(const Extent&) const = default;
};

// The maximal free extents of [0, capacity) given the reserved blocks, by sorting them.
std::vector<Extent> recount_gaps(std::vector<Extent> reserved, std::uint64_t capacity) {
  std::sort(reserved.begin(), reserved.end(), [](const Extent& a, const Extent& b) { return a.offset < b.offset; });
  std::vector<Extent> gaps;
  std::uint64_t at = 0;
  for (const Extent& r : reserved) {
    if (r.offset > at) gaps.push_back({at, r.offset - at});
    at = std::max(at, r.offset + r.size);
  }
  if (at < capacity) gaps.push_back({at, capacity - at});
  return gaps;
}

std::vector<Extent> extents_of(const FreeExtents& f) {
  std::vector<Extent> out;
  for (const auto& [offset, size] : f.extents()) out.push_back({offset, size});
  return out;
}

TEST(FreeExtents, MatchesARecountUnderRandomReserveAndRelease) {
  std::mt19937_64 rng(11);
  constexpr std::uint64_t kCapacity = 1 << 20;
  FreeExtents free(kCapacity);
  std::vector<Extent> reserved;
  for (int step = 0; step < 4000; ++step) {
    if (reserved.empty() || rng() % 3 != 0) {
      // Reserve a random piece of a random free extent.
      const auto gaps = extents_of(free);
      if (gaps.empty()) continue;
      const Extent g = gaps[rng() % gaps.size()];
      const std::uint64_t size = 1 + rng() % g.size;
      const std::uint64_t offset = g.offset + rng() % (g.size - size + 1);
      free.reserve(offset, size);
      reserved.push_back({offset, size});
    } else {
      const std::size_t i = rng() % reserved.size();
      free.release(reserved[i].offset, reserved[i].size);
      reserved.erase(reserved.begin() + static_cast<std::ptrdiff_t>(i));
    }
    const auto gaps = recount_gaps(reserved, kCapacity);
    ASSERT_EQ(extents_of(free), gaps) << "step " << step;
    std::uint64_t total = 0, largest = 0;
    long double squares = 0;
    for (const Extent& g : gaps) {
      total += g.size;
      largest = std::max(largest, g.size);
      squares += static_cast<long double>(g.size) * g.size;
    }
    ASSERT_EQ(free.free_bytes(), total);
    ASSERT_EQ(free.largest(), largest);
    ASSERT_EQ(free.count(), gaps.size());
    const std::uint64_t footprint = gaps.empty() || gaps.back().offset + gaps.back().size != kCapacity
                                        ? kCapacity : gaps.back().offset;
    ASSERT_EQ(free.footprint(), footprint);
    if (total > 0) {
      ASSERT_NEAR(free.gap_square_ratio(), static_cast<double>(squares / (static_cast<long double>(total) * total)), 1e-12);
    }
  }
}

TEST(FreeExtents, RejectsOverlappingAndDoubleReleasedBlocks) {
  FreeExtents free(4096);
  free.reserve(0, 1024);
  EXPECT_NE(test::error_of([&] { free.reserve(512, 1024); }).find("not free"), std::string::npos);
  EXPECT_NE(test::error_of([&] { free.reserve(4000, 200); }).find("outside the capacity"), std::string::npos);
  free.release(0, 1024);
  EXPECT_NE(test::error_of([&] { free.release(0, 1024); }).find("released twice"), std::string::npos);
  EXPECT_EQ(free.count(), 1u);
}

class MemorySpaceEveryPolicy : public ::testing::TestWithParam<std::string> {};

TEST_P(MemorySpaceEveryPolicy, SnapshotsMatchABruteForceRecount) {
  std::mt19937_64 rng(2024);
  constexpr std::uint64_t kCapacity = 8 << 20;
  MemorySpace space("HBM", make_allocator(GetParam(), {kCapacity, 256}), true);
  struct Live {
    BufferId id;
    Extent block;
    std::uint64_t size, padding;
  };
  std::vector<Live> live;
  std::uint64_t peak_live = 0, peak_in_use = 0, failures = 0;
  for (int step = 0; step < 3000; ++step) {
    if (live.empty() || rng() % 5 < 3) {
      const std::uint64_t size = 1 + (rng() % 4 == 0 ? rng() % (1 << 20) : rng() % 8192);
      const std::uint64_t alignment = std::uint64_t{1} << (rng() % 13);
      const std::uint64_t padding = rng() % (size / 4 + 1);
      std::optional<OutOfMemory> failure;
      const auto placed = space.try_allocate({size, alignment, "b", padding}, static_cast<std::uint64_t>(step), &failure);
      if (!placed) {
        ++failures;
        ASSERT_TRUE(failure.has_value());
        continue;
      }
      ASSERT_EQ(placed->offset % alignment, 0u);
      ASSERT_GE(placed->reserved, size);
      live.push_back({placed->id, {placed->offset, placed->reserved}, size, padding});
    } else {
      const std::size_t i = rng() % live.size();
      space.free(live[i].id, static_cast<std::uint64_t>(step));
      live.erase(live.begin() + static_cast<std::ptrdiff_t>(i));
    }
    std::vector<Extent> blocks;
    std::uint64_t live_bytes = 0, in_use = 0, padding = 0;
    for (const Live& l : live) {
      blocks.push_back(l.block);
      live_bytes += l.size;
      in_use += l.block.size;
      padding += l.padding;
    }
    const auto gaps = recount_gaps(blocks, kCapacity);
    std::uint64_t largest = 0, free_bytes = 0;
    for (const Extent& g : gaps) {
      largest = std::max(largest, g.size);
      free_bytes += g.size;
    }
    ASSERT_EQ(free_bytes + in_use, kCapacity) << "blocks overlap";
    const SpaceSnapshot s = space.snapshot();
    ASSERT_EQ(s.live_bytes, live_bytes);
    ASSERT_EQ(s.in_use_bytes, in_use);
    ASSERT_EQ(s.free_bytes, free_bytes);
    ASSERT_EQ(s.free_blocks, gaps.size());
    ASSERT_EQ(s.largest_free_block, largest);
    ASSERT_EQ(s.internal_waste_bytes, in_use - live_bytes + padding);
    ASSERT_DOUBLE_EQ(s.external_fragmentation,
                     free_bytes ? 1.0 - static_cast<double>(largest) / static_cast<double>(free_bytes) : 0.0);
    peak_live = std::max(peak_live, live_bytes);
    peak_in_use = std::max(peak_in_use, in_use);
  }
  const SpaceMetrics m = space.metrics();
  EXPECT_EQ(m.peak_live_bytes, peak_live);
  EXPECT_EQ(m.peak_in_use_bytes, peak_in_use);
  EXPECT_EQ(m.failed_allocations, failures);
  EXPECT_GE(m.peak_in_use_over_peak_live, 1.0);
  EXPECT_GE(m.peak_footprint_over_peak_live, m.peak_in_use_over_peak_live - 1e-12);
  EXPECT_EQ(space.samples().size(), m.allocations + m.frees);
  // Free everything: one free block again, whatever the policy.
  for (const Live& l : live) space.free(l.id);
  EXPECT_EQ(space.snapshot().free_blocks, 1u);
  EXPECT_EQ(space.snapshot().largest_free_block, kCapacity);
  EXPECT_EQ(space.snapshot().footprint_bytes, 0u);
}

INSTANTIATE_TEST_SUITE_P(Policies, MemorySpaceEveryPolicy, ::testing::ValuesIn(allocator_names()),
                         [](const auto& info) {
                           std::string n = info.param;
                           std::replace(n.begin(), n.end(), '-', '_');
                           return n;
                         });

TEST(MemorySpace, OutOfMemoryNamesTheRequestTheHolesAndTheOwners) {
  MemorySpace space("HBM", make_allocator("first-fit", {4096, 256}));
  std::vector<BufferId> ids;
  for (int i = 0; i < 4; ++i) ids.push_back(space.allocate({1024, 1, fmt::format("tensor {}", i)}).id);
  space.free(ids[0]);
  space.free(ids[2]);
  try {
    space.allocate({2048, 1, "layer 7 output"}, 42);
    FAIL() << "expected OutOfMemory";
  } catch (const OutOfMemory& e) {
    const std::string m = e.what();
    EXPECT_TRUE(e.fits_without_fragmentation());
    EXPECT_EQ(e.requested(), 2048u);
    EXPECT_NE(m.find("out of HBM memory (first-fit"), std::string::npos) << m;
    EXPECT_NE(m.find("'layer 7 output' asks for 2.00 KiB (alignment 1) at time 42"), std::string::npos) << m;
    EXPECT_EQ(e.needed(), 2048u);
    EXPECT_NE(m.find("at time 42"), std::string::npos) << m;
    EXPECT_NE(m.find("free 2.00 KiB in 2 block(s), largest free block 1.00 KiB"), std::string::npos) << m;
    EXPECT_NE(m.find("external fragmentation 50.0%"), std::string::npos) << m;
    EXPECT_NE(m.find("it would fit without fragmentation"), std::string::npos) << m;
    EXPECT_NE(m.find("'tensor 1' 1.00 KiB at 0x400"), std::string::npos) << m;
    EXPECT_NE(m.find("'tensor 3' 1.00 KiB at 0xc00"), std::string::npos) << m;
    EXPECT_EQ(m.find('\n'), std::string::npos);
  }
  EXPECT_EQ(space.metrics().failed_allocations, 1u);
  try {
    space.allocate({8192, 1, "too big"});
    FAIL() << "expected OutOfMemory";
  } catch (const OutOfMemory& e) {
    EXPECT_FALSE(e.fits_without_fragmentation());
    EXPECT_NE(std::string(e.what()).find("would not fit even without fragmentation"), std::string::npos);
  }
}

// The failure of one request under `policy`, after `setup` allocated into a fresh space.
OutOfMemory failure_of(const std::string& policy, AllocatorOptions options, const std::vector<BufferRequest>& setup,
                       const BufferRequest& request) {
  MemorySpace space("HBM", make_allocator(policy, options));
  for (const BufferRequest& r : setup) space.allocate(r);
  std::optional<OutOfMemory> failure;
  EXPECT_FALSE(space.try_allocate(request, 7, &failure).has_value()) << policy;
  return failure.value_or(OutOfMemory("(it fit)", 0, 0, false));
}

// bfc hands out a chunk less than twice the request whole: 'a' holds 64 KiB for 40 KiB. The
// diagnosis names the request as asked and says where the bytes went (the defect listed the whole
// chunk as if 'a' had asked for it, and blamed nothing).
TEST(OutOfMemoryDiagnosis, BfcNamesTheUnsplitChunkAndItsRule) {
  const OutOfMemory e = failure_of("bfc", {64 << 10, 256}, {{40 << 10, 1, "a"}}, {16 << 10, 1, "b"});
  const std::string m = e.what();
  EXPECT_EQ(e.requested(), 16u << 10);
  EXPECT_EQ(e.needed(), 16u << 10);
  EXPECT_FALSE(e.fits_without_fragmentation());
  EXPECT_NE(m.find("'b' asks for 16.0 KiB (alignment 1) at time 7; free 0 B"), std::string::npos) << m;
  EXPECT_NE(m.find("it would not fit even without fragmentation; live buffers hold 64.0 KiB for 40.0 KiB asked "
                   "(bfc hands a free chunk out whole unless it is at least twice the request or the rest is at "
                   "least 128 MiB"),
            std::string::npos) << m;
  EXPECT_NE(m.find("largest live buffers: 'a' 64.0 KiB at 0x0 (40.0 KiB asked)"), std::string::npos) << m;
  // The granularity is named when it rounds the request.
  const OutOfMemory g = failure_of("bfc", {64 << 10, 4096}, {{40 << 10, 1, "a"}}, {1000, 1, "c"});
  EXPECT_EQ(g.needed(), 4096u);
  EXPECT_NE(std::string(g.what()).find("'c' asks for 1000 B (alignment 1); bfc needs 4.00 KiB (the request rounded "
                                       "up to the granularity 4.00 KiB) at time 7"),
            std::string::npos) << g.what();
}

// Buddy rounds 20 KiB up to a 32 KiB block: with 24 KiB free (two buddy blocks, one extent) it would
// not fit even unfragmented (the defect said it would, judging the request as asked).
TEST(OutOfMemoryDiagnosis, BuddyJudgesThePowerOfTwo) {
  const OutOfMemory e = failure_of("buddy", {64 << 10, 256}, {{32 << 10, 1, "a"}, {8 << 10, 1, "c"}}, {20 << 10, 1, "b"});
  const std::string m = e.what();
  EXPECT_EQ(e.requested(), 20u << 10);
  EXPECT_EQ(e.needed(), 32u << 10);
  EXPECT_FALSE(e.fits_without_fragmentation());
  EXPECT_NE(m.find("'b' asks for 20.0 KiB (alignment 1); buddy needs 32.0 KiB (the request rounded up to a power "
                   "of two: buddy blocks are powers of two aligned to their size) at time 7; free 24.0 KiB in 1 "
                   "block(s), largest free block 24.0 KiB"),
            std::string::npos) << m;
  EXPECT_NE(m.find("it would not fit even without fragmentation"), std::string::npos) << m;
  // An alignment above the request is what the block must be.
  MemorySpace space("HBM", make_allocator("buddy", {64 << 10, 256}));
  EXPECT_EQ(space.allocator().needed(1024, 8192).size, 8192u);
  EXPECT_EQ(space.allocator().needed(1024, 8192).why,
            "the request raised to its alignment 8192: buddy blocks are powers of two aligned to their size");
  EXPECT_EQ(space.allocator().needed(100, 1).why,
            "the request rounded up to the granularity 256 B: buddy blocks are powers of two aligned to their size");
  EXPECT_EQ(space.allocator().needed(4096, 1).size, 4096u);
  EXPECT_EQ(space.allocator().needed(4096, 1).why, "");
}

// Every granularity policy names the granularity (replay --granularity) and judges the rounded size.
TEST(OutOfMemoryDiagnosis, GranularityPoliciesNameTheGranularity) {
  for (const std::string policy : {"first-fit", "best-fit", "tlsf", "bfc"}) {
    const OutOfMemory e = failure_of(policy, {16 << 10, 4096}, {{5000, 1, "a"}, {5000, 1, "c"}}, {5000, 1, "b"});
    const std::string m = e.what();
    EXPECT_EQ(e.needed(), 8192u) << policy;
    EXPECT_FALSE(e.fits_without_fragmentation()) << policy;
    EXPECT_NE(m.find(fmt::format("'b' asks for 4.88 KiB (alignment 1); {} needs 8.00 KiB (the request rounded up to "
                                 "the granularity 4.00 KiB)", policy)),
              std::string::npos) << m;
    EXPECT_NE(m.find("live buffers hold 16.0 KiB for 9.77 KiB asked"), std::string::npos) << m;
    EXPECT_NE(m.find("(4.88 KiB asked)"), std::string::npos) << m;
  }
}

TEST(MemorySpace, RejectsBadRequestsAndUnknownFrees) {
  MemorySpace space("VMEM", make_allocator("bfc", {4096, 256}));
  EXPECT_NE(test::error_of([&] { space.allocate({0, 1, "x"}); }).find("0 bytes"), std::string::npos);
  EXPECT_NE(test::error_of([&] { space.allocate({16, 3, "x"}); }).find("not a power of two"), std::string::npos);
  EXPECT_NE(test::error_of([&] { space.free(99); }).find("not live"), std::string::npos);
}

TEST(Bytes, ParseAndFormat) {
  EXPECT_EQ(parse_bytes("4096"), 4096u);
  EXPECT_EQ(parse_bytes("64KiB"), 64u << 10);
  EXPECT_EQ(parse_bytes("16 MiB"), 16u << 20);
  EXPECT_EQ(parse_bytes("2g"), 2ull << 30);
  EXPECT_EQ(parse_bytes("3KB"), 3000u);  // SI units are powers of 1000
  EXPECT_NE(test::error_of([] { parse_bytes("12parsecs"); }).find("unknown size unit"), std::string::npos);
  EXPECT_NE(test::error_of([] { parse_bytes("-5"); }).find("not a size"), std::string::npos);
  EXPECT_NE(test::error_of([] { parse_bytes("99999999999999999999"); }).find("too large"), std::string::npos);
  EXPECT_EQ(format_bytes(1536), "1.50 KiB");
  EXPECT_EQ(format_bytes(255), "255 B");
  // Sizes compared in one sentence print apart whenever they differ.
  using Texts = std::pair<std::string, std::string>;
  EXPECT_EQ(format_bytes_apart(4097, 4096), Texts("4.00 KiB (4097 B)", "4.00 KiB (4096 B)"));
  EXPECT_EQ(format_bytes_apart(4096, 4096), Texts("4.00 KiB", "4.00 KiB"));
  EXPECT_EQ(format_bytes_apart(2048, 1024), Texts("2.00 KiB", "1.00 KiB"));
  EXPECT_EQ(format_bytes_apart(1024, 1023), Texts("1.00 KiB", "1023 B"));
}

}  // namespace
}  // namespace tpuemu::alloc
