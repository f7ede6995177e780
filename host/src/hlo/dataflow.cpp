// SPDX-License-Identifier: Apache-2.0
// The dataflow walk (tpuemu/hlo/dataflow.h; docs/hlo.md, "Liveness, schedules and sizes"): XLA's
// value-defining rules (xla/hlo/analysis/hlo_dataflow_analysis.cc) on the schedule flattened as
// XLA's HloLiveRange flattens it. Every scheduled instruction of every computation instance is one
// position; called computations are instantiated once per call site, their positions first.
#include "tpuemu/hlo/dataflow.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "liveness_detail.h"
#include "tiled_size.h"
#include "tpuemu/base/error.h"

namespace tpuemu::hlo {

std::span<const ValueId> Dataflow::result(std::int64_t p) const {
  const auto i = static_cast<std::size_t>(p);
  return {result_values_.data() + result_begin_[i], result_begin_[i + 1] - result_begin_[i]};
}

std::span<const std::int32_t> Dataflow::operands(std::int64_t p) const {
  const auto i = static_cast<std::size_t>(p);
  return {operand_positions_.data() + operand_begin_[i], operand_begin_[i + 1] - operand_begin_[i]};
}

std::vector<ValueId> Dataflow::defined(std::int64_t p) const {
  std::vector<ValueId> out;
  const auto own = [&](ValueId v) {
    return v != kNoValue && values_[v].position == p && values_[v].copy_of == kNoValue;
  };
  for (const ValueId v : result(p))
    if (own(v)) out.push_back(v);
  if (own(index_table(p))) out.push_back(index_table(p));
  return out;
}

std::vector<ValueId> Dataflow::reads(std::int64_t p) const {
  std::vector<ValueId> out;
  for (const std::int32_t q : operands(p)) {
    if (!reads_index_table_only(p))
      for (const ValueId v : result(q))
        if (v != kNoValue) out.push_back(v);
    if (index_table(q) != kNoValue) out.push_back(index_table(q));
  }
  return out;
}

std::int32_t Dataflow::entry_parameter(std::int64_t n) const {
  return n >= 0 && static_cast<std::size_t>(n) < entry_parameters_.size() ? entry_parameters_[static_cast<std::size_t>(n)]
                                                                          : -1;
}

ValueId Dataflow::add_value(const HloValue& v) {
  if (values_.size() >= kNoValue) throw Error("the flattened schedule defines more than 2^32-2 values");
  values_.push_back(v);
  return static_cast<ValueId>(values_.size() - 1);
}

void Dataflow::release_positions() {
  // Assigned fresh vectors: clearing would keep their storage.
  steps_ = std::vector<Step>();
  result_begin_ = std::vector<std::uint32_t>{0};
  result_values_ = std::vector<ValueId>();
  operand_begin_ = std::vector<std::uint32_t>{0};
  operand_positions_ = std::vector<std::int32_t>();
}

ValueId Dataflow::add_copy(ValueId source, std::int32_t position) {
  HloValue c = values_[source];
  c.copy_of = source;
  c.position = position;
  c.kind = BufferKind::Temp;
  c.readonly = false;
  c.entry_parameter = false;
  return add_value(c);
}

namespace {

// Computations called from many sites are instantiated once per site (XLA flattens the call graph
// before buffer assignment, so each computation has one caller); a bound keeps a module whose
// call graph doubles at every level from exhausting memory.
constexpr std::int32_t kMaxPositions = std::int32_t{1} << 25;
constexpr std::size_t kMaxEntries = std::numeric_limits<std::uint32_t>::max();

}  // namespace

class DataflowBuilder {
 public:
  DataflowBuilder(const Module& module, const Schedule& schedule, const SizeOptions& sizes, CarriedValues& carried)
      : module_(module), schedule_(schedule), sizes_(sizes), carried_(carried),
        on_stack_(module.computations.size(), false), last_use_(module.computations.size()) {}

