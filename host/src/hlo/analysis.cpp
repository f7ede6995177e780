// SPDX-License-Identifier: Apache-2.0
#include "tpuemu/hlo/analysis.h"

#include <algorithm>
#include <numeric>

#include <fmt/format.h>

#include "liveness_detail.h"
#include "tpuemu/alloc/memory_space.h"

namespace tpuemu::hlo {

namespace {

using alloc::format_bytes;
using alloc::format_bytes_apart;

// The split of the "xla" placement (assign_xla): the allocations of their own by kind, and the
// temporaries' block with their peak, which it holds.
HbmUsage usage_of(const BufferSet& set, const Placement& xla) {
  HbmUsage u;
  const auto temporary = [](const LiveBuffer& b) {
    return b.kind == BufferKind::Temp && !b.shares_argument;
  };
  for (const LiveBuffer& b : set.buffers) {
    // A donated argument's buffer is the output's too: an argument, and shared by the output.
    if (b.kind == BufferKind::Parameter || b.shares_argument) {
      u.arguments += b.bytes;
      if (b.shares_argument) u.outputs_shared += b.bytes;
    } else if (b.kind == BufferKind::Output) {
      u.outputs += b.bytes;
    } else if (b.kind == BufferKind::Constant) {
      u.constants += b.bytes;
    }
  }
  const PeakLive temporaries = peak_live(set, temporary);
  u.temporaries_unpadded = temporaries.unpadded;
  u.temporaries_padded = temporaries.bytes;
  u.temporaries = xla.temporaries_block_bytes;
  u.total = u.arguments + u.outputs + u.constants + u.temporaries;
  return u;
}

bool any_sharding(const Module& module) {
  for (const Computation& c : module.computations) {
    for (const Instruction& i : c.instructions) {
      if (i.attribute("sharding") != nullptr) return true;
    }
  }
  return false;
}

double expansion(const LiveBuffer& b) {
  return b.unpadded == 0 ? 1.0 : static_cast<double>(b.bytes) / static_cast<double>(b.unpadded);
}

}  // namespace

Analysis analyze(const Module& module, const AnalysisOptions& options) {
  Analysis a;
  a.source = module.source;
  a.module = module.name;
  a.entry_instructions = module.entry_computation().instructions.size();
  a.instructions = module.instruction_count();
  a.num_partitions = module.num_partitions;
  a.sharded = module.num_partitions > 1 || any_sharding(module);
  a.sizes = options.sizes;
  a.hbm_capacity = options.hbm_capacity;
  a.schedule_requested = !options.schedule.empty() ? options.schedule : module.is_scheduled ? "text" : "best";
  a.schedule = choose_schedule(module, a.schedule_requested, options.sizes, options.stop);
  PlacementOptions placement;
  placement.capacity = options.hbm_capacity;
  placement.planner_timeout_seconds = options.planner_timeout_seconds;
  placement.stop = options.stop;
  const std::vector<std::string> policies = options.policies.empty() ? placement_policy_names() : options.policies;
  // The TPU compiler's heap is the reference of the usage split; it needs no capacity.
  PlacementOptions unbounded = placement;
  unbounded.capacity.reset();
  // VMEM (S(1)) is its own heap: its buffers leave the HBM set the policies place.
  // In place, in order: a module of millions of buffers has no room for a second copy of them.
  std::vector<LiveBuffer>& buffers = a.schedule.buffers.buffers;
  a.vmem.positions = a.schedule.buffers.positions;
  a.vmem.describer = a.schedule.buffers.describer;
  std::size_t kept = 0;
  for (std::size_t i = 0; i < buffers.size(); ++i) {
    if (buffers[i].memory_space == 1) {
      a.vmem.buffers.push_back(std::move(buffers[i]));
      continue;
    }
    if (kept != i) buffers[kept] = std::move(buffers[i]);
    ++kept;
  }
  buffers.erase(buffers.begin() + static_cast<std::ptrdiff_t>(kept), buffers.end());
  a.vmem_capacity = options.vmem_capacity;
  if (!a.vmem.buffers.empty()) a.vmem_xla = place("xla", a.vmem, unbounded);
  a.xla = place("xla", a.schedule.buffers, unbounded);
  for (const std::string& p : policies) a.placements.push_back(p == "xla" ? a.xla : place(p, a.schedule.buffers, placement));
  a.usage = usage_of(a.schedule.buffers, a.xla);
  return a;
}

std::string format_analysis(const Analysis& a) {
  std::string s = fmt::format("HLO module {} ({}): {} instructions, {} in ENTRY{}\n", a.module, a.source,
                              a.instructions, a.entry_instructions,
                              a.sharded ? fmt::format("; {} partitions, shapes are per device", a.num_partitions) : "");
  s += fmt::format("layout: {}\n", a.sizes.tiled ? fmt::format("TPU tiles, {} lanes", a.sizes.lanes) : std::string("dense (--untiled)"));
  s += "schedules (peak live bytes, padded / unpadded):\n";
  for (const ScheduleChoice::Peak& p : a.schedule.peaks) {
    s += fmt::format("  {:<5} {:>12} / {:>12}{}\n", p.name, format_bytes(p.peak_live_bytes),
                     format_bytes(p.peak_live_bytes_unpadded), p.name == a.schedule.name ? "   <- used" : "");
  }
  s += a.schedule_requested == "best" ? fmt::format("schedule used: {} (best: the lowest padded peak)\n", a.schedule.name)
                                      : fmt::format("schedule used: {}\n", a.schedule.name);
  s += fmt::format("{:<10} {:>12} {:>12} {:>12} {:>14} {:>12}  {}\n", "policy", "heap", "peak live", "unpadded",
                   "fragmentation", "padding", "");
  for (const Placement& p : a.placements) {
    std::string note = p.failure ? "FAILED: " + *p.failure : p.timed_out ? "timed out: best placement found" : p.detail;
    s += fmt::format("{:<10} {:>12} {:>12} {:>12} {:>13.1f}% {:>12}  {}\n", p.policy, format_bytes(p.heap_bytes),
                     format_bytes(p.peak_live_bytes), format_bytes(p.peak_live_unpadded), 100.0 * p.fragmentation,
                     format_bytes(p.padding_bytes), note);
  }
  const HbmUsage& u = a.usage;
  s += fmt::format("hbm: {} total = arguments {} + outputs {} ({} more shared with arguments) + constants {} + "
                   "program temporaries {} (their peak {})\n",
                   format_bytes(u.total), format_bytes(u.arguments), format_bytes(u.outputs),
                   format_bytes(u.outputs_shared), format_bytes(u.constants), format_bytes(u.temporaries),
                   format_bytes(u.temporaries_padded));
  if (!a.vmem.buffers.empty()) {
    s += fmt::format("vmem (S(1)): {} buffers, peak live {}, heap {} (xla){}\n", a.vmem.buffers.size(),
                     format_bytes(peak_live_bytes(a.vmem)), format_bytes(a.vmem_xla.heap_bytes),
                     a.vmem_capacity ? fmt::format(" of {}", format_bytes(*a.vmem_capacity)) : std::string());
  }
  if (a.out_of_memory()) {
    s += out_of_memory_report(a);
  } else if (a.hbm_capacity) {
    s += fmt::format("fits in {} of hbm ({} free)\n", format_bytes(*a.hbm_capacity), format_bytes(*a.hbm_capacity - u.total));
  }
  return s;
}

namespace {

// "Largest program allocations in SPACE:", the `largest` biggest buffers of a set.
std::string largest_allocations(const BufferSet& set, std::string_view space, std::size_t largest) {
  std::vector<const LiveBuffer*> order;
  for (const LiveBuffer& b : set.buffers) order.push_back(&b);
  std::stable_sort(order.begin(), order.end(), [](const LiveBuffer* x, const LiveBuffer* y) { return x->bytes > y->bytes; });
  if (order.size() > largest) order.resize(largest);
  std::string s = fmt::format("\nLargest program allocations in {}:\n", space);
  for (std::size_t i = 0; i < order.size(); ++i) {
    const LiveBuffer& b = *order[i];
    const BufferDescription d = set.describe(b);
    s += fmt::format("\n  {}. Size: {}\n", i + 1, format_bytes(b.bytes));
    if (!d.op_name.empty()) s += fmt::format("     Operator: op_name=\"{}\"{}\n", d.op_name, d.source.empty() ? "" : " source=" + d.source);
    s += fmt::format("     Shape: {}\n", d.shape);
    s += fmt::format("     Unpadded size: {}\n", format_bytes(b.unpadded));
    if (b.bytes > b.unpadded && b.unpadded > 0)
      s += fmt::format("     Extra memory due to padding: {} ({:.1f}x expansion)\n", format_bytes(b.bytes - b.unpadded), expansion(b));
    s += fmt::format("     XLA label: {}\n", d.instruction);
    s += fmt::format("     Allocation type: {}\n", buffer_kind_name(b.kind));
  }
  return s;
}

std::string vmem_out_of_memory_report(const Analysis& a, std::size_t largest) {
  const std::uint64_t used = a.vmem_xla.heap_bytes, capacity = *a.vmem_capacity;
  const auto [used_text, of_text] = format_bytes_apart(used, capacity);
  return fmt::format("Ran out of memory in memory space vmem. Used {} of {} vmem. Exceeded vmem capacity by {}.\n",
                     used_text, of_text, format_bytes(used - capacity)) +
         largest_allocations(a.vmem, "vmem", largest);
}

}  // namespace

std::string out_of_memory_report(const Analysis& a, std::size_t largest) {
  if (!a.out_of_memory()) return {};
  if (!a.hbm_out_of_memory()) return vmem_out_of_memory_report(a, largest);
  const HbmUsage& u = a.usage;
  const std::uint64_t capacity = *a.hbm_capacity;
  const auto [used, of] = format_bytes_apart(u.total, capacity);
  std::string s = fmt::format("Ran out of memory in memory space hbm. Used {} of {} hbm. Exceeded hbm capacity by {}.\n\n",
                              used, of, format_bytes(u.total - capacity));
  // The lines sum to the total: the program (its constants and temporaries), the arguments and
  // the outputs with allocations of their own; outputs in donated arguments' are the arguments'.
  const std::uint64_t program = u.constants + u.temporaries;
  s += "Total hbm usage >= " + format_bytes(u.total) + ":\n";
  s += fmt::format("    reserved        0 B\n    program         {}\n    arguments       {}\n    outputs         {}\n",
                   format_bytes(program), format_bytes(u.arguments), format_bytes(u.outputs));
  s += fmt::format("\nOutput size {}; shares {} with arguments.\n", format_bytes(u.outputs + u.outputs_shared),
                   format_bytes(u.outputs_shared));
  // Utilization: the temporaries' unpadded peak over their padded peak (the rest is tile padding);
  // fragmentation: the block's bytes no temporary holds at that peak, of the block.
  const std::uint64_t holes = u.temporaries - std::min(u.temporaries, u.temporaries_padded);
  const auto percent = [](std::uint64_t part, std::uint64_t whole) {
    return whole == 0 ? 0.0 : 100.0 * static_cast<double>(part) / static_cast<double>(whole);
  };
  s += fmt::format("\nProgram hbm requirement {}:\n    constants         {}\n", format_bytes(program),
                   format_bytes(u.constants));
  s += fmt::format("    HLO temp          {} ({:.1f}% utilization: Unpadded ({}) Padded ({}), {:.1f}% fragmentation ({}))\n",
                   format_bytes(u.temporaries),
                   u.temporaries_padded == 0 ? 100.0 : percent(u.temporaries_unpadded, u.temporaries_padded),
                   format_bytes(u.temporaries_unpadded), format_bytes(u.temporaries_padded),
                   percent(holes, u.temporaries), format_bytes(holes));
  s += largest_allocations(a.schedule.buffers, "hbm", largest);
  if (a.vmem_out_of_memory()) s += "\n" + vmem_out_of_memory_report(a, largest);
  return s;
}

namespace {

// The four figures of JAX's compiled.memory_analysis() (XLA's CompiledMemoryStats) in XLA's
// meaning: every ENTRY parameter; every output, those in donated arguments' buffers included; the
// outputs sharing an argument's buffer; the temporaries' allocation. Constants are in none of
// them, so temp + argument + output - alias = total - constants (docs/hlo.md).
nlohmann::json memory_analysis_json(const HbmUsage& u) {
  return {{"argument_size_in_bytes", u.arguments},
          {"output_size_in_bytes", detail::sat_add(u.outputs, u.outputs_shared)},
          {"alias_size_in_bytes", u.outputs_shared},
          {"temp_size_in_bytes", u.temporaries}};
}

}  // namespace

nlohmann::json analysis_to_json(const Analysis& a) {
  nlohmann::json j;
  j["program"] = {{"module", a.module},
                  {"source", a.source},
                  {"instructions", a.instructions},
                  {"entry_instructions", a.entry_instructions},
                  {"num_partitions", a.num_partitions},
                  {"shapes_per_device", a.sharded}};
  j["layout"] = {{"tiled", a.sizes.tiled}, {"lanes", a.sizes.lanes}};
  j["schedule"] = a.schedule.name;
  j["schedule_requested"] = a.schedule_requested;
  for (const ScheduleChoice::Peak& p : a.schedule.peaks) {
    j["schedules"][p.name] = {{"peak_live_bytes", p.peak_live_bytes}, {"peak_live_bytes_unpadded", p.peak_live_bytes_unpadded}};
  }
  const BufferSet& set = a.schedule.buffers;
  const HbmUsage& u = a.usage;
  j["memory"] = {{"peak_live_bytes", peak_live_bytes(set)},
                 {"peak_live_bytes_unpadded", peak_live_unpadded_bytes(set)},
                 {"parameters_bytes", u.arguments},
                 {"outputs_bytes", u.outputs},
                 {"outputs_shared_with_arguments_bytes", u.outputs_shared},
                 {"constants_bytes", u.constants},
                 {"temporaries_bytes", u.temporaries},
                 {"temporaries_peak_bytes", u.temporaries_padded},
                 {"temporaries_peak_bytes_unpadded", u.temporaries_unpadded},
                 {"total_bytes", u.total},
                 {"buffers", set.buffers.size()}};
  j["memory_analysis"] = memory_analysis_json(u);
  for (const Placement& p : a.placements) {
    j["policies"][p.policy] = {{"heap_bytes", p.heap_bytes},
                               {"peak_live_bytes", p.peak_live_bytes},
                               {"peak_live_bytes_unpadded", p.peak_live_unpadded},
                               {"fragmentation", p.fragmentation},
                               {"padding_bytes", p.padding_bytes},
                               {"timed_out", p.timed_out},
                               {"failure", p.failure ? nlohmann::json(*p.failure) : nlohmann::json(nullptr)}};
  }
  if (!a.vmem.buffers.empty()) {
    j["memory"]["vmem"] = {{"buffers", a.vmem.buffers.size()},
                           {"peak_live_bytes", peak_live_bytes(a.vmem)},
                           {"peak_live_bytes_unpadded", peak_live_unpadded_bytes(a.vmem)},
                           {"heap_bytes", a.vmem_xla.heap_bytes}};
  }
  if (a.hbm_capacity) j["hbm_capacity"] = *a.hbm_capacity;
  if (a.vmem_capacity) j["vmem_capacity"] = *a.vmem_capacity;
  if (a.hbm_capacity || a.vmem_capacity) {
    // The space the report's first line names: HBM when it overflows, else VMEM.
    if (a.hbm_out_of_memory()) {
      j["out_of_memory"] = {{"memory_space", "hbm"}, {"used_bytes", u.total}, {"exceeded_by_bytes", u.total - *a.hbm_capacity}};
    } else if (a.vmem_out_of_memory()) {
      j["out_of_memory"] = {{"memory_space", "vmem"},
                            {"used_bytes", a.vmem_xla.heap_bytes},
                            {"exceeded_by_bytes", a.vmem_xla.heap_bytes - *a.vmem_capacity}};
    } else {
      j["out_of_memory"] = nullptr;
    }
  }
  return j;
}

}  // namespace tpuemu::hlo
