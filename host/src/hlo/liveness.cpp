// SPDX-License-Identifier: Apache-2.0
// Liveness with XLA's dataflow and alias rules on one schedule (docs/hlo.md, "Liveness,
// schedules and sizes"). Every instruction position of the schedule, with the positions of the
// computations it runs spliced in before it (XLA's HloLiveRange flattening), is one time step;
// each value an instruction defines is a node; aliasing (while state, conditional branches,
// in-place updates, donation) joins nodes into one buffer whose live range is their union.
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "liveness_detail.h"
#include "tiled_size.h"
#include "tpuemu/base/error.h"
#include "tpuemu/hlo/liveness.h"

namespace tpuemu::hlo {
namespace {

using detail::leaves_of;
using detail::ShapeLeaf;

// Computations called from many sites are instantiated once per site (XLA flattens the call graph
// before buffer assignment, so each computation has one caller); a bound keeps a module whose
// call graph doubles at every level from exhausting memory.
constexpr std::int64_t kMaxPositions = std::int64_t{1} << 25;

// The value of one instruction: for each array leaf of its shape (depth first) the nodes that may
// hold it, and the node of its tuple index table if it has one.
struct Value {
  std::vector<std::vector<std::size_t>> leaves;
  std::optional<std::size_t> table;
};

struct Node {
  LiveBuffer buffer;
  std::size_t parent = 0;
  bool readonly = false;  // a non-donated ENTRY parameter or a constant: never written in place
  bool entry_parameter = false;  // holds an ENTRY parameter: an argument allocation of its own
  bool root_output = false;
};

std::string path_text(const std::vector<std::int64_t>& path) {
  std::string s = "{";
  for (std::size_t i = 0; i < path.size(); ++i) {
    if (i > 0) s += ',';
    s += std::to_string(path[i]);
  }
  return s + "}";
}

std::string shorten(const std::string& text) {
  constexpr std::size_t kMax = 160;
  return text.size() <= kMax ? text : text.substr(0, kMax - 3) + "...";
}

bool path_has_prefix(const std::vector<std::int64_t>& path, const std::vector<std::int64_t>& prefix) {
  return path.size() >= prefix.size() && std::equal(prefix.begin(), prefix.end(), path.begin());
}

class Flattener {
 public:
  Flattener(const Module& module, const Schedule& schedule, const SizeOptions& sizes)
      : module_(module), schedule_(schedule), sizes_(sizes),
        on_stack_(module.computations.size(), false), last_use_(module.computations.size()) {}

  BufferSet run() {
    if (module_.computations.empty() || module_.entry >= module_.computations.size())
      throw Error(module_.source, "module has no ENTRY computation");
    if (schedule_.order.size() != module_.computations.size())
      throw Error(module_.source, "schedule '" + schedule_.name + "' does not cover every computation");
    const Value root = instantiate(module_.entry, nullptr);
    const std::int64_t last = next_pos_ - 1;
    // ROOT's buffers live to the end of the program: they are its outputs.
    touch(root, last);
    const std::vector<std::optional<std::size_t>> donors = donated_parameters(root);
    const Value outputs = distinct_outputs(root, donors, last);
    for (const auto& leaf : outputs.leaves)
      for (const std::size_t id : leaf) nodes_[id].root_output = true;
    if (outputs.table) nodes_[*outputs.table].root_output = true;
    for (std::size_t j = 0; j < outputs.leaves.size(); ++j) {
      if (!donors[j]) continue;
      for (const std::size_t id : outputs.leaves[j]) join(*donors[j], id, last);
      shares_.push_back(*donors[j]);
    }
    return finish();
  }

 private:
  std::size_t find(std::size_t id) {
    while (nodes_[id].parent != id) {
      nodes_[id].parent = nodes_[nodes_[id].parent].parent;
      id = nodes_[id].parent;
    }
    return id;
  }
  void unite(std::size_t a, std::size_t b) {
    a = find(a);
    b = find(b);
    if (a == b) return;
    if (b < a) std::swap(a, b);  // the first-defined node names the buffer
    nodes_[b].parent = a;
    nodes_[a].readonly = nodes_[a].readonly || nodes_[b].readonly;
    nodes_[a].entry_parameter = nodes_[a].entry_parameter || nodes_[b].entry_parameter;
  }
  bool readonly(std::size_t id) { return nodes_[find(id)].readonly; }
  bool holds_parameter(std::size_t id) { return nodes_[find(id)].entry_parameter; }