  Dataflow run() {
    if (module_.computations.empty() || module_.entry >= module_.computations.size())
      throw Error(module_.source, "module has no ENTRY computation");
    if (schedule_.order.size() != module_.computations.size())
      throw Error(module_.source, "schedule '" + schedule_.name + "' does not cover every computation");
    reserve();
    instantiate(module_.entry, nullptr);
    return std::move(flow_);
  }

 private:
  std::int32_t step() {
    if (next_pos_ >= kMaxPositions) throw_too_many_positions();
    return next_pos_++;
  }
  // The flattened schedule's tables allocated once, at their size: each instruction is one
  // position, and a while's condition and body, a call's callee and a conditional's branches are
  // instantiated where they run. Values and result leaves are counted one a position (most
  // instructions define one array). A module the walk will refuse (a computation that calls
  // itself, beyond 2^25 positions) reserves nothing more.
  void reserve() {
    struct Count {
      std::uint64_t positions = 0, operands = 0;
    };
    const std::size_t n = module_.computations.size();
    std::vector<std::optional<Count>> counted(n);
    std::vector<bool> open(n, false);
    constexpr std::uint64_t kCap = std::uint64_t{1} << 40;
    const auto count = [&](const auto& self, std::size_t c) -> Count {
      if (c >= n || open[c]) return {};
      if (counted[c]) return *counted[c];
      open[c] = true;
      Count total;
      const auto add = [&](const Count& more) {
        total.positions = std::min(kCap, total.positions + more.positions);
        total.operands = std::min(kCap, total.operands + more.operands);
      };
      for (const Instruction& ins : module_.computations[c].instructions) {
        const std::uint64_t reads = ins.opcode == Opcode::GetTupleElement ? std::min<std::size_t>(1, ins.operands.size())
                                                                          : ins.operands.size();
        add({1, reads});
        if (ins.opcode == Opcode::While) {
          if (ins.condition) add(self(self, *ins.condition));
          if (ins.body) add(self(self, *ins.body));
        } else if (ins.opcode == Opcode::Call && !ins.called.empty()) {
          add(self(self, ins.called.front()));
        } else if (ins.opcode == Opcode::Conditional) {
          for (const std::size_t b : ins.branches) add(self(self, b));
        }
      }
      open[c] = false;
      counted[c] = total;
      return total;
    };
    const Count total = count(count, module_.entry);
    if (total.positions > static_cast<std::uint64_t>(kMaxPositions) || total.operands > kMaxEntries) return;
    const auto positions = static_cast<std::size_t>(total.positions);
    flow_.steps_.reserve(positions);
    flow_.result_begin_.reserve(positions + 1);
    flow_.operand_begin_.reserve(positions + 1);
    flow_.operand_positions_.reserve(static_cast<std::size_t>(total.operands));
    flow_.result_values_.reserve(positions);
    flow_.values_.reserve(positions);
  }

  [[noreturn]] void throw_too_many_positions() const {
    throw Error(module_.source, "the flattened schedule exceeds " + std::to_string(kMaxPositions) +
                                    " positions (computations called from very many sites)");
  }

  // Records the next position (positions are committed in order, callees' before their caller's):
  // instruction i of computation c, whose result is leaves_ and `table`.
  void commit(std::uint32_t c, std::size_t i, ValueId table, const std::vector<std::int32_t>& at) {
    const Instruction& ins = module_.computations[c].instructions[i];
    const bool table_only = ins.opcode == Opcode::GetTupleElement;
    flow_.steps_.push_back({c, static_cast<std::uint32_t>(i), table, table_only});
    flow_.positions_ = static_cast<std::int64_t>(flow_.steps_.size());
    flow_.result_values_.insert(flow_.result_values_.end(), leaves_.begin(), leaves_.end());
    for (std::size_t n = 0; n < ins.operands.size() && !(table_only && n > 0); ++n)
      flow_.operand_positions_.push_back(at[ins.operands[n]]);
    if (flow_.result_values_.size() > kMaxEntries || flow_.operand_positions_.size() > kMaxEntries)
      throw Error(module_.source, "the flattened schedule's results or operands exceed 2^32-1 entries");
    flow_.result_begin_.push_back(static_cast<std::uint32_t>(flow_.result_values_.size()));
    flow_.operand_begin_.push_back(static_cast<std::uint32_t>(flow_.operand_positions_.size()));
  }

