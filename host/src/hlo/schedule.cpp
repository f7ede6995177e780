// SPDX-License-Identifier: Apache-2.0
// The schedulers (docs/hlo.md, "Liveness, schedules and sizes"): the module's own order, a
// post-order DFS and a memory-minimizing list scheduler after XLA's hlo_memory_scheduler, and the
// choice among them by peak, as XLA's DefaultMemoryScheduler keeps the schedule with the lowest one.
#include <algorithm>
#include <limits>
#include <optional>
#include <queue>
#include <span>
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

// Unique operands in first-appearance order, and the users of each instruction (in instruction
// order), as flat lists: a computation may have millions of instructions, and a list of its own
// for each would outweigh them.
class Graph {
 public:
  explicit Graph(const Computation& comp) {
    if (comp.instructions.size() >= std::numeric_limits<std::uint32_t>::max())
      throw Error("computation '" + comp.name + "': more than 2^32-2 instructions");
    const auto n = static_cast<std::uint32_t>(comp.instructions.size());
    std::size_t edges = 0;
    for (const Instruction& ins : comp.instructions) edges += ins.operands.size();
    operands_.reserve(edges);
    operand_begin_.reserve(n + 1);
    operand_begin_.push_back(0);
    user_begin_.assign(n + 1, 0);
    std::vector<std::uint32_t> listed_by(n, kNone);  // the instruction whose operands list it last
    for (std::uint32_t i = 0; i < n; ++i) {
      for (const std::size_t o : comp.instructions[i].operands) {
        if (o >= n) throw Error("computation '" + comp.name + "': an operand index out of range");
        if (listed_by[o] == i) continue;
        listed_by[o] = i;
        operands_.push_back(static_cast<std::uint32_t>(o));
        ++user_begin_[o + 1];
      }
      operand_begin_.push_back(static_cast<std::uint32_t>(operands_.size()));
    }
    for (std::uint32_t i = 0; i < n; ++i) user_begin_[i + 1] += user_begin_[i];
    users_.resize(operands_.size());
    std::vector<std::uint32_t> next = user_begin_;  // where each one's next user goes
    for (std::uint32_t i = 0; i < n; ++i)
      for (const std::uint32_t o : operands(i)) users_[next[o]++] = i;
  }

  std::span<const std::uint32_t> operands(std::size_t i) const {
    return {operands_.data() + operand_begin_[i], operand_begin_[i + 1] - operand_begin_[i]};
  }
  // For a scheduler that orders an instruction's operands its own way.
  std::span<std::uint32_t> operands_to_order(std::size_t i) {
    return {operands_.data() + operand_begin_[i], operand_begin_[i + 1] - operand_begin_[i]};
  }
  std::size_t edges() const { return operands_.size(); }
  std::span<const std::uint32_t> users(std::size_t i) const {
    return {users_.data() + user_begin_[i], user_begin_[i + 1] - user_begin_[i]};
  }

 private:
  static constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();
  std::vector<std::uint32_t> operand_begin_, operands_, user_begin_, users_;
};

// Lists of instruction indices, one per instruction, in one flat array: list(i) is
// items[begin[i], begin[i+1]). Appended in instruction order.
struct FlatLists {
  std::vector<std::uint32_t> begin{0};
  std::vector<std::uint32_t> items;

  std::size_t count() const { return begin.size() - 1; }
  std::span<const std::uint32_t> list(std::size_t i) const {
    return {items.data() + begin[i], begin[i + 1] - begin[i]};
  }
  void close() { begin.push_back(static_cast<std::uint32_t>(items.size())); }
};

// Parameters and constants are not the scheduler's to place (XLA's IgnoreInstruction).
bool ignored(const Instruction& ins) {
  return ins.opcode == Opcode::Parameter || ins.opcode == Opcode::Constant;
}