  // Joins id's buffer to target's, as an alias (loop state, branch result, donation) asks. Each
  // ENTRY parameter is an argument allocation of its own, so two of them never become one buffer:
  // a copy of id made at `pos` joins instead, as XLA's copy insertion copies such a value.
  void join(std::size_t target, std::size_t id, std::int64_t pos) {
    if (find(target) != find(id) && holds_parameter(target) && holds_parameter(id)) id = copy_of(id, pos);
    unite(target, id);
  }

  std::size_t add_node(LiveBuffer buffer, bool readonly) {
    Node n;
    n.buffer = std::move(buffer);
    n.parent = nodes_.size();
    n.readonly = readonly;
    nodes_.push_back(std::move(n));
    return nodes_.size() - 1;
  }

  // A buffer for one array leaf defined by `ins` at `pos`; nullopt for a leaf without storage.
  std::optional<std::size_t> define_leaf(const Computation& comp, const Instruction& ins,
                                         const ShapeLeaf& leaf, bool tuple_shape, std::int64_t pos,
                                         BufferKind kind, bool readonly) {
    const ShapeBytes sb = shape_bytes(*leaf.shape, sizes_);
    if (sb.padded == 0 && sb.unpadded == 0) return std::nullopt;
    LiveBuffer b;
    b.name = ins.name + (tuple_shape ? path_text(leaf.path) : "");
    b.bytes = sb.padded;
    b.unpadded = sb.unpadded;
    b.start = b.end = pos;
    b.kind = kind;
    b.whole_program = kind == BufferKind::Parameter;
    b.memory_space = leaf.shape->layout ? leaf.shape->layout->memory_space : 0;
    std::string dims;
    for (std::size_t i = 0; i < leaf.shape->dims.size(); ++i) {
      if (i > 0) dims += ',';
      dims += std::to_string(leaf.shape->dims[i]);
    }
    b.shape = std::string(type_name(leaf.shape->type)) + "[" + dims + "]" + sb.layout;
    describe(b, comp, ins);
    return add_node(std::move(b), readonly);
  }
  void describe(LiveBuffer& b, const Computation& comp, const Instruction& ins) const {
    b.op_name = ins.metadata.op_name;
    if (!ins.metadata.source_file.empty())
      b.source = ins.metadata.source_file + ":" + std::to_string(ins.metadata.source_line);
    b.instruction = shorten(ins.text);
    b.computation = comp.name;
  }

  // Every value an instruction defines: its array leaves and, for a tuple shape, its index table.
  Value define(const Computation& comp, const Instruction& ins, std::int64_t pos, BufferKind kind,
               bool readonly) {
    Value v;
    for (const ShapeLeaf& leaf : leaves_of(ins.shape)) {
      v.leaves.emplace_back();
      if (auto id = define_leaf(comp, ins, leaf, ins.shape.is_tuple(), pos, kind, readonly))
        v.leaves.back().push_back(*id);
    }
    if (ins.shape.is_tuple()) v.table = define_table(comp, ins, pos, kind);
    return v;
  }
  // The index tables of every tuple in the shape; `nested` false: the outermost one's only (a
  // tuple instruction's nested tables are its operands').
  std::optional<std::size_t> define_table(const Computation& comp, const Instruction& ins,
                                          std::int64_t pos, BufferKind kind, bool nested = true) {
    const std::uint64_t bytes = detail::index_table_bytes(ins.shape, nested);
    if (bytes == 0) return std::nullopt;
    LiveBuffer b;
    b.name = ins.name + " (index table)";
    b.bytes = bytes;
    b.unpadded = 0;  // storage, not program data
    b.start = b.end = pos;
    b.kind = kind;
    b.whole_program = kind == BufferKind::Parameter;
    b.shape = ins.shape.to_string();
    describe(b, comp, ins);
    return add_node(std::move(b), false);
  }