  void forward(std::int32_t q) {
    const std::span<const ValueId> r = flow_.result(q);
    leaves_.insert(leaves_.end(), r.begin(), r.end());
  }

  // A value for one array leaf defined at p; kNoValue for a leaf without storage.
  ValueId define_leaf(std::uint32_t c, std::size_t i, std::size_t leaf, const Shape& shape, std::int32_t p,
                      BufferKind kind, bool readonly, bool entry_parameter = false) {
    const detail::ShapeSizes::Bytes sb = sizes_.of(shape);
    if (sb.padded == 0 && sb.unpadded == 0) return kNoValue;
    return flow_.add_value({.computation = c,
                            .instruction = static_cast<std::uint32_t>(i),
                            .leaf = static_cast<std::int32_t>(leaf),
                            .position = p,
                            .kind = kind,
                            .readonly = readonly,
                            .entry_parameter = entry_parameter,
                            .bytes = sb.padded,
                            .unpadded = sb.unpadded});
  }
  // The index tables of every tuple in the shape; `nested` false: the outermost one's only (a
  // tuple instruction's nested tables are its operands').
  ValueId define_table(std::uint32_t c, std::size_t i, std::int32_t p, BufferKind kind, bool nested,
                       bool entry_parameter = false) {
    const std::uint64_t bytes = detail::index_table_bytes(module_.computations[c].instructions[i].shape, nested);
    if (bytes == 0) return kNoValue;
    return flow_.add_value({.computation = c,
                            .instruction = static_cast<std::uint32_t>(i),
                            .leaf = kIndexTable,
                            .position = p,
                            .kind = kind,
                            .entry_parameter = entry_parameter,
                            .bytes = bytes,
                            .unpadded = 0});  // storage, not program data
  }

  // Every value an instruction defines: its array leaves into leaves_ and, for a tuple shape, its
  // index table (returned).
  ValueId define(std::uint32_t c, std::size_t i, std::int32_t p, BufferKind kind, bool readonly) {
    const Shape& shape = module_.computations[c].instructions[i].shape;
    if (!shape.is_tuple()) {
      leaves_.push_back(define_leaf(c, i, 0, shape, p, kind, readonly));
      return kNoValue;
    }
    const std::vector<detail::ShapeLeaf> leaves = detail::leaves_of(shape);
    for (std::size_t j = 0; j < leaves.size(); ++j)
      leaves_.push_back(define_leaf(c, i, j, *leaves[j].shape, p, kind, readonly));
    return define_table(c, i, p, kind, true);
  }

  // An ENTRY parameter: argument buffers, read-only unless input_output_alias donates them.
  ValueId define_entry_parameter(std::uint32_t c, std::size_t i, std::int32_t p) {
    const Instruction& ins = module_.computations[c].instructions[i];
    const std::vector<detail::ShapeLeaf> leaves = detail::leaves_of(ins.shape);
    for (std::size_t j = 0; j < leaves.size(); ++j) {
      bool donated = false;
      for (const IoAlias& a : module_.input_output_alias)
        donated = donated || (a.parameter_number == ins.parameter_number &&
                              detail::path_has_prefix(leaves[j].path, a.parameter_index));
      leaves_.push_back(define_leaf(c, i, j, *leaves[j].shape, p, BufferKind::Parameter, !donated, true));
    }
    const ValueId table = ins.shape.is_tuple() ? define_table(c, i, p, BufferKind::Parameter, true, true) : kNoValue;
    if (ins.parameter_number >= 0) {
      const auto n = static_cast<std::size_t>(ins.parameter_number);
      if (flow_.entry_parameters_.size() <= n) flow_.entry_parameters_.resize(n + 1, -1);
      flow_.entry_parameters_[n] = p;
    }
    return table;
  }

