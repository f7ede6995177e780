// SPDX-License-Identifier: Apache-2.0
// Instruction timelines of a run (RunOptions::record_timeline): the events a backend records,
// turned into one interval per instruction of the program. trace.json of `tpuemu run -o DIR`
// draws them (profile/chrome_trace.h: a track per engine queue, one per HBM channel).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include <nlohmann/json.hpp>

#include "tpuemu/device/device.h"

namespace tpuemu {

// One instruction of the program as the timeline saw it. Cycles as in TimelineEvent.
struct InstructionSpan {
  std::size_t program_index = 0;   // position in the program (instruction pc)
  Queue queue = Queue::Dma;
  std::uint32_t queue_index = 0;   // position among its queue's instructions
  spec::Opcode opcode = spec::Opcode::End;
  std::optional<std::uint64_t> issue;  // left the queue and started
  std::optional<std::uint64_t> done;   // completed (what its signal reports)
  // The head waited on a semaphore: from the first WaitBegin to the last WaitEnd of this
  // instruction (several when the wait was interrupted), on semaphore wait_sem (the header's).
  std::optional<std::uint64_t> wait_begin, wait_end;
  std::optional<std::uint8_t> wait_sem;
};

// One span per non-END instruction of `program` (its bytes as loaded, 32 per instruction; END
// and everything after the first END are not dispatched), in program order, with the events of
// `timeline` attached through (queue, queue_index). Throws Error if an event names an
// instruction the program does not have, or the size is not a multiple of 32.
std::vector<InstructionSpan> instruction_spans(std::span<const TimelineEvent> timeline,
                                               std::span<const std::uint8_t> program);

// The contract's name of an opcode ("matmul", "vquant", ...; "?" for none).
std::string_view opcode_name(spec::Opcode op);

}  // namespace tpuemu
