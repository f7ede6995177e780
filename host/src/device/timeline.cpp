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

std::string_view opcode_name(spec::Opcode op) {
  for (const spec::OpcodeInfo& o : spec::kOpcodes) {
    if (o.value == op) return o.name;
  }
  return "?";
}

std::string_view queue_name(Queue q) {
  for (const spec::QueueInfo& i : spec::kQueues) {
    if (i.value == q) return i.name;
  }
  return "?";
}

}  // namespace

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

nlohmann::json timeline_chrome_trace(std::span<const InstructionSpan> spans, std::span<const HbmInterval> hbm,
                                     double clock_ghz) {
  nlohmann::json events = nlohmann::json::array();
  const double us_per_cycle = 1.0 / (1000.0 * clock_ghz);
  auto ts = [&](std::uint64_t cycles) { return static_cast<double>(cycles) * us_per_cycle; };
  constexpr int kQueuePid = 1, kHbmPid = 2;
  std::uint64_t next_id = 1;
  auto slice = [&](int pid, int tid, const std::string& cat, const std::string& name, std::uint64_t begin,
                   std::uint64_t end, nlohmann::json args) {
    const std::string id = fmt::format("{:#x}", next_id++);
    events.push_back({{"ph", "b"}, {"cat", cat}, {"name", name}, {"id", id}, {"pid", pid}, {"tid", tid},
                      {"ts", ts(begin)}, {"args", std::move(args)}});
    events.push_back({{"ph", "e"}, {"cat", cat}, {"name", name}, {"id", id}, {"pid", pid}, {"tid", tid},
                      {"ts", ts(end)}});
  };
  events.push_back({{"ph", "M"}, {"name", "process_name"}, {"pid", kQueuePid}, {"args", {{"name", "queues"}}}});
  for (const spec::QueueInfo& q : spec::kQueues) {
    if (q.value == Queue::Control) continue;
    events.push_back({{"ph", "M"}, {"name", "thread_name"}, {"pid", kQueuePid},
                      {"tid", static_cast<int>(q.value)}, {"args", {{"name", std::string(q.name) + " queue"}}}});
  }
  for (const InstructionSpan& s : spans) {
    const int tid = static_cast<int>(s.queue);
    const std::string cat(queue_name(s.queue));
    if (s.wait_begin && s.wait_end) {
      slice(kQueuePid, tid, cat, s.wait_sem ? fmt::format("wait s{}", *s.wait_sem) : "wait", *s.wait_begin,
            *s.wait_end, {{"pc", s.program_index}});
    }
    if (s.issue && s.done) {
      slice(kQueuePid, tid, cat, fmt::format("{} #{}", opcode_name(s.opcode), s.program_index), *s.issue,
            std::max(*s.done, *s.issue), {{"pc", s.program_index}, {"queue_index", s.queue_index}});
    }
  }
  if (!hbm.empty()) {
    events.push_back({{"ph", "M"}, {"name", "process_name"}, {"pid", kHbmPid}, {"args", {{"name", "HBM"}}}});
    std::vector<bool> named;
    for (const HbmInterval& h : hbm) {
      const int tid = static_cast<int>(h.channel) + 1;
      if (named.size() <= h.channel) named.resize(h.channel + 1, false);
      if (!named[h.channel]) {
        named[h.channel] = true;
        events.push_back({{"ph", "M"}, {"name", "thread_name"}, {"pid", kHbmPid}, {"tid", tid},
                          {"args", {{"name", fmt::format("channel {}", h.channel)}}}});
      }
      slice(kHbmPid, tid, fmt::format("ch{}", h.channel), h.kind == HbmInterval::Busy ? "busy" : "refresh", h.begin,
            h.end, nlohmann::json::object());
    }
  }
  return {{"traceEvents", std::move(events)},
          {"displayTimeUnit", "ns"},
          {"otherData", {{"clock_ghz", clock_ghz}, {"time_unit", "core cycles"}}}};
}

}  // namespace tpuemu