  // One instance of computation c; `args` the positions of its arguments (nullptr: ENTRY).
  // Returns the position of its ROOT.
  std::int32_t instantiate(std::size_t c, const std::vector<std::int32_t>* args) {
    const Computation& comp = module_.computations[c];
    if (on_stack_[c])
      throw Error::at(module_.source, comp.pos.line, comp.pos.col, "computation '" + comp.name + "' calls itself");
    on_stack_[c] = true;
    const auto cid = static_cast<std::uint32_t>(c);
    const std::vector<std::size_t>& order = schedule_.order[c];
    const std::vector<std::int32_t>& last_use = last_uses(c);
    std::vector<std::int32_t> at(comp.instructions.size(), -1);  // position of each instruction here
    const bool entry = args == nullptr;
    const std::int32_t first = next_pos_;

    for (std::size_t k = 0; k < order.size(); ++k) {
      const std::size_t i = order[k];
      const Instruction& ins = comp.instructions[i];
      const auto operand = [&](std::size_t n) { return at[ins.operands.at(n)]; };
      std::int32_t p = -1;
      ValueId table = kNoValue;
      // The cases that instantiate computations fill leaves_ only once those return.
      leaves_.clear();
      switch (ins.opcode) {
        case Opcode::Parameter:
          if (entry) {
            p = step();
            table = define_entry_parameter(cid, i, p);
          } else {
            if (ins.parameter_number < 0 || static_cast<std::size_t>(ins.parameter_number) >= args->size())
              throw Error::at(module_.source, ins.pos.line, ins.pos.col,
                              "parameter(" + std::to_string(ins.parameter_number) + ") has no argument at its call site");
            const std::int32_t q = (*args)[static_cast<std::size_t>(ins.parameter_number)];
            forward(q);
            table = flow_.index_table(q);
          }
          break;
        case Opcode::Tuple:
          for (std::size_t n = 0; n < ins.operands.size(); ++n) forward(operand(n));
          p = step();
          table = define_table(cid, i, p, BufferKind::Temp, false);
          break;
        case Opcode::GetTupleElement:
          element(comp, ins, operand(0));
          break;
        case Opcode::While:
          table = run_while(comp, ins, operand(0));
          break;
        case Opcode::Call:
          table = run_call(comp, ins, at);
          break;
        case Opcode::Conditional:
          table = run_conditional(comp, ins, at, p);
          break;
        case Opcode::DynamicUpdateSlice:
          // In place when operand 0's buffer dies here (XLA's in-place input/output pairs).
          if (!ins.operands.empty() && in_place(operand(0), last_use[ins.operands[0]], static_cast<std::int64_t>(k))) {
            forward(operand(0));
            table = flow_.index_table(operand(0));
          } else {
            p = step();
            table = define(cid, i, p, BufferKind::Temp, false);
          }
          break;
        case Opcode::Constant:
          p = step();
          table = define(cid, i, p, BufferKind::Constant, true);
          break;
        default:
          if (detail::forwards_operand(ins.opcode) && !ins.operands.empty() &&
              flow_.result(operand(0)).size() == detail::leaf_count(ins.shape)) {
            forward(operand(0));
            table = flow_.index_table(operand(0));
          } else {
            p = step();
            table = define(cid, i, p, BufferKind::Temp, false);
          }
      }
      if (p < 0) p = step();
      commit(cid, i, table, at);
      at[i] = p;
    }
    flow_.windows_.push_back({cid, first, next_pos_ - 1, at.at(comp.root)});
    on_stack_[c] = false;
    return at.at(comp.root);
  }

