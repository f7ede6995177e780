// SPDX-License-Identifier: Apache-2.0
// fragmentation.csv read back (the time series CSV of docs/allocation.md, which `run -o DIR` and
// `replay -o` write): one series of allocator states per memory space and policy, for report.html.
#pragma once

#include <string>
#include <vector>

#include "tpuemu/alloc/memory_space.h"

namespace tpuemu::profile {

struct FragmentationSeries {
  std::string space, policy;
  std::vector<alloc::SpaceSnapshot> samples;  // in file order
};

// Series in order of first appearance. Errors name file:line:column of the bad field.
std::vector<FragmentationSeries> parse_fragmentation_csv(std::string text, const std::string& source);

}  // namespace tpuemu::profile