  void touch(const Value& v, std::int64_t pos) {
    for (const auto& leaf : v.leaves)
      for (const std::size_t id : leaf) nodes_[id].buffer.end = std::max(nodes_[id].buffer.end, pos);
    if (v.table) nodes_[*v.table].buffer.end = std::max(nodes_[*v.table].buffer.end, pos);
  }

  // A copy XLA's copy insertion would make of a read-only value (a non-donated ENTRY parameter, a
  // constant) that a loop or a branch would otherwise write: a fresh buffer from `pos`.
  std::size_t copy_of(std::size_t id, std::int64_t pos) {
    LiveBuffer b = nodes_[find(id)].buffer;
    b.name += " (copy)";
    b.kind = BufferKind::Temp;
    b.whole_program = false;
    b.start = b.end = pos;
    return add_node(std::move(b), false);
  }

  // XLA's flattening: one time step per scheduled instruction, the called computations' steps
  // spliced in before the calling instruction's own (while: condition then body).
  Value instantiate(std::size_t c, const std::vector<Value>* args) {
    const Computation& comp = module_.computations[c];
    if (on_stack_[c])
      throw Error::at(module_.source, comp.pos.line, comp.pos.col,
                      "computation '" + comp.name + "' calls itself");
    on_stack_[c] = true;
    const std::vector<std::size_t>& order = schedule_.order[c];
    const std::vector<std::int64_t>& last_use = last_uses(c);
    std::vector<Value> vals(comp.instructions.size());
    const bool entry = args == nullptr;

    for (std::size_t k = 0; k < order.size(); ++k) {
      const std::size_t i = order[k];
      const Instruction& ins = comp.instructions[i];
      auto operand = [&](std::size_t n) -> const Value& { return vals[ins.operands.at(n)]; };
      std::optional<std::int64_t> pos;
      auto step = [&]() {
        if (next_pos_ >= kMaxPositions)
          throw Error(module_.source, "the flattened schedule exceeds " +
                                          std::to_string(kMaxPositions) +
                                          " positions (computations called from very many sites)");
        pos = next_pos_++;
        return *pos;
      };
      Value v;
      switch (ins.opcode) {
        case Opcode::Parameter:
          if (entry) {
            v = define_entry_parameter(comp, ins, step());
          } else {
            if (ins.parameter_number < 0 || static_cast<std::size_t>(ins.parameter_number) >= args->size())
              throw Error::at(module_.source, ins.pos.line, ins.pos.col,
                              "parameter(" + std::to_string(ins.parameter_number) +
                                  ") has no argument at its call site");
            v = (*args)[static_cast<std::size_t>(ins.parameter_number)];
          }
          break;
        case Opcode::Tuple:
          for (std::size_t n = 0; n < ins.operands.size(); ++n)
            for (const auto& leaf : operand(n).leaves) v.leaves.push_back(leaf);
          v.table = define_table(comp, ins, step(), BufferKind::Temp, false);
          break;
        case Opcode::GetTupleElement:
          v = element(comp, ins, vals);
          break;
        case Opcode::While:
          v = run_while(comp, ins, operand(0));
          break;
        case Opcode::Call:
          v = run_call(comp, ins, vals);
          break;
        case Opcode::Conditional:
          v = run_conditional(comp, ins, vals, step);
          break;
        case Opcode::DynamicUpdateSlice:
          // In place when operand 0's buffer dies here (XLA's in-place input/output pairs).
          if (!ins.operands.empty() && in_place(operand(0), last_use[ins.operands[0]],
                                                static_cast<std::int64_t>(k)))
            v = operand(0);
          else
            v = define(comp, ins, step(), BufferKind::Temp, false);
          break;
        case Opcode::Constant:
          v = define(comp, ins, step(), BufferKind::Constant, true);
          break;
        default:
          if (detail::forwards_operand(ins.opcode) && !ins.operands.empty() &&
              operand(0).leaves.size() == detail::leaf_count(ins.shape))
            v = operand(0);
          else
            v = define(comp, ins, step(), BufferKind::Temp, false);
      }
      const std::int64_t p = pos ? *pos : step();
      // Uses: get-tuple-element reads only its element (and the index table); all others read
      // every buffer of their operands.
      if (ins.opcode == Opcode::GetTupleElement) {
        if (!ins.operands.empty() && operand(0).table) touch(Value{{}, operand(0).table}, p);
      } else {
        for (const std::size_t o : ins.operands) touch(vals[o], p);
      }
      touch(v, p);
      vals[i] = std::move(v);
    }
    // A computation's result lives to the end of its window; the caller's uses extend it further.
    Value result = vals.at(comp.root);
    touch(result, next_pos_ - 1);
    on_stack_[c] = false;
    return result;
  }