// Bytes an instruction defines, as the heuristics count them (aliasing instructions: none).
std::uint64_t defined_bytes(const Instruction& ins, detail::ShapeSizes& sizes) {
  if (ignored(ins) || ins.opcode == Opcode::Tuple || detail::forwards_operand(ins.opcode)) return 0;
  if (!ins.shape.is_tuple()) return std::min(sizes.of(ins.shape).padded, kHeuristicCap);
  std::uint64_t total = 0;
  for (const detail::ShapeLeaf& leaf : detail::leaves_of(ins.shape)) total = sat_add(total, sizes.of(*leaf.shape).padded);
  return std::min(total, kHeuristicCap);
}

std::vector<std::size_t> dfs_order(const Computation& comp, detail::ShapeSizes& sizes) {
  const std::size_t n = comp.instructions.size();
  Graph g(comp);
  // XLA's DFSMemoryScheduler statistics, over the textual order (a topological order: the reader
  // refuses a use before its definition): extra users (users - 1) and bytes, both summed over
  // everything an instruction depends on, capped (the sums count shared ancestors repeatedly).
  std::vector<std::uint64_t> extra(n, 0), total(n, 0);
  std::uint64_t cumulative = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (ignored(comp.instructions[i])) continue;
    extra[i] = g.users(i).empty() ? 0 : g.users(i).size() - 1;
    total[i] = defined_bytes(comp.instructions[i], sizes);
    cumulative = sat_add(cumulative, total[i]);
    for (const std::uint32_t o : g.operands(i)) {
      extra[i] = sat_add(extra[i], extra[o]);
      total[i] = sat_add(total[i], total[o]);
    }
    total[i] = std::min(total[i], cumulative);
    extra[i] = std::min<std::uint64_t>(extra[i], n);
  }
  auto before = [&](std::uint32_t a, std::uint32_t b) {
    if (extra[a] != extra[b]) return extra[a] > extra[b];
    if (total[a] != total[b]) return total[a] > total[b];
    return comp.instructions[a].name < comp.instructions[b].name;
  };
  // Post-order from the root, then from every instruction nobody uses (dead code), operands in the
  // heuristic's order. Iterative: a chain of millions of instructions must not exhaust the stack.
  std::vector<std::size_t> order;
  order.reserve(n);
  std::vector<bool> visited(n, false);
  struct Frame {
    std::uint32_t instruction;
    std::uint32_t next;  // the next of its operands (in `before` order) to visit
  };
  std::vector<Frame> stack;
  auto push = [&](std::size_t i) {
    visited[i] = true;
    const std::span<std::uint32_t> ops = g.operands_to_order(i);
    std::sort(ops.begin(), ops.end(), before);
    stack.push_back({static_cast<std::uint32_t>(i), 0});
  };
  auto visit = [&](std::size_t start) {
    if (visited[start]) return;
    push(start);
    while (!stack.empty()) {
      const Frame top = stack.back();
      const std::span<const std::uint32_t> ops = g.operands(top.instruction);
      if (top.next == ops.size()) {
        order.push_back(top.instruction);
        stack.pop_back();
        continue;
      }
      ++stack.back().next;
      if (!visited[ops[top.next]]) push(ops[top.next]);
    }
  };
  if (n > 0) visit(comp.root);
  for (std::size_t i = 0; i < n; ++i)
    if (g.users(i).empty()) visit(i);
  for (std::size_t i = 0; i < n; ++i) visit(i);
  return order;
}

