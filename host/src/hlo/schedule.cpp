// SPDX-License-Identifier: Apache-2.0
// The schedulers (docs/hlo.md, "Liveness, schedules and sizes"): the module's own order, a
// post-order DFS and a memory-minimizing list scheduler after XLA's hlo_memory_scheduler, and the
// choice among them by peak, as XLA's DefaultMemoryScheduler keeps the schedule with the lowest one.
#include <algorithm>
#include <limits>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "liveness_detail.h"
#include "tpuemu/base/error.h"
#include "tpuemu/hlo/liveness.h"

namespace tpuemu::hlo {
namespace {

using detail::sat_add;

// The heuristics weigh bytes; a saturated size must not overflow their signed sums.
constexpr std::uint64_t kHeuristicCap = std::uint64_t{1} << 56;

// Unique operands in first-appearance order, and the users of each instruction.
struct Graph {
  std::vector<std::vector<std::size_t>> operands, users;
};
Graph graph_of(const Computation& comp) {
  Graph g;
  const std::size_t n = comp.instructions.size();
  g.operands.resize(n);
  g.users.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    for (const std::size_t o : comp.instructions[i].operands) {
      if (o >= n) throw Error("computation '" + comp.name + "': an operand index out of range");
      if (std::find(g.operands[i].begin(), g.operands[i].end(), o) != g.operands[i].end()) continue;
      g.operands[i].push_back(o);
      g.users[o].push_back(i);
    }
  }
  return g;
}

// Parameters and constants are not the scheduler's to place (XLA's IgnoreInstruction).
bool ignored(const Instruction& ins) {
  return ins.opcode == Opcode::Parameter || ins.opcode == Opcode::Constant;
}

// Bytes an instruction defines, as the heuristics count them (aliasing instructions: none).
std::uint64_t defined_bytes(const Instruction& ins, const SizeOptions& sizes) {
  if (ignored(ins) || ins.opcode == Opcode::Tuple || detail::forwards_operand(ins.opcode)) return 0;
  std::uint64_t total = 0;
  for (const detail::ShapeLeaf& leaf : detail::leaves_of(ins.shape))
    total = sat_add(total, shape_bytes(*leaf.shape, sizes).padded);
  return std::min(total, kHeuristicCap);
}

std::vector<std::size_t> dfs_order(const Computation& comp, const SizeOptions& sizes) {
  const std::size_t n = comp.instructions.size();
  const Graph g = graph_of(comp);
  // XLA's DFSMemoryScheduler statistics, over the textual order (a topological order: the reader
  // refuses a use before its definition): extra users (users - 1) and bytes, both summed over
  // everything an instruction depends on, capped (the sums count shared ancestors repeatedly).
  std::vector<std::uint64_t> extra(n, 0), total(n, 0);
  std::uint64_t cumulative = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (ignored(comp.instructions[i])) continue;
    extra[i] = g.users[i].empty() ? 0 : g.users[i].size() - 1;
    total[i] = defined_bytes(comp.instructions[i], sizes);
    cumulative = sat_add(cumulative, total[i]);
    for (const std::size_t o : g.operands[i]) {
      extra[i] = sat_add(extra[i], extra[o]);
      total[i] = sat_add(total[i], total[o]);
    }
    total[i] = std::min(total[i], cumulative);
    extra[i] = std::min<std::uint64_t>(extra[i], n);
  }
  auto before = [&](std::size_t a, std::size_t b) {
    if (extra[a] != extra[b]) return extra[a] > extra[b];
    if (total[a] != total[b]) return total[a] > total[b];
    return comp.instructions[a].name < comp.instructions[b].name;
  };
  // Post-order from the root, then from every instruction nobody uses (dead code), operands in the
  // heuristic's order. Iterative: a 40 000-instruction chain must not exhaust the stack.
  std::vector<std::size_t> order;
  order.reserve(n);
  std::vector<bool> visited(n, false);
  auto visit = [&](std::size_t start) {
    if (visited[start]) return;
    std::vector<std::pair<std::size_t, std::vector<std::size_t>>> stack;
    auto push = [&](std::size_t i) {
      visited[i] = true;
      std::vector<std::size_t> ops = g.operands[i];
      std::sort(ops.begin(), ops.end(), before);
      std::reverse(ops.begin(), ops.end());  // popped from the back: first in `before` order first
      stack.emplace_back(i, std::move(ops));
    };
    push(start);
    while (!stack.empty()) {
      auto& [i, pending] = stack.back();
      if (pending.empty()) {
        order.push_back(i);
        stack.pop_back();
        continue;
      }
      const std::size_t next = pending.back();
      pending.pop_back();
      if (!visited[next]) push(next);
    }
  };
  if (n > 0) visit(comp.root);
  for (std::size_t i = 0; i < n; ++i)
    if (g.users[i].empty()) visit(i);
  for (std::size_t i = 0; i < n; ++i) visit(i);
  return order;
}