  Value define_entry_parameter(const Computation& comp, const Instruction& ins, std::int64_t pos) {
    Value v;
    for (const ShapeLeaf& leaf : leaves_of(ins.shape)) {
      bool donated = false;
      for (const IoAlias& a : module_.input_output_alias)
        donated = donated || (a.parameter_number == ins.parameter_number &&
                              path_has_prefix(leaf.path, a.parameter_index));
      v.leaves.emplace_back();
      if (auto id = define_leaf(comp, ins, leaf, ins.shape.is_tuple(), pos, BufferKind::Parameter, !donated)) {
        nodes_[*id].entry_parameter = true;
        v.leaves.back().push_back(*id);
      }
    }
    if (ins.shape.is_tuple()) {
      v.table = define_table(comp, ins, pos, BufferKind::Parameter);
      if (v.table) nodes_[*v.table].entry_parameter = true;
    }
    if (ins.parameter_number >= 0) {
      const auto n = static_cast<std::size_t>(ins.parameter_number);
      if (entry_params_.size() <= n) entry_params_.resize(n + 1);
      entry_params_[n] = v;
    }
    return v;
  }

  Value element(const Computation& comp, const Instruction& ins, const std::vector<Value>& vals) {
    const Instruction& op = comp.instructions.at(ins.operands.at(0));
    const auto index = ins.tuple_index;
    if (!op.shape.is_tuple() || index < 0 || static_cast<std::size_t>(index) >= op.shape.elements.size())
      throw Error::at(module_.source, ins.pos.line, ins.pos.col,
                      "get-tuple-element index " + std::to_string(index) + " is outside its operand's tuple");
    std::size_t first = 0;
    for (std::int64_t e = 0; e < index; ++e) first += detail::leaf_count(op.shape.elements[e]);
    const std::size_t count = detail::leaf_count(op.shape.elements[index]);
    const Value& whole = vals.at(ins.operands[0]);
    Value v;
    if (first + count > whole.leaves.size())
      throw Error::at(module_.source, ins.pos.line, ins.pos.col, "get-tuple-element of a mismatched tuple");
    v.leaves.assign(whole.leaves.begin() + static_cast<std::ptrdiff_t>(first),
                    whole.leaves.begin() + static_cast<std::ptrdiff_t>(first + count));
    return v;
  }

  bool in_place(const Value& target, std::int64_t last_use, std::int64_t here) {
    if (last_use != here || target.leaves.size() != 1 || target.leaves[0].size() != 1) return false;
    return !readonly(target.leaves[0][0]);
  }

  std::size_t called(const Computation& comp, const Instruction& ins, std::optional<std::size_t> which,
                     const char* what) const {
    if (!which || *which >= module_.computations.size())
      throw Error::at(module_.source, ins.pos.line, ins.pos.col,
                      std::string(opcode_name(ins.opcode)) + " in '" + comp.name + "' has no " + what);
    return *which;
  }

