// SPDX-License-Identifier: Apache-2.0
// Allocation policies (tpuemu/alloc/allocator.h): properties every policy must keep under random
// alloc/free sequences, checked by brute force against what the policy reports, plus what sets
// each policy apart (best vs. first fit, buddy sizes and merging, BFC's split rule, TLSF good fit).
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "test_support.h"
#include "tpuemu/alloc/allocator.h"
#include "tpuemu/base/error.h"

namespace tpuemu::alloc {
namespace {

constexpr std::uint64_t KiB = 1024, MiB = 1024 * KiB, GiB = 1024 * MiB;

using test::error_of;

std::vector<FreeBlock> free_blocks(const Allocator& a) {
  std::vector<FreeBlock> blocks;
  a.visit_free_blocks([&](const FreeBlock& b) { blocks.push_back(b); });
  std::sort(blocks.begin(), blocks.end(),
            [](const FreeBlock& x, const FreeBlock& y) { return x.offset < y.offset; });
  return blocks;
}

bool coalesces(std::string_view policy) { return policy != "buddy"; }

// The maximal aligned power-of-two blocks a buddy allocator starts with (and returns to), plus
// the sub-granule tail it can never hand out.
std::vector<FreeBlock> buddy_top_blocks(std::uint64_t capacity, std::uint64_t granularity) {
  std::vector<FreeBlock> blocks;
  std::uint64_t offset = 0;
  for (std::uint64_t rest = capacity & ~(granularity - 1); rest != 0;) {
    const std::uint64_t block = std::bit_floor(rest);
    blocks.push_back({offset, block});
    offset += block;
    rest -= block;
  }
  if (offset < capacity) blocks.push_back({offset, capacity - offset});
  return blocks;
}

std::vector<FreeBlock> initial_free_blocks(std::string_view policy, std::uint64_t capacity,
                                           std::uint64_t granularity) {
  if (policy == "buddy") return buddy_top_blocks(capacity, granularity);
  return {{0, capacity}};
}

// Live and free blocks must tile [0, capacity) exactly: sorted by offset each starts where the
// previous ends. That alone rules out overlaps, holes and blocks outside the capacity.
void expect_tiling(const Allocator& a, std::string_view policy,
                   const std::map<std::uint64_t, Allocation>& live) {
  struct Extent {
    std::uint64_t offset, size;
    bool free;
  };
  std::vector<Extent> all;
  std::uint64_t free_bytes = 0, live_bytes = 0;
  for (const FreeBlock& b : free_blocks(a)) {
    all.push_back({b.offset, b.size, true});
    free_bytes += b.size;
  }
  for (const auto& [offset, allocation] : live) {
    all.push_back({allocation.offset, allocation.size, false});
    live_bytes += allocation.size;
  }
  std::sort(all.begin(), all.end(),
            [](const Extent& x, const Extent& y) { return x.offset < y.offset; });
  ASSERT_EQ(free_bytes + live_bytes, a.capacity());
  std::uint64_t expected = 0;
  for (std::size_t i = 0; i < all.size(); ++i) {
    ASSERT_GT(all[i].size, 0u);
    ASSERT_EQ(all[i].offset, expected) << "block " << i << (all[i].free ? " (free)" : " (live)");
    expected += all[i].size;
    if (coalesces(policy) && i > 0) {
      ASSERT_FALSE(all[i].free && all[i - 1].free)
          << "adjacent free blocks at " << all[i - 1].offset << " and " << all[i].offset;
    }
  }
  ASSERT_EQ(expected, a.capacity());
}

// Whether any free block the policy reports could hold the request: a policy may only fail when
// none can. Buddy needs a whole free block of the rounded power-of-two size (aligned by
// construction); the others need the rounded size after the padding to the alignment.
bool some_free_block_fits(const Allocator& a, std::string_view policy, std::uint64_t size,
                          std::uint64_t alignment, std::uint64_t granularity) {
  const std::uint64_t rounded = (size + granularity - 1) / granularity * granularity;
  const std::uint64_t align = std::max(alignment, granularity);
  for (const FreeBlock& b : free_blocks(a)) {
    if (policy == "buddy") {
      if (b.size >= std::bit_ceil(std::max(size, align))) return true;
    } else if ((align - b.offset % align) % align + rounded <= b.size) {
      return true;
    }
  }
  return false;
}

struct Scenario {
  std::uint64_t capacity;
  std::uint64_t granularity;
  std::uint64_t seed;
};

// Sizes 1 B .. 1 MiB (log-uniform, so small ones are common) with an occasional large one, and
// alignments 1 .. 64 KiB, most of them at most the granularity.
struct RequestGenerator {
  std::mt19937_64 rng;
  std::uint64_t size() {
    const double r = std::uniform_real_distribution<double>(0, 1)(rng);
    if (r < 0.03) return std::uniform_int_distribution<std::uint64_t>(2 * MiB, 8 * MiB)(rng);
    const double log_size = std::uniform_real_distribution<double>(0, 20)(rng);
    return std::max<std::uint64_t>(1, static_cast<std::uint64_t>(std::exp2(log_size)));
  }
  std::uint64_t alignment() {
    if (std::uniform_int_distribution<int>(0, 2)(rng) != 0) return 1;
    return std::uint64_t{1} << std::uniform_int_distribution<int>(0, 16)(rng);
  }
};

class AllocatorProperties : public ::testing::TestWithParam<std::string> {};

TEST_P(AllocatorProperties, RandomSequencesKeepEveryInvariant) {
  const std::string policy = GetParam();
  for (const Scenario& s : {Scenario{64 * MiB, 256, 1}, Scenario{48 * MiB + 768, 256, 2},
                            Scenario{16 * MiB + 100, 256, 3}, Scenario{24 * MiB, 4096, 4}}) {
    SCOPED_TRACE("capacity " + std::to_string(s.capacity) + ", granularity " +
                 std::to_string(s.granularity));
    auto a = make_allocator(policy, {s.capacity, s.granularity});
    RequestGenerator gen{std::mt19937_64(s.seed)};
    std::map<std::uint64_t, Allocation> live;  // by offset
    int succeeded = 0, failed = 0;
    for (int step = 0; step < 3000; ++step) {
      // Lean towards allocating so the space fills up and failures are exercised too.
      const bool do_alloc = live.empty() || std::uniform_int_distribution<int>(0, 9)(gen.rng) < 6;
      if (do_alloc) {
        const std::uint64_t size = gen.size(), alignment = gen.alignment();
        std::optional<Allocation> got;
        ASSERT_NO_THROW(got = a->allocate(size, alignment));
        if (!got) {
          ++failed;
          ASSERT_FALSE(some_free_block_fits(*a, policy, size, alignment, s.granularity))
              << "refused " << size << " B at alignment " << alignment << " at step " << step;
          continue;
        }
        ++succeeded;
        ASSERT_GE(got->size, size);
        ASSERT_EQ(got->offset % alignment, 0u);
        ASSERT_EQ(got->offset % s.granularity, 0u);
        ASSERT_LE(got->offset + got->size, s.capacity);
        ASSERT_FALSE(live.contains(got->offset));
        live.emplace(got->offset, *got);
      } else {
        auto it = live.begin();
        std::advance(it, std::uniform_int_distribution<std::size_t>(0, live.size() - 1)(gen.rng));
        a->deallocate(it->second);
        live.erase(it);
      }
      expect_tiling(*a, policy, live);
      if (HasFatalFailure()) return;
    }
    EXPECT_GT(succeeded, 500);
    EXPECT_GT(failed, 0) << "the sequence never filled the space";
    for (const auto& [offset, allocation] : live) a->deallocate(allocation);
    live.clear();
    const auto after = free_blocks(*a);
    const auto expected = initial_free_blocks(policy, s.capacity, s.granularity);
    ASSERT_EQ(after.size(), expected.size());
    for (std::size_t i = 0; i < after.size(); ++i) {
      EXPECT_EQ(after[i].offset, expected[i].offset);
      EXPECT_EQ(after[i].size, expected[i].size);
    }
  }
}

TEST_P(AllocatorProperties, ReportsNameAndCapacity) {
  auto a = make_allocator(GetParam(), {48 * MiB + 768});
  EXPECT_EQ(a->name(), GetParam());
  EXPECT_EQ(a->capacity(), 48 * MiB + 768);
}

TEST_P(AllocatorProperties, FullSpaceGivesNulloptAndFreedSpaceIsReused) {
  for (const std::uint64_t capacity : {64 * MiB, 48 * MiB + 768}) {
    auto a = make_allocator(GetParam(), {capacity});
    std::vector<Allocation> blocks;
    while (auto got = a->allocate(MiB, 1)) blocks.push_back(*got);
    while (auto got = a->allocate(256, 1)) blocks.push_back(*got);
    ASSERT_GE(blocks.size(), 48u);
    std::optional<Allocation> none;
    ASSERT_NO_THROW(none = a->allocate(1, 1));
    EXPECT_FALSE(none.has_value());
    EXPECT_TRUE(free_blocks(*a).empty() || GetParam() == "buddy");
    a->deallocate(blocks[3]);  // a 1 MiB block
    const auto again = a->allocate(MiB, 1);
    ASSERT_TRUE(again.has_value());
    EXPECT_EQ(again->offset, blocks[3].offset);
    EXPECT_FALSE(a->allocate(1, 1).has_value());
  }
}

TEST_P(AllocatorProperties, RequestLargerThanCapacityGivesNullopt) {
  auto a = make_allocator(GetParam(), {64 * MiB});
  EXPECT_FALSE(a->allocate(64 * MiB + 1, 1).has_value());
  EXPECT_FALSE(a->allocate(UINT64_MAX, 1).has_value());
  EXPECT_FALSE(a->allocate(UINT64_MAX - 10, 4096).has_value());
  // The whole (power-of-two) capacity is one free block, so it can be handed out whole.
  const auto all = a->allocate(64 * MiB, 1);
  ASSERT_TRUE(all.has_value());
  EXPECT_EQ(all->offset, 0u);
  EXPECT_EQ(all->size, 64 * MiB);
  EXPECT_FALSE(a->allocate(1, 1).has_value());
}

TEST_P(AllocatorProperties, HugeAlignmentIsHonouredOrRefused) {
  auto a = make_allocator(GetParam(), {64 * MiB});
  const auto pad = a->allocate(256, 1);
  ASSERT_TRUE(pad.has_value());
  for (const std::uint64_t alignment : {32 * MiB, std::uint64_t{1} << 40, std::uint64_t{1} << 63}) {
    const auto got = a->allocate(1, alignment);
    if (got) {
      EXPECT_EQ(got->offset % alignment, 0u) << alignment;
    }
  }
  // 32 MiB alignment fits in 64 MiB (at 32 MiB) whatever the policy.
  auto b = make_allocator(GetParam(), {64 * MiB});
  ASSERT_TRUE(b->allocate(256, 1).has_value());
  const auto mid = b->allocate(4 * KiB, 32 * MiB);
  ASSERT_TRUE(mid.has_value());
  EXPECT_EQ(mid->offset, 32 * MiB);
}

TEST_P(AllocatorProperties, BadAlignmentAndForeignBlocksAreErrors) {
  auto a = make_allocator(GetParam(), {MiB});
  EXPECT_NE(error_of([&] { a->allocate(256, 3); }).find("alignment 3 is not a power of two"),
            std::string::npos);
  const auto got = a->allocate(4 * KiB, 1);
  ASSERT_TRUE(got.has_value());
  a->deallocate(*got);
  EXPECT_NE(error_of([&] { a->deallocate(*got); }).find("deallocate of a block it does not hold"),
            std::string::npos);
}

TEST_P(AllocatorProperties, ZeroSizeReservesOneGranule) {
  auto a = make_allocator(GetParam(), {MiB});
  const auto got = a->allocate(0, 1);
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->size, 256u);
}

INSTANTIATE_TEST_SUITE_P(AllPolicies, AllocatorProperties,
                         ::testing::ValuesIn(allocator_names()),
                         [](const auto& info) {
                           std::string name = info.param;
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

// Allocates blocks of the given sizes back to back from offset 0 (each followed by a 4 KiB
// separator that stays live) and frees the ones marked, leaving holes of known size and place.
struct Holes {
  std::vector<Allocation> blocks;
  std::vector<Allocation> separators;
};
Holes make_holes(Allocator& a, const std::vector<std::pair<std::uint64_t, bool>>& layout) {
  Holes h;
  for (const auto& [size, hole] : layout) {
    const auto block = a.allocate(size, 1);
    const auto separator = a.allocate(4 * KiB, 1);
    EXPECT_TRUE(block && separator);
    h.blocks.push_back(*block);
    h.separators.push_back(*separator);
  }
  for (std::size_t i = 0; i < layout.size(); ++i) {
    if (layout[i].second) a.deallocate(h.blocks[i]);
  }
  return h;
}

TEST(AllocatorBestFit, PicksTheSmallestFittingHoleLowestAddressOnTies) {
  auto a = make_allocator("best-fit", {16 * MiB});
  const auto h = make_holes(*a, {{64 * KiB, true}, {16 * KiB, true}, {32 * KiB, true},
                                 {16 * KiB, true}, {8 * KiB, false}});
  const auto in16 = a->allocate(10 * KiB, 1);  // two 16 KiB holes: the lower one
  ASSERT_TRUE(in16);
  EXPECT_EQ(in16->offset, h.blocks[1].offset);
  const auto in32 = a->allocate(20 * KiB, 1);  // the 6 KiB and 16 KiB holes are too small
  ASSERT_TRUE(in32);
  EXPECT_EQ(in32->offset, h.blocks[2].offset);
  const auto exact = a->allocate(16 * KiB, 1);  // the other 16 KiB hole fits exactly
  ASSERT_TRUE(exact);
  EXPECT_EQ(exact->offset, h.blocks[3].offset);
}

TEST(AllocatorFirstFit, PicksTheLowestAddressThatFits) {
  auto a = make_allocator("first-fit", {16 * MiB});
  const auto h = make_holes(*a, {{16 * KiB, true}, {64 * KiB, true}, {32 * KiB, true}});
  const auto got = a->allocate(20 * KiB, 1);
  ASSERT_TRUE(got);
  EXPECT_EQ(got->offset, h.blocks[1].offset);  // 16 KiB hole too small, 64 KiB hole is next
  const auto small = a->allocate(4 * KiB, 1);
  ASSERT_TRUE(small);
  EXPECT_EQ(small->offset, h.blocks[0].offset);
  const auto rest = a->allocate(44 * KiB, 1);  // what is left of the 64 KiB hole
  ASSERT_TRUE(rest);
  EXPECT_EQ(rest->offset, h.blocks[1].offset + 20 * KiB);
}

TEST(AllocatorFirstFit, AlignmentPaddingStaysFree) {
  auto a = make_allocator("first-fit", {MiB});
  ASSERT_TRUE(a->allocate(256, 1));
  const auto got = a->allocate(256, 64 * KiB);
  ASSERT_TRUE(got);
  EXPECT_EQ(got->offset, 64 * KiB);
  EXPECT_EQ(got->size, 256u);
  const auto blocks = free_blocks(*a);
  ASSERT_EQ(blocks.size(), 2u);
  EXPECT_EQ(blocks[0].offset, 256u);
  EXPECT_EQ(blocks[0].size, 64 * KiB - 256);
}

TEST(AllocatorBuddy, RoundsToPowersOfTwoAlignedToTheirSize) {
  auto a = make_allocator("buddy", {MiB});
  const auto b3000 = a->allocate(3000, 1);
  ASSERT_TRUE(b3000);
  EXPECT_EQ(b3000->size, 4 * KiB);
  EXPECT_EQ(b3000->offset % (4 * KiB), 0u);
  const auto b257 = a->allocate(257, 1);
  ASSERT_TRUE(b257);
  EXPECT_EQ(b257->size, 512u);
  const auto b1 = a->allocate(1, 1);
  ASSERT_TRUE(b1);
  EXPECT_EQ(b1->size, 256u);
  const auto aligned = a->allocate(1, 64 * KiB);  // alignment sets the block size
  ASSERT_TRUE(aligned);
  EXPECT_EQ(aligned->size, 64 * KiB);
  EXPECT_EQ(aligned->offset % (64 * KiB), 0u);
}

TEST(AllocatorBuddy, SplitsAndMergesBuddies) {
  auto a = make_allocator("buddy", {MiB});
  const auto first = a->allocate(256 * KiB, 1);
  ASSERT_TRUE(first);
  EXPECT_EQ(first->offset, 0u);
  auto blocks = free_blocks(*a);  // the split leaves the buddy and the upper half
  ASSERT_EQ(blocks.size(), 2u);
  EXPECT_EQ(blocks[0].offset, 256 * KiB);
  EXPECT_EQ(blocks[0].size, 256 * KiB);
  EXPECT_EQ(blocks[1].offset, 512 * KiB);
  EXPECT_EQ(blocks[1].size, 512 * KiB);
  const auto second = a->allocate(256 * KiB, 1);
  ASSERT_TRUE(second);
  EXPECT_EQ(second->offset, 256 * KiB);
  a->deallocate(*first);  // its buddy is live: no merge
  EXPECT_EQ(free_blocks(*a).size(), 2u);
  a->deallocate(*second);  // merges with its buddy, then with the upper half
  blocks = free_blocks(*a);
  ASSERT_EQ(blocks.size(), 1u);
  EXPECT_EQ(blocks[0].size, MiB);
}

TEST(AllocatorBuddy, NonPowerOfTwoCapacityNeverMergesAcrossTopBlocks) {
  auto a = make_allocator("buddy", {48 * MiB + 768});
  const auto expected = buddy_top_blocks(48 * MiB + 768, 256);
  ASSERT_EQ(expected.size(), 4u);  // 32 MiB, 16 MiB, 512 B, 256 B
  EXPECT_EQ(free_blocks(*a).size(), 4u);
  EXPECT_FALSE(a->allocate(48 * MiB, 1).has_value());  // would need a 64 MiB block
  const auto small = a->allocate(512, 1);  // the smallest free block that fits: the 512 B one
  ASSERT_TRUE(small);
  EXPECT_EQ(small->offset, 48 * MiB);
  a->deallocate(*small);
  EXPECT_EQ(free_blocks(*a).size(), 4u);
}

TEST(AllocatorBfc, RoundsToTheGranularity) {
  auto a = make_allocator("bfc", {64 * MiB});
  const auto one = a->allocate(1, 1);
  ASSERT_TRUE(one);
  EXPECT_EQ(one->size, 256u);
  const auto more = a->allocate(257, 1);
  ASSERT_TRUE(more);
  EXPECT_EQ(more->size, 512u);
  EXPECT_EQ(more->offset, 256u);
}

// BFC's split rule (TensorFlow's): split a free chunk only if it is at least twice the request or
// the leftover would be at least 128 MiB; otherwise the whole chunk is handed out.
TEST(AllocatorBfc, SplitsOnlyWhenTheChunkIsTwiceTheRequestOrTheLeftoverIsHuge) {
  auto a = make_allocator("bfc", {64 * MiB});
  const auto h = make_holes(*a, {{512 * KiB, true}, {512 * KiB, true}, {KiB, false}});
  const auto whole = a->allocate(300 * KiB, 1);  // 512 < 2 * 300 and 212 KiB leftover: no split
  ASSERT_TRUE(whole);
  EXPECT_EQ(whole->offset, h.blocks[0].offset);
  EXPECT_EQ(whole->size, 512 * KiB);
  const auto split = a->allocate(200 * KiB, 1);  // 512 >= 2 * 200: split
  ASSERT_TRUE(split);
  EXPECT_EQ(split->offset, h.blocks[1].offset);
  EXPECT_EQ(split->size, 200 * KiB);
  bool remainder_free = false;
  for (const auto& b : free_blocks(*a)) {
    remainder_free |= b.offset == h.blocks[1].offset + 200 * KiB && b.size == 312 * KiB;
  }
  EXPECT_TRUE(remainder_free);

  auto big = make_allocator("bfc", {GiB});
  const auto hb = make_holes(*big, {{300 * MiB, true}, {200 * MiB, true}, {KiB, false}});
  const auto small_leftover = big->allocate(150 * MiB, 1);  // 200 MiB chunk, 50 MiB left: whole
  ASSERT_TRUE(small_leftover);
  EXPECT_EQ(small_leftover->offset, hb.blocks[1].offset);
  EXPECT_EQ(small_leftover->size, 200 * MiB);
  const auto huge_leftover = big->allocate(160 * MiB, 1);  // 300 < 320, but 140 MiB >= 128 MiB
  ASSERT_TRUE(huge_leftover);
  EXPECT_EQ(huge_leftover->offset, hb.blocks[0].offset);
  EXPECT_EQ(huge_leftover->size, 160 * MiB);
}

TEST(AllocatorBfc, PicksTheSmallestFittingChunk) {
  auto a = make_allocator("bfc", {64 * MiB});
  const auto h = make_holes(*a, {{8 * MiB, true}, {MiB, true}, {2 * MiB, true}, {KiB, false}});
  const auto got = a->allocate(MiB + 1, 1);
  ASSERT_TRUE(got);
  EXPECT_EQ(got->offset, h.blocks[2].offset);
}

// With 32 second-level lists, classes above 32 granules span several sizes: 133 granules
// (33.25 KiB) is in class [132, 136) and rounds up to 136 granules (34 KiB) for the lookup.
TEST(AllocatorTlsf, GoodFitFindsABlockOfTheRoundedClass) {
  auto a = make_allocator("tlsf", {64 * MiB});
  const auto h = make_holes(*a, {{134 * 256, true}, {136 * 256, true}, {KiB, false}});
  const auto got = a->allocate(133 * 256, 1);
  ASSERT_TRUE(got);
  EXPECT_EQ(got->offset, h.blocks[1].offset);  // the block of class >= 136, found in O(1)
  EXPECT_EQ(got->size, 133 * 256u);
}

TEST(AllocatorTlsf, FindsAFittingBlockInTheSameClass) {
  auto a = make_allocator("tlsf", {4 * MiB});
  const auto first = a->allocate(134 * 256, 1);
  ASSERT_TRUE(first);
  const auto rest = a->allocate(4 * MiB - 134 * 256, 1);
  ASSERT_TRUE(rest);
  a->deallocate(*first);
  const auto got = a->allocate(133 * 256, 1);  // only a 134-granule block is free
  ASSERT_TRUE(got);
  EXPECT_EQ(got->offset, 0u);
}

TEST(AllocatorFactory, NamesInReportOrder) {
  EXPECT_EQ(allocator_names(),
            (std::vector<std::string>{"bfc", "first-fit", "best-fit", "buddy", "tlsf"}));
  EXPECT_EQ(make_allocator(kDefaultAllocator, {MiB})->name(), "bfc");
}

TEST(AllocatorFactory, UnknownNameListsTheKnownOnes) {
  EXPECT_EQ(error_of([] { make_allocator("slab", {MiB}); }),
            "unknown allocator 'slab' (known: bfc, first-fit, best-fit, buddy, tlsf)");
}

TEST(AllocatorFactory, RejectsZeroCapacityAndBadGranularity) {
  EXPECT_EQ(error_of([] { make_allocator("bfc", {0}); }),
            "allocator capacity must be greater than 0");
  EXPECT_EQ(error_of([] { make_allocator("tlsf", {MiB, 0}); }),
            "allocator granularity 0 is not a power of two");
  EXPECT_EQ(error_of([] { make_allocator("buddy", {MiB, 384}); }),
            "allocator granularity 384 is not a power of two");
}

}  // namespace
}  // namespace tpuemu::alloc
