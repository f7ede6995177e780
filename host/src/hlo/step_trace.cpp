// SPDX-License-Identifier: Apache-2.0
#include "tpuemu/hlo/step_trace.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "tpuemu/base/error.h"
#include "tpuemu/hlo/analysis.h"

namespace tpuemu::hlo {

namespace {

// Trace fields are plain CSV: a buffer name such as "p{1,0}" must not split its row.
std::string field(std::string_view text) {
  std::string s(text);
  for (char& c : s) {
    if (c == ',') c = '.';
    else if (c == ' ' || c == '\t' || c == '\n' || c == '\r') c = '_';
  }
  return s;
}

alloc::TraceEvent alloc_event(std::uint64_t time, std::string id, std::uint64_t size, std::uint64_t padding, std::string owner) {
  alloc::TraceEvent e;
  e.time = time;
  e.alloc = true;
  e.id = std::move(id);
  e.size = size;
  e.padding = std::min(padding, size);
  e.owner = std::move(owner);
  return e;
}

// What a resident buffer is, for its owner: an argument, a donated argument, or a constant.
std::string_view resident_role(const LiveBuffer& b) {
  if (b.kind == BufferKind::Constant) return "constant";
  return b.shares_argument ? "donated" : "argument";
}

alloc::TraceEvent free_event(std::uint64_t time, const alloc::TraceEvent& allocated) {
  alloc::TraceEvent e = allocated;
  e.time = time;
  e.alloc = false;
  return e;
}

}  // namespace

StepProgram step_program(const Module& module, const SizeOptions& sizes, const std::string& schedule,
                         const StopToken& stop) {
  AnalysisOptions options;
  options.stop = stop;
  options.schedule = schedule;
  options.sizes = sizes;
  options.policies = {"xla"};  // the temporary block is the TPU compiler's; no other policy is needed
  const Analysis analysis = analyze(module, options);
  StepProgram p;
  p.name = module.name;
  for (const LiveBuffer& b : analysis.schedule.buffers.buffers) {
    if (b.kind == BufferKind::Parameter || b.shares_argument || b.kind == BufferKind::Constant) {
      p.resident.push_back(b);
    } else if (b.kind == BufferKind::Output) {
      p.outputs.push_back(b);
    }
  }
  p.temporaries = analysis.usage.temporaries;
  p.temporaries_padding = std::min(p.temporaries, analysis.usage.temporaries_padded - analysis.usage.temporaries_unpadded);
  return p;
}

alloc::AllocTrace step_trace(std::span<const StepProgram> programs, std::uint64_t steps, const std::string& source,
                             const StopToken& stop) {
  if (programs.empty()) throw Error("step trace: no program");
  if (steps == 0 || steps > kMaxTraceSteps)
    throw Error(fmt::format("step trace: {} steps (1 to {})", steps, kMaxTraceSteps));
  alloc::AllocTrace trace;
  trace.source = source;
  // Ids carry the program's name; two programs of one name (a module given twice) get "#2".
  std::vector<std::string> names;
  std::set<std::string> taken;
  for (std::size_t k = 0; k < programs.size(); ++k) {
    std::string name = field(programs[k].name.empty() ? fmt::format("program{}", k + 1) : programs[k].name);
    if (taken.contains(name)) name += fmt::format("#{}", k + 1);
    taken.insert(name);
    names.push_back(name);
  }
  for (std::size_t k = 0; k < programs.size(); ++k) {
    for (const LiveBuffer& b : programs[k].resident) {
      if (b.bytes == 0) continue;  // a token holds no memory; a trace has no empty allocations
      const std::string id = fmt::format("{}.{}", names[k], field(b.name));
      trace.events.push_back(alloc_event(0, id, b.bytes, b.bytes - std::min(b.bytes, b.unpadded),
                                         fmt::format("{} {}", id, resident_role(b))));
    }
  }
  std::vector<alloc::TraceEvent> previous;  // the outputs of the step before
  for (std::uint64_t i = 0; i < steps; ++i) {
    if (i % 4096 == 0) stop.throw_if_requested("the steps' trace");
    const std::uint64_t time = i + 1;
    const std::size_t k = i % programs.size();
    const StepProgram& p = programs[k];
    std::vector<alloc::TraceEvent> outputs;
    for (const LiveBuffer& b : p.outputs) {
      if (b.bytes == 0) continue;
      const std::string id = fmt::format("s{}.{}.{}", i, names[k], field(b.name));
      outputs.push_back(alloc_event(time, id, b.bytes, b.bytes - std::min(b.bytes, b.unpadded), fmt::format("step {} output {}", i, id)));
      trace.events.push_back(outputs.back());
    }
    if (p.temporaries > 0) {
      const std::string id = fmt::format("s{}.{}.temp", i, names[k]);
      trace.events.push_back(alloc_event(time, id, p.temporaries, p.temporaries_padding, fmt::format("step {} temporaries of {}", i, names[k])));
      const alloc::TraceEvent allocated = trace.events.back();
      trace.events.push_back(free_event(time, allocated));
    }
    for (const alloc::TraceEvent& e : previous) trace.events.push_back(free_event(time, e));
    previous = std::move(outputs);
  }
  return trace;
}

}  // namespace tpuemu::hlo