  Value run_while(const Computation& comp, const Instruction& ins, const Value& init) {
    const std::size_t cond = called(comp, ins, ins.condition, "condition");
    const std::size_t body = called(comp, ins, ins.body, "body");
    // The loop state is the init's buffers: the condition's and the body's parameters alias it.
    const std::int64_t window = next_pos_;
    const std::vector<Value> args{init};
    instantiate(cond, &args);
    const Value next = instantiate(body, &args);
    const std::int64_t body_end = next_pos_ - 1;
    // Each iteration's result becomes the next state: one buffer per leaf across the loop. A leaf
    // the body writes whose init is read-only (an argument, a constant) is first copied, as XLA's
    // copy insertion does; a leaf the body passes through unchanged needs no copy.
    Value out = init;
    for (std::size_t j = 0; j < out.leaves.size() && j < next.leaves.size(); ++j) {
      std::vector<std::size_t>& leaf = out.leaves[j];
      if (leaf.empty()) continue;
      const auto& written = next.leaves[j];
      if (written.size() == 1 && find(written[0]) == find(leaf[0])) continue;
      std::size_t target = leaf[0];
      if (leaf.size() > 1 || readonly(target)) target = copy_of(target, window);
      leaf = {target};
      for (const std::size_t id : written)
        if (!readonly(id)) join(target, id, body_end);
    }
    return out;
  }

  Value run_call(const Computation& comp, const Instruction& ins, const std::vector<Value>& vals) {
    const std::size_t callee = called(comp, ins, ins.called.empty() ? std::nullopt
                                                                   : std::optional(ins.called.front()),
                                      "called computation");
    std::vector<Value> args;
    for (const std::size_t o : ins.operands) args.push_back(vals[o]);
    return instantiate(callee, &args);  // its outputs are the callee's root
  }

  template <typename Step>
  Value run_conditional(const Computation& comp, const Instruction& ins, const std::vector<Value>& vals,
                        Step& step) {
    if (ins.branches.empty())
      throw Error::at(module_.source, ins.pos.line, ins.pos.col, "conditional without branch computations");
    std::vector<Value> results;
    for (std::size_t b = 0; b < ins.branches.size(); ++b) {
      const std::size_t branch = called(comp, ins, ins.branches[b], "branch");
      std::vector<Value> args;
      if (b + 1 < ins.operands.size()) args.push_back(vals[ins.operands[b + 1]]);
      results.push_back(instantiate(branch, &args));
    }
    const std::int64_t p = step();
    // One output buffer per leaf that every branch's root writes (colocated, as buffer assignment
    // does for a conditional); a read-only root leaf is copied into it.
    Value out;
    out.table = results.front().table;
    const std::size_t n = results.front().leaves.size();
    for (std::size_t j = 0; j < n; ++j) {
      std::vector<std::size_t> ids;
      bool copy = false;
      for (const Value& r : results)
        if (j < r.leaves.size())
          for (const std::size_t id : r.leaves[j]) {
            if (readonly(id)) copy = true;
            else ids.push_back(id);
          }
      if (copy) {
        const std::size_t src = results.front().leaves[j].empty() ? 0 : results.front().leaves[j].front();
        if (!results.front().leaves[j].empty()) ids.push_back(copy_of(src, p));
      }
      out.leaves.emplace_back();
      if (ids.empty()) continue;
      for (const std::size_t id : ids) join(ids.front(), id, p);
      out.leaves.back().push_back(ids.front());
    }
    return out;
  }

  // For each instruction of computation c: the last schedule index (in c's order) at which its
  // value is read, following the instructions that forward it (tuple, get-tuple-element, bitcast);
  // a ROOT value is read after the last index.
  const std::vector<std::int64_t>& last_uses(std::size_t c) {
    std::vector<std::int64_t>& last = last_use_[c];
    if (!last.empty()) return last;
    const Computation& comp = module_.computations[c];
    const std::vector<std::size_t>& order = schedule_.order[c];
    const std::size_t n = comp.instructions.size();
    check_order(comp, order);
    std::vector<std::int64_t> index(n);
    for (std::size_t k = 0; k < order.size(); ++k) index[order[k]] = static_cast<std::int64_t>(k);
    last.assign(n, -1);
    for (std::size_t k = order.size(); k-- > 0;) {
      const std::size_t i = order[k];
      const Instruction& ins = comp.instructions[i];
      if (i == comp.root) last[i] = static_cast<std::int64_t>(n);
      const bool forwards = ins.opcode == Opcode::Tuple || detail::forwards_operand(ins.opcode);
      for (const std::size_t o : ins.operands)
        last[o] = std::max({last[o], index[i], forwards ? last[i] : std::int64_t{-1}});
    }
    return last;
  }

