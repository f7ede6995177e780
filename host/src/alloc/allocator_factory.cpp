// SPDX-License-Identifier: Apache-2.0
// make_allocator, allocator_names and the argument checks every policy shares.
#include <algorithm>

#include <fmt/format.h>

#include "policies.h"
#include "tpuemu/alloc/memory_space.h"
#include "tpuemu/base/error.h"

namespace tpuemu::alloc {

namespace detail {

void throw_bad_alignment(std::uint64_t alignment) {
  throw Error(fmt::format("alignment {} is not a power of two", alignment));
}

NeededBlock granularity_needed(std::uint64_t size, std::uint64_t granularity) {
  if (size == 0) size = 1;
  const auto rounded = round_up(size, granularity);
  const std::uint64_t need = rounded.value_or(UINT64_MAX);
  if (need == size) return {size, {}};
  return {need, fmt::format("the request rounded up to the granularity {}", format_bytes(granularity))};
}

std::string granularity_oversize_rule(std::uint64_t granularity) {
  return fmt::format("a remainder smaller than the granularity {} stays with the block before it",
                     format_bytes(granularity));
}

}  // namespace detail

const std::vector<std::string>& allocator_names() {
  static const std::vector<std::string> names{"bfc", "first-fit", "best-fit", "buddy", "tlsf"};
  return names;
}

std::unique_ptr<Allocator> make_allocator(std::string_view name, const AllocatorOptions& options) {
  const auto& names = allocator_names();
  if (std::find(names.begin(), names.end(), name) == names.end()) {
    throw Error(fmt::format("unknown allocator '{}' (known: {})", name, fmt::join(names, ", ")));
  }
  if (options.capacity == 0) throw Error("allocator capacity must be greater than 0");
  if (!std::has_single_bit(options.granularity)) {
    throw Error(fmt::format("allocator granularity {} is not a power of two", options.granularity));
  }
  if (name == "bfc") return std::make_unique<BfcAllocator>(options);
  if (name == "first-fit") return std::make_unique<FirstFitAllocator>(options);
  if (name == "best-fit") return std::make_unique<BestFitAllocator>(options);
  if (name == "buddy") return std::make_unique<BuddyAllocator>(options);
  return std::make_unique<TlsfAllocator>(options);
}

}  // namespace tpuemu::alloc