  void element(const Computation& comp, const Instruction& ins, std::int32_t tuple) {
    const Instruction& op = comp.instructions.at(ins.operands.at(0));
    const auto index = ins.tuple_index;
    if (!op.shape.is_tuple() || index < 0 || static_cast<std::size_t>(index) >= op.shape.elements.size())
      throw Error::at(module_.source, ins.pos.line, ins.pos.col,
                      "get-tuple-element index " + std::to_string(index) + " is outside its operand's tuple");
    std::size_t first = 0;
    for (std::int64_t e = 0; e < index; ++e) first += detail::leaf_count(op.shape.elements[static_cast<std::size_t>(e)]);
    const std::size_t count = detail::leaf_count(op.shape.elements[static_cast<std::size_t>(index)]);
    const std::span<const ValueId> whole = flow_.result(tuple);
    if (first + count > whole.size())
      throw Error::at(module_.source, ins.pos.line, ins.pos.col, "get-tuple-element of a mismatched tuple");
    leaves_.insert(leaves_.end(), whole.begin() + static_cast<std::ptrdiff_t>(first),
                   whole.begin() + static_cast<std::ptrdiff_t>(first + count));
  }

  bool in_place(std::int32_t target, std::int64_t last_use, std::int64_t here) const {
    const std::span<const ValueId> r = flow_.result(target);
    // A read-only value is never joined to another (a copy joins instead), so read-only is the
    // value's own property.
    return last_use == here && r.size() == 1 && r[0] != kNoValue && !flow_.value(r[0]).readonly;
  }

  std::size_t called(const Computation& comp, const Instruction& ins, std::optional<std::size_t> which,
                     const char* what) const {
    if (!which || *which >= module_.computations.size())
      throw Error::at(module_.source, ins.pos.line, ins.pos.col,
                      std::string(opcode_name(ins.opcode)) + " in '" + comp.name + "' has no " + what);
    return *which;
  }

  // XLA's flattening: the condition's positions, then the body's, then the while's own. The state
  // is the init's values, which the condition's and the body's parameter hold; after the loop each
  // leaf is the value the aliasing gives it.
  ValueId run_while(const Computation& comp, const Instruction& ins, std::int32_t init) {
    const std::size_t cond = called(comp, ins, ins.condition, "condition");
    const std::size_t body = called(comp, ins, ins.body, "body");
    const std::int32_t window = next_pos_;
    const std::vector<std::int32_t> args{init};
    instantiate(cond, &args);
    const std::int32_t next = instantiate(body, &args);
    const std::int32_t body_end = next_pos_ - 1;
    leaves_.clear();
    const std::span<const ValueId> state = flow_.result(init);
    const std::span<const ValueId> written = flow_.result(next);
    for (std::size_t j = 0; j < state.size(); ++j) {
      if (state[j] == kNoValue || j >= written.size())
        leaves_.push_back(state[j]);
      else
        leaves_.push_back(carried_.loop_state(flow_, state[j], written[j], window, body_end));
    }
    return flow_.index_table(init);
  }

  ValueId run_call(const Computation& comp, const Instruction& ins, const std::vector<std::int32_t>& at) {
    const std::size_t callee =
        called(comp, ins, ins.called.empty() ? std::nullopt : std::optional(ins.called.front()), "called computation");
    std::vector<std::int32_t> args;
    args.reserve(ins.operands.size());
    for (const std::size_t o : ins.operands) args.push_back(at[o]);
    const std::int32_t root = instantiate(callee, &args);  // its result is the callee's ROOT
    leaves_.clear();
    forward(root);
    return flow_.index_table(root);
  }