  void check_order(const Computation& comp, const std::vector<std::size_t>& order) const {
    const std::size_t n = comp.instructions.size();
    if (order.size() != n)
      throw Error(module_.source, "schedule '" + schedule_.name + "': computation '" + comp.name +
                                      "' has " + std::to_string(n) + " instructions, the schedule " +
                                      std::to_string(order.size()));
    std::vector<bool> seen(n, false);
    for (const std::size_t i : order) {
      if (i >= n || seen[i])
        throw Error(module_.source, "schedule '" + schedule_.name + "': computation '" + comp.name +
                                        "' lists an instruction twice or one it does not have");
      for (const std::size_t o : comp.instructions[i].operands)
        if (o >= n || !seen[o])
          throw Error(module_.source, "schedule '" + schedule_.name + "': '" +
                                          comp.instructions[i].name + "' is scheduled before its operand");
      seen[i] = true;
    }
  }

  // input_output_alias: for each leaf of the ENTRY ROOT's shape, the ENTRY parameter node donated
  // to it (its buffer becomes the output's), or nullopt.
  std::vector<std::optional<std::size_t>> donated_parameters(const Value& root) {
    std::vector<std::optional<std::size_t>> donors(root.leaves.size());
    const Computation& entry = module_.entry_computation();
    const Instruction& root_ins = entry.instructions.at(entry.root);
    const std::vector<ShapeLeaf> out_leaves = leaves_of(root_ins.shape);
    for (const IoAlias& a : module_.input_output_alias) {
      if (a.parameter_number < 0 || static_cast<std::size_t>(a.parameter_number) >= entry.parameters.size())
        throw Error(module_.source, "input_output_alias names parameter " +
                                        std::to_string(a.parameter_number) + ", which ENTRY does not have");
      if (static_cast<std::size_t>(a.parameter_number) >= entry_params_.size()) continue;
      const Value& param = entry_params_[static_cast<std::size_t>(a.parameter_number)];
      const Instruction& param_ins = entry.instructions.at(entry.parameters[static_cast<std::size_t>(a.parameter_number)]);
      const std::vector<ShapeLeaf> in_leaves = leaves_of(param_ins.shape);
      std::vector<std::size_t> outs, ins;
      for (std::size_t j = 0; j < out_leaves.size() && j < root.leaves.size(); ++j)
        if (path_has_prefix(out_leaves[j].path, a.output_index)) outs.push_back(j);
      for (std::size_t j = 0; j < in_leaves.size() && j < param.leaves.size(); ++j)
        if (path_has_prefix(in_leaves[j].path, a.parameter_index)) ins.push_back(j);
      if (outs.size() != ins.size() || outs.empty())
        throw Error(module_.source, "input_output_alias: output " + path_text(a.output_index) +
                                        " and parameter " + std::to_string(a.parameter_number) + " " +
                                        path_text(a.parameter_index) + " are not the same shape");
      for (std::size_t j = 0; j < outs.size(); ++j)
        if (!param.leaves[ins[j]].empty()) donors[outs[j]] = param.leaves[ins[j]].front();
    }
    return donors;
  }

