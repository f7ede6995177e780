// SPDX-License-Identifier: Apache-2.0
// Allocation policies for one contiguous memory space (HBM, VMEM): the interface every policy
// implements and the factory that names them. Policies only place blocks; what the placement costs
// (fragmentation, waste, peaks) is measured outside them, identically for all, by
// tpuemu/alloc/memory_space.h. Policies and their sources: docs/allocation.md.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tpuemu::alloc {

// A block handed out by a policy. `size` is what the policy reserved (request rounded up to its
// granularity or size class), `offset` is aligned as requested. `handle` is the policy's own
// cookie (a chunk index, ...) that makes deallocate O(1); callers hand the Allocation back as is.
struct Allocation {
  std::uint64_t offset = 0;
  std::uint64_t size = 0;
  std::uint64_t handle = 0;
};

// A free extent the policy holds, for checks and tests.
struct FreeBlock {
  std::uint64_t offset = 0;
  std::uint64_t size = 0;
};

// What a policy must find free for a request: the request rounded up to its granularity or size
// class, raised to the alignment where the policy does so (UINT64_MAX when that overflows).
struct NeededBlock {
  std::uint64_t size = 0;
  std::string why;  // how it was rounded ("rounded up to a power of two ..."); empty: as asked
};

struct AllocatorOptions {
  std::uint64_t capacity = 0;      // bytes managed, offsets [0, capacity)
  std::uint64_t granularity = 256; // smallest unit handed out; a power of two
};

class Allocator {
 public:
  virtual ~Allocator() = default;
  Allocator() = default;
  Allocator(const Allocator&) = delete;
  Allocator& operator=(const Allocator&) = delete;

  virtual std::string_view name() const = 0;
  virtual std::uint64_t capacity() const = 0;

  // Reserves at least `size` (> 0) bytes at an offset that is a multiple of `alignment` (a power
  // of two >= 1). nullopt when no free block can hold the request: the caller decides what an
  // out-of-memory means. Never throws for lack of space.
  virtual std::optional<Allocation> allocate(std::uint64_t size, std::uint64_t alignment) = 0;
  // Returns a block from allocate(); the freed space coalesces with free neighbours at once
  // (buddy: with its buddy, recursively).
  virtual void deallocate(const Allocation& allocation) = 0;

  // What allocate(size, alignment) must find free, and why that is more than `size`: the size an
  // out-of-memory diagnosis compares with the free bytes (MemorySpace).
  virtual NeededBlock needed(std::uint64_t size, std::uint64_t alignment) const = 0;
  // Why a block handed out can be larger than needed() (bfc: a chunk it did not split), for the
  // same diagnosis; empty when it never is.
  virtual std::string oversize_rule() const = 0;

  // Every free block the policy holds, in any order. After everything is freed a coalescing
  // policy holds exactly one block [0, capacity) (buddy: its maximal aligned power-of-two blocks).
  virtual void visit_free_blocks(const std::function<void(const FreeBlock&)>& visit) const = 0;
};

// "bfc" (default), "first-fit", "best-fit", "buddy", "tlsf". Throws Error
// "unknown allocator 'x' (known: bfc, first-fit, best-fit, buddy, tlsf)" for any other name, and
// Error for a capacity of 0 or a granularity that is not a power of two.
std::unique_ptr<Allocator> make_allocator(std::string_view name, const AllocatorOptions& options);
// The policy names in the order reports list them.
const std::vector<std::string>& allocator_names();
inline constexpr std::string_view kDefaultAllocator = "bfc";

}  // namespace tpuemu::alloc