  // Each branch's positions in turn, then the conditional's own (p); each leaf of the result is the
  // value the aliasing gives it, the index table the first branch's.
  ValueId run_conditional(const Computation& comp, const Instruction& ins, const std::vector<std::int32_t>& at,
                          std::int32_t& p) {
    if (ins.branches.empty())
      throw Error::at(module_.source, ins.pos.line, ins.pos.col, "conditional without branch computations");
    std::vector<std::int32_t> roots;
    for (std::size_t b = 0; b < ins.branches.size(); ++b) {
      const std::size_t branch = called(comp, ins, ins.branches[b], "branch");
      std::vector<std::int32_t> args;
      if (b + 1 < ins.operands.size()) args.push_back(at[ins.operands[b + 1]]);
      roots.push_back(instantiate(branch, &args));
    }
    p = step();
    leaves_.clear();
    std::vector<ValueId> per_branch(roots.size());
    const std::size_t n = flow_.result(roots.front()).size();
    for (std::size_t j = 0; j < n; ++j) {
      for (std::size_t b = 0; b < roots.size(); ++b) {
        const std::span<const ValueId> r = flow_.result(roots[b]);
        per_branch[b] = j < r.size() ? r[j] : kNoValue;
      }
      leaves_.push_back(carried_.branch_result(flow_, per_branch, p));
    }
    return flow_.index_table(roots.front());
  }

  // For each instruction of computation c: the last schedule index (in c's order) at which its
  // value is read, following the instructions that forward it (tuple, get-tuple-element, bitcast);
  // a ROOT value is read after the last index.
  const std::vector<std::int32_t>& last_uses(std::size_t c) {
    std::vector<std::int32_t>& last = last_use_[c];
    if (!last.empty()) return last;
    const Computation& comp = module_.computations[c];
    const std::vector<std::size_t>& order = schedule_.order[c];
    const std::size_t n = comp.instructions.size();
    check_order(comp, order);
    // Indices in 32 bits: a computation this large could not be flattened anyway.
    if (n > static_cast<std::size_t>(kMaxPositions)) throw_too_many_positions();
    std::vector<std::int32_t> index(n);
    for (std::size_t k = 0; k < order.size(); ++k) index[order[k]] = static_cast<std::int32_t>(k);
    last.assign(n, -1);
    for (std::size_t k = order.size(); k-- > 0;) {
      const std::size_t i = order[k];
      const Instruction& ins = comp.instructions[i];
      if (i == comp.root) last[i] = static_cast<std::int32_t>(n);
      const bool forwards = ins.opcode == Opcode::Tuple || detail::forwards_operand(ins.opcode);
      for (const std::size_t o : ins.operands)
        last[o] = std::max({last[o], index[i], forwards ? last[i] : std::int32_t{-1}});
    }
    return last;
  }

  void check_order(const Computation& comp, const std::vector<std::size_t>& order) const {
    const std::size_t n = comp.instructions.size();
    if (order.size() != n)
      throw Error(module_.source, "schedule '" + schedule_.name + "': computation '" + comp.name + "' has " +
                                      std::to_string(n) + " instructions, the schedule " + std::to_string(order.size()));
    std::vector<bool> seen(n, false);
    for (const std::size_t i : order) {
      if (i >= n || seen[i])
        throw Error(module_.source, "schedule '" + schedule_.name + "': computation '" + comp.name +
                                        "' lists an instruction twice or one it does not have");
      for (const std::size_t o : comp.instructions[i].operands)
        if (o >= n || !seen[o])
          throw Error(module_.source, "schedule '" + schedule_.name + "': '" + comp.instructions[i].name +
                                          "' is scheduled before its operand");
      seen[i] = true;
    }
  }

  const Module& module_;
  const Schedule& schedule_;
  detail::ShapeSizes sizes_;
  CarriedValues& carried_;
  Dataflow flow_;
  std::vector<bool> on_stack_;
  std::vector<std::vector<std::int32_t>> last_use_;
  std::vector<ValueId> leaves_;  // the result of the instruction being walked
  std::int32_t next_pos_ = 0;
};

Dataflow run_dataflow(const Module& module, const Schedule& schedule, const SizeOptions& sizes,
                      CarriedValues& carried) {
  return DataflowBuilder(module, schedule, sizes, carried).run();
}

}  // namespace tpuemu::hlo