// XLA's ListMemoryScheduler: among the ready instructions, the one that frees the most bytes net
// of what it defines (then the one with more users); scalars first. A buffer is freed when its
// last unscheduled reader runs. Buffers are tracked by the instruction that defines them, through
// the instructions that forward them.
std::vector<std::size_t> list_order(const Computation& comp, const SizeOptions& sizes) {
  const std::size_t n = comp.instructions.size();
  const Graph g = graph_of(comp);
  std::vector<std::uint64_t> bytes(n);
  for (std::size_t i = 0; i < n; ++i) bytes[i] = defined_bytes(comp.instructions[i], sizes);
  // sources[i]: the defining instructions of the buffers i's value consists of.
  std::vector<std::vector<std::size_t>> sources(n);
  for (std::size_t i = 0; i < n; ++i) {
    const Instruction& ins = comp.instructions[i];
    if (ins.opcode == Opcode::Tuple || detail::forwards_operand(ins.opcode)) {
      for (const std::size_t o : g.operands[i])
        sources[i].insert(sources[i].end(), sources[o].begin(), sources[o].end());
      std::sort(sources[i].begin(), sources[i].end());
      sources[i].erase(std::unique(sources[i].begin(), sources[i].end()), sources[i].end());
    } else if (!ignored(ins)) {
      sources[i] = {i};
    }
  }
  std::vector<std::vector<std::size_t>> uses(n), readers(n);
  std::vector<std::int64_t> remaining(n, 0);
  for (std::size_t i = 0; i < n; ++i) {
    for (const std::size_t o : g.operands[i]) uses[i].insert(uses[i].end(), sources[o].begin(), sources[o].end());
    std::sort(uses[i].begin(), uses[i].end());
    uses[i].erase(std::unique(uses[i].begin(), uses[i].end()), uses[i].end());
    for (const std::size_t s : uses[i]) {
      ++remaining[s];
      readers[s].push_back(i);
    }
  }
  if (n > 0)
    for (const std::size_t s : sources[comp.root]) ++remaining[s];  // live out: never freed

  using Priority = std::tuple<std::int64_t, std::int64_t, std::int64_t>;  // freed, users, -index
  auto priority = [&](std::size_t i) -> Priority {
    const Instruction& ins = comp.instructions[i];
    const auto tie = -static_cast<std::int64_t>(i);
    if (ins.shape.is_array() && ins.shape.element_count() == 1)
      return {std::numeric_limits<std::int64_t>::max(), std::numeric_limits<std::int64_t>::max(), tie};
    std::int64_t freed = 0;
    for (const std::size_t s : uses[i])
      if (remaining[s] == 1) freed += static_cast<std::int64_t>(bytes[s]);
    return {freed - static_cast<std::int64_t>(bytes[i]), static_cast<std::int64_t>(g.users[i].size()), tie};
  };
  std::set<std::pair<Priority, std::size_t>> ready;
  std::vector<std::optional<Priority>> key(n);
  auto make_ready = [&](std::size_t i) {
    key[i] = priority(i);
    ready.emplace(*key[i], i);
  };
  std::vector<std::size_t> pending(n);
  for (std::size_t i = 0; i < n; ++i) {
    pending[i] = g.operands[i].size();
    if (pending[i] == 0) make_ready(i);
  }
  std::vector<std::size_t> order;
  order.reserve(n);
  while (!ready.empty()) {
    const std::size_t best = std::prev(ready.end())->second;
    ready.erase(std::prev(ready.end()));
    key[best].reset();
    order.push_back(best);
    for (const std::size_t s : uses[best])
      if (--remaining[s] == 1)
        for (const std::size_t r : readers[s])  // their last read of s now frees it
          if (key[r]) {
            ready.erase({*key[r], r});
            make_ready(r);
          }
    for (const std::size_t u : g.users[best])
      if (--pending[u] == 0) make_ready(u);
  }
  return order;
}

template <typename OrderFn>
Schedule per_computation(const Module& module, std::string name, OrderFn fn, const StopToken& stop = StopToken{}) {
  Schedule s;
  s.name = std::move(name);
  for (const Computation& comp : module.computations) {
    stop.throw_if_requested(fmt::format("the {} schedule", s.name));
    s.order.push_back(fn(comp));
  }
  return s;
}

}  // namespace

Schedule text_schedule(const Module& module) {
  return per_computation(module, "text", [](const Computation& comp) {
    std::vector<std::size_t> order(comp.instructions.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    return order;
  });
}

Schedule dfs_schedule(const Module& module, const SizeOptions& sizes, const StopToken& stop) {
  return per_computation(module, "dfs", [&](const Computation& c) { return dfs_order(c, sizes); }, stop);
}

Schedule list_schedule(const Module& module, const SizeOptions& sizes, const StopToken& stop) {
  return per_computation(module, "list", [&](const Computation& c) { return list_order(c, sizes); }, stop);
}

namespace {
const ScheduleChoice::Peak& choice_peak(const ScheduleChoice& choice) {
  for (const ScheduleChoice::Peak& p : choice.peaks)
    if (p.name == choice.name) return p;
  return choice.peaks.front();
}
}  // namespace

ScheduleChoice choose_schedule(const Module& module, const std::string& name, const SizeOptions& sizes,
                               const StopToken& stop) {
  const std::string want = name.empty() ? (module.is_scheduled ? "text" : "best") : name;
  if (want != "text" && want != "dfs" && want != "list" && want != "best")
    throw Error("--schedule", "unknown schedule '" + want + "' (text, dfs, list, best)");
  ScheduleChoice choice;
  // One schedule at a time, keeping only the chosen one's buffers: a module of millions of
  // instructions has millions of buffers per schedule.
  const auto consider = [&](Schedule s) {
    stop.throw_if_requested(fmt::format("the liveness of the {} schedule", s.name));
    BufferSet set = live_buffers(module, s, sizes);
    const ScheduleChoice::Peak peak{s.name, peak_live_bytes(set), peak_live_unpadded_bytes(set)};
    // best: the lowest padded peak, ties to the earlier of text, dfs, list.
    const bool take = want == s.name || (want == "best" && (choice.peaks.empty() ||
                                                           peak.peak_live_bytes < choice_peak(choice).peak_live_bytes));
    choice.peaks.push_back(peak);
    if (!take) return;
    choice.name = s.name;
    choice.schedule = std::move(s);
    choice.buffers = std::move(set);
  };
  consider(text_schedule(module));
  consider(dfs_schedule(module, sizes, stop));
  consider(list_schedule(module, sizes, stop));
  return choice;
}

}  // namespace tpuemu::hlo
