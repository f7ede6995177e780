// SPDX-License-Identifier: Apache-2.0
// Where the compiler puts a matmul's VMEM buffers (all slots of A, of B, of the output). They live
// for the whole matmul, so the offline planner packs them (tpuemu/plan/planner.h); a compile
// that names a runtime allocation policy (CompileOptions::vmem_space) places them with it instead,
// the way a runtime without a static plan would, and frees them when the matmul's program ends.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "tpuemu/alloc/memory_space.h"
#include "tpuemu/config/config.h"

namespace tpuemu {

class VmemPlacer {
 public:
  VmemPlacer(const Preset& preset, alloc::MemorySpace* dynamic_space);
  ~VmemPlacer();
  VmemPlacer(const VmemPlacer&) = delete;
  VmemPlacer& operator=(const VmemPlacer&) = delete;

  // Base rows for regions of `rows` rows (names for messages); false when they do not fit, with
  // the reason in failure(). Replaces any earlier placement.
  bool place(std::span<const std::string> names, std::span<const std::uint32_t> rows, std::vector<std::uint32_t>& bases);
  const std::string& failure() const { return failure_; }
  // "planner" or the policy's name.
  std::string method() const;

 private:
  void release();

  const Preset& preset_;
  alloc::MemorySpace* space_;
  std::vector<alloc::BufferId> held_;
  std::string failure_;
};

}  // namespace tpuemu