  // XLA's copy insertion makes the entry's results distinct buffers, none of them read-only: a
  // result leaf that holds an ENTRY parameter other than the one donated to it, a constant, or a
  // buffer an earlier result leaf holds is copied into a fresh buffer at the program's last
  // position. So an output never takes an argument's or a constant's allocation.
  Value distinct_outputs(const Value& root, const std::vector<std::optional<std::size_t>>& donors,
                         std::int64_t last) {
    Value out = root;
    std::vector<std::size_t> held;  // the buffers (union roots) of the result leaves so far
    for (std::size_t j = 0; j < out.leaves.size(); ++j) {
      std::vector<std::size_t>& leaf = out.leaves[j];
      if (leaf.empty()) continue;
      const std::size_t r = find(leaf.front());
      const bool ambiguous = leaf.size() > 1;
      const bool held_before = std::find(held.begin(), held.end(), r) != held.end();
      const bool own_donor = donors[j] && find(*donors[j]) == r;
      const bool foreign = (holds_parameter(r) || readonly(r)) && !own_donor;
      if (ambiguous || held_before || foreign) leaf = {copy_of(leaf.front(), last)};
      held.push_back(find(leaf.front()));
    }
    if (out.table && nodes_[find(*out.table)].buffer.kind != BufferKind::Temp) out.table = copy_of(*out.table, last);
    return out;
  }

  BufferSet finish() {
    BufferSet set;
    set.positions = next_pos_;
    const std::int64_t last = next_pos_ - 1;
    std::vector<std::optional<std::size_t>> slot(nodes_.size());
    std::vector<bool> output(nodes_.size(), false), parameter(nodes_.size(), false),
        constant(nodes_.size(), false), shares(nodes_.size(), false);
    for (const std::size_t id : shares_) shares[find(id)] = true;
    // A joined buffer is named and described by its earliest member (the loop state by the value
    // entering the loop, a donated output by its argument).
    std::vector<std::size_t> first(nodes_.size());
    for (std::size_t id = 0; id < nodes_.size(); ++id) {
      const std::size_t r = find(id);
      if (r == id || nodes_[id].buffer.start < nodes_[first[r]].buffer.start) first[r] = id;
    }
    for (std::size_t id = 0; id < nodes_.size(); ++id) {
      const std::size_t r = find(id);
      const LiveBuffer& b = nodes_[id].buffer;
      if (!slot[r]) {
        slot[r] = set.buffers.size();
        set.buffers.push_back(nodes_[first[r]].buffer);
      }
      LiveBuffer& agg = set.buffers[*slot[r]];
      agg.start = std::min(agg.start, b.start);
      agg.end = std::max(agg.end, b.end);
      agg.bytes = std::max(agg.bytes, b.bytes);
      agg.unpadded = std::max(agg.unpadded, b.unpadded);
      agg.whole_program = agg.whole_program || b.whole_program;
      output[r] = output[r] || nodes_[id].root_output;
      parameter[r] = parameter[r] || b.kind == BufferKind::Parameter;
      constant[r] = constant[r] || b.kind == BufferKind::Constant;
    }
    for (std::size_t r = 0; r < nodes_.size(); ++r) {
      if (!slot[r]) continue;
      LiveBuffer& agg = set.buffers[*slot[r]];
      // An output that is a donated argument is reported as an output sharing the argument; a
      // parameter or constant returned as is stays what it is.
      if (shares[r]) {
        agg.kind = BufferKind::Output;
        agg.shares_argument = true;
      } else if (parameter[r]) {
        agg.kind = BufferKind::Parameter;
      } else if (output[r]) {
        agg.kind = BufferKind::Output;
      } else if (constant[r]) {
        agg.kind = BufferKind::Constant;
      } else {
        agg.kind = BufferKind::Temp;
      }
      if (agg.whole_program) {
        agg.start = 0;
        agg.end = last;
      }
    }
    return set;
  }

  const Module& module_;
  const Schedule& schedule_;
  SizeOptions sizes_;
  std::vector<Node> nodes_;
  std::vector<bool> on_stack_;
  std::vector<std::vector<std::int64_t>> last_use_;
  std::vector<Value> entry_params_;
  std::vector<std::size_t> shares_;
  std::int64_t next_pos_ = 0;
};

}  // namespace

BufferSet live_buffers(const Module& module, const Schedule& schedule, const SizeOptions& sizes) {
  Flattener f(module, schedule, sizes);
  return f.run();
}

}  // namespace tpuemu::hlo
