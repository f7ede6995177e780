// SPDX-License-Identifier: Apache-2.0
// Layer hlo, private to the placement sources: what every policy shares — the check of the
// buffers' live ranges and the metrics computed from a placement (docs/hlo.md, "Buffer
// assignment"). The metrics are computed here, never by a policy, so that they mean the same for all.
#pragma once

#include <cstdint>

#include "tpuemu/hlo/buffers.h"
#include "tpuemu/hlo/placement.h"

namespace tpuemu::hlo::detail {

// Throws Error naming the first buffer whose range is not inside [0, positions) or is reversed.
void check_buffers(const BufferSet& set);

// Fills the metrics that do not depend on where the buffers went (peak live padded and unpadded,
// bytes live for the whole program, padding) and, from `heap_bytes`, the fragmentation.
void fill_metrics(const BufferSet& set, Placement& placement);

// max(offset + bytes) over the buffers: the heap a placement needs.
std::uint64_t heap_of(const BufferSet& set, const std::vector<std::uint64_t>& offsets);

}  // namespace tpuemu::hlo::detail
