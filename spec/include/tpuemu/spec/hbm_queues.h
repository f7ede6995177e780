// SPDX-License-Identifier: Apache-2.0
// The HBM controller's queue sizes (docs/hbm.md "Queues and write batching"): the read queue,
// the write queue and the write queue's two watermarks, per channel. They are runtime inputs of
// the RTL (the last fields of hbm_spec_pkg::timing_t), bounded by the slots the RTL was built
// with (spec::hbm::kQueueSlots). Header only, beside the address decoder, so that the host's
// config layer, the simulator and the TLM model share one definition and one check.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "tpuemu/spec/contract.h"

namespace tpuemu::spec::hbm {

struct QueueSizes {
#define TPUEMU_QUEUE_SIZE_MEMBER(name, def, doc) std::uint32_t name = def;
  TPUEMU_SPEC_HBM_QUEUE_PARAMS(TPUEMU_QUEUE_SIZE_MEMBER)
#undef TPUEMU_QUEUE_SIZE_MEMBER

  // In the order of timing_t (after BL).
  std::array<std::uint32_t, kNumQueueParams> values() const {
#define TPUEMU_QUEUE_SIZE_VALUE(name, def, doc) name,
    return {TPUEMU_SPEC_HBM_QUEUE_PARAMS(TPUEMU_QUEUE_SIZE_VALUE)};
#undef TPUEMU_QUEUE_SIZE_VALUE
  }

  // The first rule the sizes break, naming the field ("" when they are valid): each queue holds
  // at least one request, both fit the RTL's slots, write_low < write_high <= write_queue.
  std::string problem() const {
    if (read_queue < 1) return "read_queue: must be at least 1";
    if (write_queue < 1) return "write_queue: must be at least 1";
    if (std::uint64_t{read_queue} + write_queue > kQueueSlots) {
      return "write_queue: read_queue + write_queue = " + std::to_string(std::uint64_t{read_queue} + write_queue) +
             " exceeds the " + std::to_string(kQueueSlots) + " slots of the controller's queue";
    }
    if (write_high > write_queue) {
      return "write_high: " + std::to_string(write_high) + " > write_queue = " + std::to_string(write_queue);
    }
    if (write_low >= write_high) {
      return "write_low: " + std::to_string(write_low) + " >= write_high = " + std::to_string(write_high);
    }
    return {};
  }

  bool operator==(const QueueSizes&) const = default;
};

}  // namespace tpuemu::spec::hbm
