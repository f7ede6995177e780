// SPDX-License-Identifier: Apache-2.0
// Per-instruction intervals and the Chrome trace of a recorded timeline (timeline.h).
#include "tpuemu/device/timeline.h"

#include <algorithm>
#include <array>

#include <fmt/format.h>

#include "tpuemu/base/error.h"
#include "tpuemu/spec/contract.h"

namespace tpuemu {
namespace {

constexpr std::size_t kInstrBytes = spec::kInstrWidth / 8;

std::string_view queue_name(Queue q) {
  for (const spec::QueueInfo& i : spec::kQueues) {
    if (i.value == q) return i.name;
  }
  return "?";
}

}  // namespace

std::string_view opcode_name(spec::Opcode op) {
  for (const spec::OpcodeInfo& o : spec::kOpcodes) {
    if (o.value == op) return o.name;
  }
  return "?";
}

std::vector<InstructionSpan> instruction_spans(std::span<const TimelineEvent> timeline,
                                               std::span<const std::uint8_t> program) {
  if (program.size() % kInstrBytes != 0) {
    throw Error("timeline", fmt::format("program of {} bytes is not a multiple of {}", program.size(), kInstrBytes));
  }
  namespace hdr = spec::instr::header;
  std::vector<InstructionSpan> spans;
  // per queue code: the span index of each of its instructions, in order
  std::array<std::vector<std::size_t>, 4> of_queue;
  for (std::size_t pc = 0; pc * kInstrBytes < program.size(); ++pc) {
    std::array<std::uint32_t, spec::kInstrWords> w{};
    for (std::size_t i = 0; i < w.size(); ++i) {
      for (unsigned b = 0; b < 4; ++b) w[i] |= std::uint32_t{program[pc * kInstrBytes + 4 * i + b]} << (8 * b);
    }
    const auto op = static_cast<spec::Opcode>(hdr::opcode.get(w));
    if (op == spec::Opcode::End) break;
    InstructionSpan s;
    s.program_index = pc;
    s.opcode = op;
    s.queue = static_cast<Queue>(static_cast<std::uint8_t>(op) >> 4);
    auto& list = of_queue[static_cast<std::size_t>(s.queue) & 3];
    s.queue_index = static_cast<std::uint32_t>(list.size());
    if (hdr::wait_en.get(w)) s.wait_sem = static_cast<std::uint8_t>(hdr::wait_sem.get(w));
    list.push_back(spans.size());
    spans.push_back(s);
  }
  for (const TimelineEvent& e : timeline) {
    const auto& list = of_queue[static_cast<std::size_t>(e.queue) & 3];
    if (e.queue_index >= list.size()) {
      throw Error("timeline", fmt::format("event at cycle {} names {} instruction {}, but the program has {}", e.cycle,
                                          queue_name(e.queue), e.queue_index, list.size()));
    }
    InstructionSpan& s = spans[list[e.queue_index]];
    switch (e.kind) {
      case TimelineEvent::Issue: s.issue = e.cycle; break;
      case TimelineEvent::Done: s.done = e.cycle; break;
      case TimelineEvent::WaitBegin:
        if (!s.wait_begin) s.wait_begin = e.cycle;
        break;
      case TimelineEvent::WaitEnd: s.wait_end = e.cycle; break;
    }
  }
  return spans;
}

}  // namespace tpuemu
