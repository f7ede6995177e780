// SPDX-License-Identifier: Apache-2.0
#include "vmem_placement.h"

#include <fmt/format.h>

#include "tpuemu/plan/planner.h"

namespace tpuemu {

VmemPlacer::VmemPlacer(const Preset& preset, alloc::MemorySpace* dynamic_space)
    : preset_(preset), space_(dynamic_space) {}

VmemPlacer::~VmemPlacer() { release(); }

void VmemPlacer::release() {
  for (const alloc::BufferId id : held_) space_->free(id);
  held_.clear();
}

std::string VmemPlacer::method() const { return space_ ? std::string(space_->policy()) : "planner"; }

bool VmemPlacer::place(std::span<const std::string> names, std::span<const std::uint32_t> rows,
                       std::vector<std::uint32_t>& bases) {
  release();
  failure_.clear();
  bases.assign(rows.size(), 0);
  const std::uint64_t row_bytes = preset_.dim;
  if (space_) {
    for (std::size_t i = 0; i < rows.size(); ++i) {
      if (rows[i] == 0) continue;
      std::optional<alloc::OutOfMemory> oom;
      const auto placed = space_->try_allocate({rows[i] * row_bytes, row_bytes, "matmul " + names[i]}, 0, &oom);
      if (!placed) {
        failure_ = oom->what();
        release();
        return false;
      }
      held_.push_back(placed->id);
      bases[i] = static_cast<std::uint32_t>(placed->offset / row_bytes);
    }
    return true;
  }
  std::vector<plan::PlanBuffer> buffers;
  std::vector<std::size_t> index;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (rows[i] == 0) continue;
    buffers.push_back({names[i], 0, 1, rows[i] * row_bytes, row_bytes});
    index.push_back(i);
  }
  plan::PlanOptions options;
  options.capacity = std::uint64_t{preset_.vmem_rows} * row_bytes;
  options.timeout_seconds = 1;
  const plan::PlanResult plan = plan::plan_buffers(buffers, options);
  if (plan.status != plan::PlanStatus::Solved) {
    failure_ = fmt::format("VMEM plan: {}", plan.reason);
    return false;
  }
  for (std::size_t j = 0; j < index.size(); ++j) bases[index[j]] = static_cast<std::uint32_t>(plan.offsets[j] / row_bytes);
  return true;
}

}  // namespace tpuemu