// XLA's ListMemoryScheduler: among the ready instructions, the one that frees the most bytes net
// of what it defines (then the one with more users); scalars first. A buffer is freed when its
// last unscheduled reader runs. Buffers are tracked by the instruction that defines them, through
// the instructions that forward them.
std::vector<std::size_t> list_order(const Computation& comp, detail::ShapeSizes& sizes) {
  const std::size_t n = comp.instructions.size();
  const Graph g(comp);
  std::vector<std::uint64_t> bytes(n);
  for (std::size_t i = 0; i < n; ++i) bytes[i] = defined_bytes(comp.instructions[i], sizes);
  // sources(i): the defining instructions of the buffers i's value consists of.
  FlatLists sources;  // reserved as most instructions define one buffer: no regrowth to fragment the heap
  sources.begin.reserve(n + 1);
  sources.items.reserve(n);
  std::vector<std::uint32_t> gathered;
  const auto gather = [&](std::span<const std::uint32_t> from, const FlatLists& lists) {
    gathered.clear();
    for (const std::uint32_t o : from)
      if (o < lists.count()) gathered.insert(gathered.end(), lists.list(o).begin(), lists.list(o).end());
    std::sort(gathered.begin(), gathered.end());
    gathered.erase(std::unique(gathered.begin(), gathered.end()), gathered.end());
  };
  for (std::size_t i = 0; i < n; ++i) {
    const Instruction& ins = comp.instructions[i];
    if (ins.opcode == Opcode::Tuple || detail::forwards_operand(ins.opcode)) {
      gather(g.operands(i), sources);  // an operand after i (none in a read module) holds nothing yet
      sources.items.insert(sources.items.end(), gathered.begin(), gathered.end());
    } else if (!ignored(ins)) {
      sources.items.push_back(static_cast<std::uint32_t>(i));
    }
    sources.close();
  }
  // uses(i): the buffers i reads; readers(s): the instructions that read buffer s, in order.
  FlatLists uses;
  uses.begin.reserve(n + 1);
  uses.items.reserve(g.edges());
  std::vector<std::uint32_t> remaining(n, 0);
  for (std::size_t i = 0; i < n; ++i) {
    gather(g.operands(i), sources);
    uses.items.insert(uses.items.end(), gathered.begin(), gathered.end());
    uses.close();
    for (const std::uint32_t s : gathered) ++remaining[s];
  }
  FlatLists readers;
  readers.begin.assign(n + 1, 0);
  for (std::size_t s = 0; s < n; ++s) readers.begin[s + 1] = readers.begin[s] + remaining[s];
  readers.items.resize(uses.items.size());
  {
    std::vector<std::uint32_t> next = readers.begin;  // where each one's next reader goes
    for (std::size_t i = 0; i < n; ++i)
      for (const std::uint32_t s : uses.list(i)) readers.items[next[s]++] = static_cast<std::uint32_t>(i);
  }
  if (n > 0)
    for (const std::uint32_t s : sources.list(comp.root)) ++remaining[s];  // live out: never freed

  // A ready instruction's priority: bytes freed net of its own, users, then the lower index (the
  // tie is -index, unique). Scalars come first, whatever they free.
  using Priority = std::tuple<std::int64_t, std::int64_t, std::int64_t>;
  const auto scalar = [&](std::size_t i) {
    const Shape& shape = comp.instructions[i].shape;
    return shape.is_array() && shape.element_count() == 1;
  };
  const auto net_freed = [&](std::size_t i) {
    std::int64_t freed = 0;
    for (const std::uint32_t s : uses.list(i))
      if (remaining[s] == 1) freed += static_cast<std::int64_t>(bytes[s]);
    return freed - static_cast<std::int64_t>(bytes[i]);
  };
  const auto priority = [&](std::size_t i, std::int64_t net) -> Priority {
    const auto tie = -static_cast<std::int64_t>(i);
    if (scalar(i)) return {std::numeric_limits<std::int64_t>::max(), std::numeric_limits<std::int64_t>::max(), tie};
    return {net, static_cast<std::int64_t>(g.users(i).size()), tie};
  };
  // The ready instructions by priority, highest on top. An instruction whose priority changes is
  // pushed again; the entries it leaves behind no longer match its key and are skipped.
  std::priority_queue<Priority> ready;
  enum class State : std::uint8_t { Waiting, Ready, Scheduled };
  std::vector<State> state(n, State::Waiting);
  std::vector<std::int64_t> key(n, 0);  // a ready instruction's net freed bytes
  auto make_ready = [&](std::size_t i) {
    state[i] = State::Ready;
    key[i] = net_freed(i);
    ready.push(priority(i, key[i]));
  };
  auto rekey = [&](std::size_t i) {
    const std::int64_t net = net_freed(i);
    if (net == key[i]) return;
    key[i] = net;
    ready.push(priority(i, net));
  };
  std::vector<std::uint32_t> pending(n);
  for (std::size_t i = 0; i < n; ++i) {
    pending[i] = static_cast<std::uint32_t>(g.operands(i).size());
    if (pending[i] == 0) make_ready(i);
  }
  std::vector<std::size_t> order;
  order.reserve(n);
  while (!ready.empty()) {
    const Priority top = ready.top();
    ready.pop();
    const auto best = static_cast<std::size_t>(-std::get<2>(top));
    if (state[best] != State::Ready || top != priority(best, key[best])) continue;  // left behind
    state[best] = State::Scheduled;
    order.push_back(best);
    for (const std::uint32_t s : uses.list(best))
      if (--remaining[s] == 1)
        for (const std::uint32_t r : readers.list(s))  // their last read of s now frees it
          if (state[r] == State::Ready) rekey(r);
    for (const std::uint32_t u : g.users(best))
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
  detail::ShapeSizes shape_sizes(sizes);
  return per_computation(module, "dfs", [&](const Computation& c) { return dfs_order(c, shape_sizes); }, stop);
}

Schedule list_schedule(const Module& module, const SizeOptions& sizes, const StopToken& stop) {
  detail::ShapeSizes shape_sizes(sizes);
  return per_computation(module, "list", [&](const Computation& c) { return list_order(c, shape_sizes); }, stop);
}

ScheduleChoice choose_schedule(const Module& module, const std::string& name, const SizeOptions& sizes,
                               const StopToken& stop) {
  const std::string want = name.empty() ? (module.is_scheduled ? "text" : "best") : name;
  if (want != "text" && want != "dfs" && want != "list" && want != "best")
    throw Error("--schedule", "unknown schedule '" + want + "' (text, dfs, list, best)");
  ScheduleChoice choice;
  // A module of millions of instructions has millions of buffers per schedule: the schedules not
  // used give their peaks only (detail::live_peaks), and only the one used gets its buffers, made
  // last, when nothing else is held. The one asked for by name is not swept twice; "best" is
  // known only once the three are, and its liveness runs again for its buffers.
  std::optional<Schedule> chosen;
  std::size_t chosen_peak = 0;
  const auto consider = [&](Schedule s) {
    stop.throw_if_requested(fmt::format("the liveness of the {} schedule", s.name));
    choice.peaks.push_back({.name = s.name});
    ScheduleChoice::Peak& peak = choice.peaks.back();
    if (want == s.name) {
      chosen_peak = choice.peaks.size() - 1;
      chosen = std::move(s);
      return;
    }
    const detail::SchedulePeaks peaks = detail::live_peaks(module, s, sizes);
    peak.peak_live_bytes = peaks.padded;
    peak.peak_live_bytes_unpadded = peaks.unpadded;
    // best: the lowest padded peak, ties to the earlier of text, dfs, list.
    if (want == "best" && (!chosen || peak.peak_live_bytes < choice.peaks[chosen_peak].peak_live_bytes)) {
      chosen_peak = choice.peaks.size() - 1;
      chosen = std::move(s);
    }
  };
  consider(text_schedule(module));
  consider(dfs_schedule(module, sizes, stop));
  consider(list_schedule(module, sizes, stop));
  stop.throw_if_requested(fmt::format("the liveness of the {} schedule", chosen->name));
  choice.buffers = live_buffers(module, *chosen, sizes);
  if (want != "best") {
    choice.peaks[chosen_peak].peak_live_bytes = peak_live_bytes(choice.buffers);
    choice.peaks[chosen_peak].peak_live_bytes_unpadded = peak_live_unpadded_bytes(choice.buffers);
  }
  choice.name = chosen->name;
  choice.schedule = std::move(*chosen);
  return choice;
}

}  // namespace tpuemu::hlo
