#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Generates the views of the hardware/software contract (spec/tpuemu.json, docs/contract.md).

    gen_spec.py SPEC --sv-core OUT.sv         the core's SystemVerilog package tpu_pkg
    gen_spec.py SPEC --sv-hbm OUT.sv          the HBM controller's package hbm_spec_pkg
    gen_spec.py SPEC --c OUT.h                the firmware's C header (FW_* macros)
    gen_spec.py SPEC --cpp OUT.h              the host's C++ header (namespace tpuemu::spec)
    gen_spec.py SPEC --docs FILE.md [--check] the tables between <!-- spec:NAME --> and
                                              <!-- /spec --> markers in a document: rewritten,
                                              or with --check compared (exit 1 on a difference)

Outputs are written only when their text changes (so a rebuild does not cascade) and atomically.
Python 3 standard library only. Every error is one line naming the spec path and exits 1.
"""
import argparse
import json
import os
import re
import sys
import tempfile


class SpecError(Exception):
    pass


def fail(where, what):
    raise SpecError(f"{where}: {what}")


def num(v, where):
    if isinstance(v, bool):
        fail(where, "expected a number, got a boolean")
    if isinstance(v, int):
        return v
    if isinstance(v, str):
        try:
            return int(v, 0)
        except ValueError:
            pass
    fail(where, f"expected a number, got {v!r}")


def camel(snake):
    return "".join(p[:1].upper() + p[1:] for p in snake.split("_"))


def ident(name, where):
    if not re.fullmatch(r"[A-Za-z][A-Za-z0-9_]*", name or ""):
        fail(where, f"not an identifier: {name!r}")
    return name


# ---------------------------------------------------------------------------------------------
# Derived timing distances: expressions over the timings ("hbm"/"derived_timings").
# expr := term (("+" | "-") term)*;  term := atom ("/" 2^k)?;
# atom := NUMBER | NAME | "max(" expr "," expr ")" | "(" expr ")".
# A distance is never negative: a - b is 0 when b >= a. NAME is a timing, BL (the burst length)
# or an earlier derived distance.
# ---------------------------------------------------------------------------------------------
TOKEN = re.compile(r"\s*(?:(\d+)|([A-Za-z_][A-Za-z0-9_]*)|(.))")


def parse_expr(text, known, where):
    toks = [(m.group(1), m.group(2), m.group(3)) for m in TOKEN.finditer(text) if m.group(0).strip()]
    pos = [0]

    def peek():
        return toks[pos[0]] if pos[0] < len(toks) else (None, None, None)

    def take(sym):
        if peek()[2] != sym:
            fail(where, f"expected '{sym}' in {text!r}")
        pos[0] += 1

    def atom():
        n, name, sym = peek()
        if n is not None:
            pos[0] += 1
            return ("num", int(n))
        if name == "max":
            pos[0] += 1
            take("(")
            a = expr()
            take(",")
            b = expr()
            take(")")
            return ("max", a, b)
        if name is not None:
            if name not in known:
                fail(where, f"unknown name {name} in {text!r} (a timing, BL or an earlier derived distance)")
            pos[0] += 1
            return ("name", name)
        if sym == "(":
            pos[0] += 1
            a = expr()
            take(")")
            return a
        fail(where, f"unexpected {sym or 'end'!r} in {text!r}")

    def term():
        a = atom()
        if peek()[2] == "/":
            pos[0] += 1
            n = peek()[0]
            if n is None or int(n) < 1 or int(n) & (int(n) - 1):
                fail(where, f"a division is by a power of two in {text!r}")
            pos[0] += 1
            a = ("shr", a, int(n).bit_length() - 1)
        return a

    def expr():
        a = term()
        while peek()[2] in ("+", "-"):
            op = "add" if peek()[2] == "+" else "sub"
            pos[0] += 1
            a = (op, a, term())
        return a

    tree = expr()
    if pos[0] != len(toks):
        fail(where, f"unexpected {text!r} after the expression")
    return tree


def eval_expr(tree, values):
    """The value of a parsed expression (unbounded integers), as the generated functions compute it."""
    k = tree[0]
    if k == "num":
        return tree[1]
    if k == "name":
        return values[tree[1]]
    a = eval_expr(tree[1], values)
    if k == "shr":
        return a >> tree[2]
    b = eval_expr(tree[2], values)
    return {"add": a + b, "sub": max(a - b, 0), "max": max(a, b)}[k]


def derived_values(spec, timings):
    """Every derived distance of a Spec for timings {name: value} (BL included), in table order."""
    values = dict(timings)
    out = {}
    for d, tree in zip(spec.hbm["derived_timings"], spec.derived_trees):
        values[d["name"]] = out[d["name"]] = eval_expr(tree, values)
    return out


def emit_expr(tree, lang):
    """The text of a parsed expression in a language: lang maps name, num, shr, sub and max to
    functions of their operands' texts."""
    def e(t):
        k = t[0]
        if k in ("num", "name"):
            return lang[k](t[1])
        if k == "shr":
            a = e(t[1])
            return lang["shr"](f"({a})" if " " in a else a, t[2])
        a, b = e(t[1]), e(t[2])
        if k == "sub" and " " in b:
            b = f"({b})"
        return f"{a} + {b}" if k == "add" else lang[k](a, b)
    return e(tree)


def derived_texts(spec, lang):
    """(entry, expression text) of every derived distance, in table order."""
    return [(d, emit_expr(tree, lang)) for d, tree in zip(spec.hbm["derived_timings"], spec.derived_trees)]


# ---------------------------------------------------------------------------------------------
# Loading and checking: overlaps, widths and duplicate names fail here, before any output.
# ---------------------------------------------------------------------------------------------
class Spec:
    def __init__(self, path):
        self.path = path
        try:
            with open(path, encoding="utf-8") as f:
                raw = json.load(f)
        except json.JSONDecodeError as e:
            fail(f"{path}:{e.lineno}:{e.colno}", e.msg)
        except OSError as e:
            fail(path, e.strerror)
        self.raw = raw
        self.core = {k: num(v["value"], f"{path}: /core/{k}") for k, v in raw["core"].items()}
        self.counters = raw["counters"]
        self.core["num_counters"] = len(self.counters)
        self.errors = raw["errors"]
        self.queues = raw["queues"]
        self.dma_paths = raw["dma_paths"]
        self.header = raw["instr_header"]["fields"]
        self.opcodes = raw["opcodes"]
        self.csrs = raw["csrs"]
        self.hbm = raw["hbm"]
        self.trace = raw["trace"]
        self.core_params = raw["core_params"]["params"]
        self.hbm_values = {k: num(v["value"], f"{path}: /hbm/{k}")
                           for k, v in self.hbm.items() if isinstance(v, dict) and "value" in v}
        self.check()

    def where(self, pointer):
        return f"{self.path}: {pointer}"

    def check_unique(self, items, key, pointer):
        seen = {}
        for i, it in enumerate(items):
            v = it[key]
            if isinstance(v, str) and key != "name":
                v = num(v, self.where(f"{pointer}/{i}/{key}"))
            if v in seen:
                fail(self.where(f"{pointer}/{i}/{key}"), f"{v!r} repeats {pointer}/{seen[v]}")
            seen[v] = i

    def check_fields(self, fields, pointer, words, word_bits=32):
        used = {}
        for i, f in enumerate(fields):
            p = f"{pointer}/{i}"
            ident(f["name"], self.where(p + "/name"))
            w, lsb, width = f.get("word", 0), f["lsb"], f["width"]
            if not (0 <= w < words) or width < 1 or lsb < 0 or lsb + width > word_bits:
                fail(self.where(p), f"field {f['name']} [{lsb + width - 1}:{lsb}] of word {w} "
                                    f"does not fit in {words} x {word_bits}-bit words")
            for b in range(lsb, lsb + width):
                if (w, b) in used:
                    fail(self.where(p), f"field {f['name']} overlaps {used[(w, b)]} at word {w} "
                                        f"bit {b}")
                used[(w, b)] = f["name"]
        self.check_unique(fields, "name", pointer)

    def check(self):
        words = self.core["instr_width"] // 32
        self.check_fields(self.header, "/instr_header/fields", 1)
        for i, op in enumerate(self.opcodes):
            p = f"/opcodes/{i}"
            ident(op["name"], self.where(p + "/name"))
            self.check_fields(op["fields"], p + "/fields", words)
            for j, f in enumerate(op["fields"]):
                if f["word"] == 0:
                    fail(self.where(f"{p}/fields/{j}"), "word 0 is the common header")
            code = num(op["code"], self.where(p + "/code"))
            if not 0 <= code < 256:
                fail(self.where(p + "/code"), "an opcode is 8 bits")
            if code >> 4 != self.queue_code(op["queue"], p):
                fail(self.where(p + "/code"), f"high nibble must select queue {op['queue']}")
        self.check_unique(self.opcodes, "code", "/opcodes")
        self.check_unique(self.opcodes, "name", "/opcodes")
        for lst, ptr in ((self.counters, "/counters"), (self.errors, "/errors"),
                         (self.queues, "/queues"), (self.dma_paths, "/dma_paths"),
                         (self.csrs, "/csrs"), (self.hbm["timings"], "/hbm/timings"),
                         (self.hbm["stats"], "/hbm/stats"), (self.hbm["queue_params"], "/hbm/queue_params")):
            for i, it in enumerate(lst):
                ident(it["name"], self.where(f"{ptr}/{i}/name"))
            self.check_unique(lst, "name", ptr)
        q = {it["name"]: num(it["default"], self.where("/hbm/queue_params")) for it in self.hbm["queue_params"]}
        if list(q) != ["read_queue", "write_queue", "write_high", "write_low"]:
            fail(self.where("/hbm/queue_params"), "must be read_queue, write_queue, write_high, write_low")
        slots = self.hbm_values["queue_slots"]
        if slots < 2 or slots & (slots - 1) or q["read_queue"] < 1 or q["write_queue"] < 1 or \
                q["read_queue"] + q["write_queue"] > slots or \
                not q["write_low"] < q["write_high"] <= q["write_queue"]:
            fail(self.where("/hbm/queue_params"), "defaults need 1 <= read_queue, 1 <= write_queue, "
                 "read_queue + write_queue <= queue_slots (a power of two), write_low < write_high <= write_queue")
        for lst, ptr in ((self.errors, "/errors"), (self.queues, "/queues"),
                         (self.dma_paths, "/dma_paths")):
            self.check_unique(lst, "code", ptr)
        path_width = self.op_field("dma", "path")["width"]
        for i, d in enumerate(self.dma_paths):
            if d["code"] >= 1 << path_width:
                fail(self.where(f"/dma_paths/{i}/code"), f"does not fit the {path_width}-bit field")
        err_width = self.csr_field("STATUS", "error_code")["width"]
        for i, e in enumerate(self.errors):
            if e["code"] >= 1 << err_width:
                fail(self.where(f"/errors/{i}/code"), f"does not fit STATUS.error_code")
        self.check_csrs()
        self.check_trace()
        self.check_core_params()
        names = {t["name"] for t in self.hbm["timings"]}
        for i, c in enumerate(self.hbm["timing_constraints"]):
            for n in [c["field"]] + c["sum"]:
                if n not in names:
                    fail(self.where(f"/hbm/timing_constraints/{i}"), f"unknown timing {n}")
            if c["op"] not in (">=", ">"):
                fail(self.where(f"/hbm/timing_constraints/{i}/op"), "must be >= or >")
        known = names | {"BL"}
        self.derived_trees = []
        for i, d in enumerate(self.hbm["derived_timings"]):
            p = self.where(f"/hbm/derived_timings/{i}")
            ident(d["name"], p + "/name")
            if d["name"] in known or d["name"] == "max":
                fail(p + "/name", f"{d['name']} repeats a timing or an earlier derived distance")
            self.derived_trees.append(parse_expr(d["expr"], known, p + "/expr"))
            known = known | {d["name"]}
        self.check_unique(self.hbm["address_fields"], "code", "/hbm/address_fields")
        self.check_unique(self.hbm["address_maps"], "code", "/hbm/address_maps")
        for i, f in enumerate(self.hbm["address_fields"]):
            ident(f["name"], self.where(f"/hbm/address_fields/{i}/name"))
            if not 0 <= f["code"] < 8:
                fail(self.where(f"/hbm/address_fields/{i}/code"), "a field code is 3 bits")
        if len(self.hbm["address_fields"]) != 5:
            fail(self.where("/hbm/address_fields"), "the controller maps exactly five fields")
        field_names = sorted(f["name"] for f in self.hbm["address_fields"])
        for i, m in enumerate(self.hbm["address_maps"]):
            if sorted(m["order"].split("-")) != field_names:
                fail(self.where(f"/hbm/address_maps/{i}/order"),
                     f"must name each of {', '.join(field_names)} once")

    def core_bound(self, v, earlier, where):
        """A bound of a core parameter as (constant, index of the parameter it names or -1, right
        shift, text): a number, or an earlier parameter's name optionally divided by 2^k."""
        if isinstance(v, int) and not isinstance(v, bool):
            if not 0 <= v < 1 << 32:
                fail(where, f"a bound is a 32-bit unsigned number, got {v}")
            return (v, -1, 0, str(v))
        m = re.fullmatch(r"([a-z][a-z0-9_]*)(?:/(\d+))?", v) if isinstance(v, str) else None
        if m is None:
            fail(where, f"expected a number or an earlier parameter's name, got {v!r}")
        if m.group(1) not in earlier:
            fail(where, f"{m.group(1)} is no earlier parameter in {v!r}")
        d = int(m.group(2) or 1)
        if d < 1 or d & (d - 1):
            fail(where, f"a division is by a power of two in {v!r}")
        return (0, earlier.index(m.group(1)), d.bit_length() - 1, v)

    def check_core_params(self):
        """Parses the bounds (self.core_bounds: min, max, multiple_of per parameter)."""
        earlier = []
        self.core_bounds = []
        for i, p in enumerate(self.core_params):
            w = self.where(f"/core_params/params/{i}")
            if not re.fullmatch(r"[a-z][a-z0-9_]*", p["name"]):
                fail(w + "/name", f"not a preset field name: {p['name']!r}")
            ident(p["parameter"], w + "/parameter")
            for key in ("doc", "why"):
                if not isinstance(p[key], str) or not p[key]:
                    fail(f"{w}/{key}", "expected a non-empty text")
            if not isinstance(p.get("power_of_two", False), bool):
                fail(w + "/power_of_two", "expected true or false")
            b = {k: self.core_bound(p[k], earlier, f"{w}/{k}") for k in ("min", "max")}
            b["multiple_of"] = self.core_bound(p.get("multiple_of", 1), earlier, w + "/multiple_of")
            if b["min"][1] < 0 and b["max"][1] < 0 and b["min"][0] > b["max"][0]:
                fail(w, f"min {b['min'][0]} is above max {b['max'][0]}")
            if "csr_field" in p:
                reg, _, field = p["csr_field"].partition(".")
                width = self.csr_field(reg, field)["width"]
                if b["max"][1] >= 0 or b["max"][0] >= 1 << width:
                    fail(w + "/max", f"{p['max']} does not fit {p['csr_field']} ({width} bits)")
            self.core_bounds.append(b)
            earlier.append(p["name"])
        self.check_unique(self.core_params, "name", "/core_params/params")
        self.check_unique([{"name": p["parameter"]} for p in self.core_params], "name",
                          "/core_params/params")

    def check_trace(self):
        t = self.trace
        if not 1 <= t["index_width"] <= 32:
            fail(self.where("/trace/index_width"), "a trace index is 1..32 bits")
        for i, e in enumerate(t["engines"]):
            ident(e["name"], self.where(f"/trace/engines/{i}/name"))
            self.queue_code(e["queue"], f"/trace/engines/{i}")
            if e["queue"] == "control":
                fail(self.where(f"/trace/engines/{i}/name"), "the control queue has no engine")
            if not 1 <= e["done_ports"] <= 8:
                fail(self.where(f"/trace/engines/{i}/done_ports"), "1..8 completion ports")
        self.check_unique(t["engines"], "name", "/trace/engines")
        queues = [e["queue"] for e in t["engines"]]
        if len(set(queues)) != len(queues):
            fail(self.where("/trace/engines"), "one engine per queue")

    def trace_layout(self):
        """Per engine: (engine, lsb of its struct, {field: (lsb within the struct, width)}, width),
        the first engine at bit 0 of trace_t; within an engine issue at bit 0, then stall_sem, done
        (one bit per port), done_idx (port k at done_idx + k * index_width)."""
        out, base, iw = [], 0, self.trace["index_width"]
        for e in self.trace["engines"]:
            n = e["done_ports"]
            fields = {"issue": (0, 1), "stall_sem": (1, 1), "done": (2, n), "done_idx": (2 + n, n * iw)}
            width = 2 + n + n * iw
            out.append((e, base, fields, width))
            base += width
        return out, base

    def check_csrs(self):
        span = 1 << self.core["csr_addr_width"]
        taken = []
        for i, c in enumerate(self.csrs):
            p = f"/csrs/{i}"
            addr = num(c["addr"], self.where(p + "/addr"))
            if addr % 4:
                fail(self.where(p + "/addr"), "CSRs are 32-bit aligned")
            size = self.csr_count(c) * c.get("stride", 4)
            if addr + size > span:
                fail(self.where(p), f"ends at 0x{addr + size:x}, beyond the CSR space 0x{span:x}")
            for (a, s, n) in taken:
                if addr < a + s and a < addr + size:
                    fail(self.where(p), f"{c['name']} overlaps {n}")
            taken.append((addr, size, c["name"]))
            self.check_fields(c.get("fields", []), p + "/fields", 1)

    def queue_code(self, name, where):
        for q in self.queues:
            if q["name"] == name:
                return q["code"]
        fail(self.where(where + "/queue"), f"unknown queue {name!r}")

    def op_field(self, op, field):
        for o in self.opcodes:
            if o["name"] == op:
                for f in o["fields"]:
                    if f["name"] == field:
                        return f
        fail(self.path, f"opcode {op} has no field {field}")

    def csr(self, name):
        for c in self.csrs:
            if c["name"] == name:
                return c
        fail(self.path, f"no CSR {name}")

    def csr_field(self, reg, field):
        for f in self.csr(reg).get("fields", []):
            if f["name"] == field:
                return f
        fail(self.path, f"CSR {reg} has no field {field}")

    def csr_count(self, c):
        n = c.get("count", 1)
        return self.core[n] if isinstance(n, str) else n

    def op_camel(self, op):
        return op.get("camel", camel(op["name"]))


# ---------------------------------------------------------------------------------------------
# SystemVerilog
# ---------------------------------------------------------------------------------------------
def sv_logic(width):
    return "logic" if width == 1 else f"logic [{width - 1}:0]"


def sv_struct(name, fields, total, doc):
    """A packed struct of `total` bits, MSB first; gaps become rsvd_<msb>_<lsb> fields."""
    bits = sorted(((f.get("word", 0) * 32 + f["lsb"], f) for f in fields), key=lambda t: -t[0])
    lines = [f"  // {doc}", "  typedef struct packed {"]
    top = total
    for lsb, f in bits:
        msb = lsb + f["width"]
        if msb < top:
            lines.append(f"    {sv_logic(top - msb)} rsvd_{top - 1}_{msb};")
        lines.append(f"    {sv_logic(f['width'])} {f['name']};  // [{msb - 1}:{lsb}] {f.get('doc', '')}".rstrip())
        top = lsb
    if top > 0:
        lines.append(f"    {sv_logic(top)} rsvd_{top - 1}_0;")
    lines.append(f"  }} {name};")
    return lines


def sv_enum(name, width, items, doc):
    lines = [f"  // {doc}", f"  typedef enum logic [{width - 1}:0] {{"]
    for i, (ident_, value) in enumerate(items):
        sep = "," if i + 1 < len(items) else ""
        lines.append(f"    {ident_} = {width}'h{value:0{(width + 3) // 4}X}{sep}")
    lines.append(f"  }} {name};")
    return lines


def gen_sv_core(s):
    c = s.core
    out = ["// GENERATED by spec/gen_spec.py from spec/tpuemu.json: do not edit.",
           "// Shared parameters, opcodes, CSR map and instruction layouts of the tpuemu core",
           "// (docs/isa.md, docs/contract.md).",
           "// Not every constant of the contract is used by every design that imports it.",
           "/* verilator lint_off UNUSEDPARAM */",
           "package tpu_pkg;", ""]
    for key, sv in (("num_sems", "NumSems"), ("sem_width", "SemWidth"),
                    ("instr_width", "InstrWidth"), ("addr_width", "AddrWidth"),
                    ("num_counters", "NumCounters"), ("csr_addr_width", "CsrAddrWidth"),
                    ("prog_align", "ProgAlign"), ("weight_banks", "WeightBanks")):
        out.append(f"  localparam int unsigned {sv} = {c[key]};")
    out.append(f"  localparam int unsigned SemIdxWidth = {(c['num_sems'] - 1).bit_length()};")
    out.append(f"  localparam logic [31:0] IdValue = 32'h{c['id_value']:08X};")
    out += ["", "  // Cycles from a row entering the MXU to its result row leaving it.",
            "  function automatic int unsigned mxu_latency(int unsigned dim);",
            # Assigned to the function's name, not `return`ed: the form Yosys parses too (docs/fpga.md).
            f"    mxu_latency = {c['mxu_latency_per_dim']} * dim;", "  endfunction", ""]
    out += sv_core_params(s)
    out += sv_enum("opcode_e", 8, [("Op" + s.op_camel(o), num(o["code"], "")) for o in s.opcodes],
                   "Opcodes; the high nibble selects the queue (queue_e).")
    out.append("")
    out += sv_enum("queue_e", 4, [("Queue" + camel(q["name"]), q["code"]) for q in s.queues],
                   "Instruction queues.")
    out.append("")
    out += sv_enum("dma_path_e", s.op_field("dma", "path")["width"],
                   [("Path" + camel(d["name"]), d["code"]) for d in s.dma_paths], "DMA paths.")
    out.append("")
    out += sv_enum("error_e", s.csr_field("STATUS", "error_code")["width"],
                   [("Err" + camel(e["name"]), e["code"]) for e in s.errors],
                   "Error codes (STATUS.error_code).")
    out.append("")
    out += sv_enum("csr_addr_e", c["csr_addr_width"],
                   [("Csr" + camel(r["name"].lower()), num(r["addr"], "")) for r in s.csrs],
                   "CSR byte addresses; SEM and COUNTER are the bases of their arrays.")
    for r in s.csrs:
        if "count" in r:
            out.append(f"  localparam int unsigned Csr{camel(r['name'].lower())}Stride = {r['stride']};")
    for r in s.csrs:
        if r.get("fields"):
            out.append("")
            out += sv_struct(f"csr_{r['name'].lower()}_t", r["fields"], 32, f"CSR {r['name']}: {r['doc']}")
    out.append("")
    hdr = [dict(f, word=0) for f in s.header]
    out += sv_struct("instr_hdr_t", hdr, 32, "Instruction word w0, common to all instructions.")
    # The view of an instruction before its opcode is known (fetch, the queues): the header and
    # the opcode-specific rest, which the engines decode with the instr_<op>_t layouts below.
    out += ["", "  // Any instruction: the common header and the opcode-specific body.",
            "  typedef struct packed {",
            f"    logic [{c['instr_width'] - 33}:0] body;  // [{c['instr_width'] - 1}:32] see instr_<op>_t",
            "    instr_hdr_t hdr;  // [31:0]",
            "  } instr_t;"]
    for o in s.opcodes:
        if not o["fields"]:
            continue
        out.append("")
        fields = list(o["fields"]) + [{"name": "hdr", "word": 0, "lsb": 0, "width": 32}]
        lines = sv_struct(f"instr_{o['name']}_t", fields, c["instr_width"],
                          f"{o['name'].upper()} ({o['code']}): {o['doc']}.")
        out += [l.replace("logic [31:0] hdr;", "instr_hdr_t hdr;") for l in lines]
    out.append("")
    layout, total = s.trace_layout()
    iw = s.trace["index_width"]
    out.append(f"  // Instruction trace port of tpu_top (trace_o): {s.trace['doc']}")
    out.append(f"  localparam int unsigned TraceIdxW = {iw};")
    for e, _, _, _ in layout:
        n = e["done_ports"]
        out += [f"  // {e['name']} engine: {e['doc']}",
                "  typedef struct packed {",
                f"    logic [{n - 1}:0][{iw - 1}:0] done_idx;  // queue index of the instruction done on port k",
                f"    logic [{n - 1}:0] done;  // port k: an instruction completed",
                "    logic stall_sem;  // the head waits on its semaphore",
                "    logic issue;  // the head left the queue and started",
                f"  }} trace_{e['name']}_t;"]
    out.append("  typedef struct packed {")
    for e, base, _, width in reversed(layout):
        out.append(f"    trace_{e['name']}_t {e['name']};  // [{base + width - 1}:{base}]")
    out.append("  } trace_t;")
    out.append("")
    out.append("  // Performance counters: COUNTER[j] of the CSR map.")
    out.append("  typedef enum int unsigned {")
    for j, k in enumerate(s.counters):
        sep = "," if j + 1 < len(s.counters) else ""
        out.append(f"    Cnt{camel(k['name'])} = {j}{sep}  // {k['doc']}")
    out += ["  } counter_e;", "", "endpackage", "/* verilator lint_on UNUSEDPARAM */", ""]
    return "\n".join(out)


def core_param_holds(s, i, values):
    """Whether values[i] meets parameter i's constraint given the values before it (the reference
    the generated SV and C++ checks are tested against)."""
    p, b = s.core_params[i], s.core_bounds[i]
    val = lambda bound: bound[0] if bound[1] < 0 else values[bound[1]] >> bound[2]
    v, m = values[i], val(b["multiple_of"])
    return val(b["min"]) <= v <= val(b["max"]) and \
        (not p.get("power_of_two") or (v & (v - 1)) == 0) and (m == 0 or v % m == 0)


def core_param_violation(s, values):
    """1 + the index of the first parameter that breaks its constraint, 0 when all hold."""
    for i in range(len(s.core_params)):
        if not core_param_holds(s, i, values):
            return i + 1
    return 0


def sv_core_params(s):
    names = [p["name"] for p in s.core_params]

    def bound(b):
        if b[1] < 0:
            return f"32'd{b[0]}"
        return names[b[1]] if b[2] == 0 else f"({names[b[1]]} >> {b[2]})"
    out = ["  // The constraints of the core parameters (spec/tpuemu.json core_params,",
           "  // docs/core-cache.md): 1 + the position of the first parameter whose value breaks",
           "  // its constraint, 0 when all hold. tpu_top refuses such values at elaboration; the",
           "  // host refuses them when a preset loads.",
           f"  localparam CoreParamNames = \"{' '.join(p['parameter'] for p in s.core_params)}\";",
           "  function automatic int unsigned core_param_violation("]
    out += [f"      int unsigned {n}{');' if i + 1 == len(names) else ','}" for i, n in enumerate(names)]
    for i, (p, b) in enumerate(zip(s.core_params, s.core_bounds)):
        n = p["name"]
        cond = [f"{n} >= {bound(b['min'])}", f"{n} <= {bound(b['max'])}"]
        if p.get("power_of_two"):
            cond.append(f"({n} & ({n} - 32'd1)) == 32'd0")
        if b["multiple_of"] != (1, -1, 0, "1"):
            cond.append(f"{n} % {bound(b['multiple_of'])} == 32'd0")
        # An else-if chain: a bound that divides is only evaluated once the earlier values hold.
        head = f"    {'if' if i == 0 else 'else if'} (!("
        out.append(head + f" &&\n{' ' * len(head)}".join(cond) + "))")
        out.append(f"      core_param_violation = {i + 1};")
    out += ["    else core_param_violation = 0;", "  endfunction", ""]
    return out


def gen_sv_hbm(s):
    h, v = s.hbm, s.hbm_values
    out = ["// GENERATED by spec/gen_spec.py from spec/tpuemu.json: do not edit.",
           "// The HBM controller's package: the contract's types (docs/hbm.md, docs/contract.md), then the controller's own (rtl/include/hbm_ctrl_items.svh).",
           "// Not every constant of the contract is used by every design that imports it.",
           "/* verilator lint_off UNUSEDPARAM */",
           "package hbm_spec_pkg;", ""]
    out.append(f"  localparam int unsigned BurstBytes = {v['burst_bytes']};")
    out.append(f"  localparam int unsigned IdW        = {v['id_width']};")
    out.append(f"  localparam int unsigned RowW       = {v['row_width']};")
    out.append(f"  localparam int unsigned ColW       = {v['col_width']};")
    out.append(f"  localparam int unsigned TimW       = {v['timing_width']};")
    out.append(f"  localparam int unsigned NumTimings = {len(h['timings']) + 1};")
    out.append(f"  localparam int unsigned QueueSlots = {v['queue_slots']};  // request slots per channel queue")
    out.append(f"  localparam int unsigned StarveCycles = {v['starve_cycles']};  // the starvation guard")
    out.append(f"  localparam int unsigned NumStats   = {len(h['stats'])};")
    out.append("  localparam int unsigned StatW      = 64;")
    out.append("")
    names = [t["name"] for t in h["timings"]] + ["BL"] + [q["name"] for q in h["queue_params"]]
    out.append("  // Timing set: the timings in tCK, then the controller's queue sizes (entries). Field k of")
    out.append("  // " + ", ".join(names))
    out.append("  // sits in bits [TimW*k +: TimW] (the first in the least significant bits).")
    out.append("  typedef struct packed {")
    for k in reversed(range(len(names))):
        out.append(f"    logic [TimW-1:0] {sv_timing_name(names[k])};  // {k}")
    out += ["  } timing_t;", ""]
    out.append("  // Per-channel statistics; counter k sits in bits [StatW*k +: StatW].")
    out.append("  typedef struct packed {")
    for k in reversed(range(len(h["stats"]))):
        st = h["stats"][k]
        out.append(f"    logic [StatW-1:0] {st['name']};  // {k}: {st['doc']}")
    out += ["  } stats_t;", ""]
    out.append("  // Address-field codes of a custom order.")
    for f in h["address_fields"]:
        out.append(f"  localparam logic [2:0] Field{camel(f['name'])} = 3'd{f['code']};  // {f['doc']}")
    out.append("")
    items = [("Amap" + "".join(camel(p) for p in m["order"].split("-")), m["code"])
             for m in h["address_maps"]]
    items.append(("AmapCustom", v["address_map_custom_code"]))
    out += sv_enum("amap_order_e", 8, items, "Address-map orders, most significant field first.")
    out.append("")
    out.append("  // Index k of each statistic in stats_t (bits [StatW*k +: StatW]).")
    for k, st in enumerate(h["stats"]):
        out.append(f"  localparam int unsigned Stat{camel(st['name'])} = {k};")
    out.append("")
    maps = h["address_maps"]
    # Names inside package functions are package-qualified: Yosys resolves them where the
    # function is called, outside the package.
    codes = {f["name"]: "hbm_spec_pkg::Field" + camel(f["name"]) for f in h["address_fields"]}
    default = maps[0]
    out.append("  // The field codes of a named order, least significant field first; any other order code")
    out.append(f"  // gets those of the first, \"{default['order']}\".")
    out.append("  function automatic logic [14:0] amap_named_codes(amap_order_e order);")
    out.append("    unique case (order)")
    for m, (ident_, _) in zip(maps[1:], items[1:]):
        out.append(f"      hbm_spec_pkg::{ident_}: amap_named_codes = {{{', '.join(codes[f] for f in m['order'].split('-'))}}};")
    out.append(f"      default: amap_named_codes = {{{', '.join(codes[f] for f in default['order'].split('-'))}}};")
    out += ["    endcase", "  endfunction", ""]
    out.append("  function automatic logic amap_order_named(amap_order_e order);")
    # An OR of compares rather than `inside`, which Yosys does not parse.
    out.append(f"    amap_order_named = {' || '.join(f'order == hbm_spec_pkg::{i}' for i, _ in items[:-1])};")
    out.append("  endfunction")
    out.append("")
    out += sv_derived(s)
    out.append("  // The controller's own types and functions (hand-written, rtl/include).")
    out.append('  `include "hbm_ctrl_items.svh"')
    out += ["", "endpackage", "/* verilator lint_on UNUSEDPARAM */", ""]
    return "\n".join(out)


def sv_derived(s):
    """derived_t and derive_timings(): the contract's derived distances of a timing_t."""
    ds = s.hbm["derived_timings"]
    timings = {t["name"] for t in s.hbm["timings"]} | {"BL"}
    out = ["  // Derived timing distances in tCK (spec/tpuemu.json \"derived_timings\"; a difference",
           "  // below zero is 0). Field k of the table sits in bits [TimW*k +: TimW].",
           "  typedef struct packed {"]
    for k in reversed(range(len(ds))):
        out.append(f"    logic [TimW-1:0] {sv_timing_name(ds[k]['name'])};  // {ds[k]['expr']}: {ds[k]['doc']}")
    out += ["  } derived_t;", ""]
    out.append("  // Not every timing enters a distance.")
    out.append("  /* verilator lint_off UNUSEDSIGNAL */")
    out.append("  function automatic derived_t derive_timings(timing_t t);")
    out.append("    derived_t d;")
    w = "hbm_spec_pkg::TimW"
    sv = {"name": lambda n: ("t." if n in timings else "d.") + sv_timing_name(n), "num": lambda v: f"{w}'({v})",
          "shr": lambda a, k: f"{a} >> {k}", "sub": lambda a, b: f"({a} > {b}) ? ({a} - {b}) : '0",
          "max": lambda a, b: f"({a} > {b}) ? {a} : {b}"}
    out += [f"    d.{sv_timing_name(d['name'])} = {text};" for d, text in derived_texts(s, sv)]
    out += ["    derive_timings = d;", "  endfunction", "  /* verilator lint_on UNUSEDSIGNAL */", ""]
    return out


def cpp_derived(s):
    """DerivedTimings, the table of expressions and derive_timings() for the C++ view."""
    ds = s.hbm["derived_timings"]
    timings = {t["name"] for t in s.hbm["timings"]} | {"BL"}
    o = ["// Derived timing distances in tCK (spec/tpuemu.json \"derived_timings\"): each an expression",
         "// over the timings, BL and earlier distances; a difference below zero is 0.",
         "struct DerivedTimings {"]
    for d in ds:
        o.append(f"  std::uint32_t {d['name']} = 0;  // {d['expr']}: {d['doc']}")
    o.append("};")
    o.append("struct DerivedTiming { std::string_view name, expr, doc; };")
    o.append(f"inline constexpr std::array<DerivedTiming, {len(ds)}> kDerivedTimings{{{{")
    for d in ds:
        o.append(f"    {{{cstr(d['name'])}, {cstr(d['expr'])}, {cstr(d['doc'])}}},")
    o.append("}};")
    o.append("// Index of each derived distance in kDerivedTimings.")
    o.append("namespace derived {")
    for i, d in enumerate(ds):
        o.append(f"inline constexpr std::uint32_t {d['name']} = {i}u;")
    o.append("}  // namespace derived")
    o.append("// The distances of a timing set: `t` has every timing of the contract as a member")
    o.append("// (sim::dram::Config does), BL is the burst length.")
    o.append("template <class Timings>")
    o.append("constexpr DerivedTimings derive_timings(const Timings& t, std::uint32_t BL) {")
    o.append("  const auto sub = [](std::uint32_t a, std::uint32_t b) { return a > b ? a - b : 0u; };")
    o.append("  const auto max = [](std::uint32_t a, std::uint32_t b) { return a > b ? a : b; };")
    o.append("  DerivedTimings d{};")
    cpp = {"name": lambda n: "BL" if n == "BL" else (f"static_cast<std::uint32_t>(t.{n})" if n in timings else f"d.{n}"),
           "num": lambda v: f"{v}u", "shr": lambda a, k: f"{a} / {1 << k}u", "sub": lambda a, b: f"sub({a}, {b})",
           "max": lambda a, b: f"max({a}, {b})"}
    o += [f"  d.{d['name']} = {text};" for d, text in derived_texts(s, cpp)]
    o += ["  return d;", "}"]
    return o


def hv_doc(h, key):
    return h[key]["doc"]


def sv_timing_name(name):
    """tRRD_S -> t_rrd_s, CL -> cl, BL -> bl."""
    return ("t_" + name[1:] if name.startswith("t") else name).lower()


# ---------------------------------------------------------------------------------------------
# C (firmware)
# ---------------------------------------------------------------------------------------------
def gen_c(s):
    c = s.core
    out = ["/* GENERATED by spec/gen_spec.py from spec/tpuemu.json: do not edit.",
           " * CSR map, error codes and sizes of the tpuemu core as the firmware sees it",
           " * (docs/isa.md, docs/contract.md). */",
           "#ifndef TPUEMU_FW_CSR_H", "#define TPUEMU_FW_CSR_H", ""]
    for r in s.csrs:
        n, addr = r["name"], num(r["addr"], "")
        if "count" not in r:
            out.append(f"#define FW_CSR_{n} 0x{addr:03X}u")
        elif r["stride"] == 8:
            out.append(f"#define FW_CSR_{n}_LO(j) (0x{addr:03X}u + 8u * (j))")
            out.append(f"#define FW_CSR_{n}_HI(j) (0x{addr + 4:03X}u + 8u * (j))")
        else:
            out.append(f"#define FW_CSR_{n}(i) (0x{addr:03X}u + {r['stride']}u * (i))")
    out.append("")
    for r in s.csrs:
        for f in r.get("fields", []):
            m = f"FW_{r['name']}_{f['name'].upper()}"
            mask = (1 << f["width"]) - 1
            if f["width"] == 1:
                out.append(f"#define {m} 0x{1 << f['lsb']:X}u")
            else:
                out.append(f"#define {m}(r) (((r) >> {f['lsb']}) & 0x{mask:X}u)")
                out.append(f"#define {m}_PUT(v) (((v) & 0x{mask:X}u) << {f['lsb']})")
    out.append("")
    out.append(f"#define FW_ID_VALUE 0x{c['id_value']:08X}u")
    for e in s.errors:
        out.append(f"#define FW_ERR_{e['name'].upper()} {e['code']}u")
    out.append(f"#define FW_NUM_SEMS {c['num_sems']}u")
    out.append(f"#define FW_SEM_WIDTH {c['sem_width']}u")
    out.append(f"#define FW_NUM_COUNTERS {c['num_counters']}u")
    for j, k in enumerate(s.counters):
        out.append(f"#define FW_COUNTER_{k['name'].upper()} {j}u")
    out.append(f"#define FW_PROG_ALIGN {c['prog_align']}u")
    out += ["", "#endif /* TPUEMU_FW_CSR_H */", ""]
    return "\n".join(out)


# ---------------------------------------------------------------------------------------------
# C++ (host)
# ---------------------------------------------------------------------------------------------
def cstr(text):
    return json.dumps(text, ensure_ascii=False)


def cpp_core_params(s):
    n = len(s.core_params)
    o = ["// The parameters of tpu_top a preset sets and the values the RTL is built for",
         "// (core_params): tpu_pkg::core_param_violation refuses others at elaboration, the",
         "// preset check at load, both generated from the same table.",
         "namespace core_params {",
         "// A bound: `constant`, or the value of the earlier parameter `of` shifted right by",
         "// `shift`.",
         "struct Bound {",
         "  std::uint64_t constant;", "  int of;", "  std::uint32_t shift;",
         "  std::string_view text;  // as the contract writes it: \"8\", \"dim/4\"",
         "  constexpr std::uint64_t value(std::span<const std::uint64_t> values) const {",
         "    return of < 0 ? constant : values[static_cast<std::size_t>(of)] >> shift;", "  }",
         "};",
         "struct Param {",
         "  std::string_view name;       // the preset's field, \"vmem_banks\"",
         "  std::string_view parameter;  // tpu_top's parameter, \"VmemBanks\"",
         "  bool power_of_two;", "  Bound min;", "  Bound max;",
         "  Bound multiple_of;  // 1: any",
         "  std::string_view doc;", "  std::string_view why;  // the RTL's reason",
         "  // Whether `value` is one the RTL is built for, given the values of the parameters",
         "  // before this one (tpu_pkg::core_param_violation's test).",
         "  constexpr bool holds(std::uint64_t v, std::span<const std::uint64_t> values) const {",
         "    const std::uint64_t m = multiple_of.value(values);",
         "    return v >= min.value(values) && v <= max.value(values) &&",
         "           (!power_of_two || (v & (v - 1)) == 0) && (m == 0 || v % m == 0);",
         "  }",
         "};"]

    def bound(b):
        return f"{{{b[0]}u, {b[1]}, {b[2]}u, {cstr(b[3])}}}"
    o.append(f"inline constexpr std::array<Param, {n}> kParams{{{{")
    for p, b in zip(s.core_params, s.core_bounds):
        o.append(f"    {{{cstr(p['name'])}, {cstr(p['parameter'])}, "
                 f"{'true' if p.get('power_of_two') else 'false'}, {bound(b['min'])}, "
                 f"{bound(b['max'])}, {bound(b['multiple_of'])},")
        o.append(f"     {cstr(p['doc'])},")
        o.append(f"     {cstr(p['why'])}}},")
    o += ["}};", "}  // namespace core_params", ""]
    return o


def gen_cpp(s):
    c, h, hv = s.core, s.hbm, s.hbm_values
    o = ["// GENERATED by spec/gen_spec.py from spec/tpuemu.json: do not edit.",
         "// The hardware/software contract as C++ constants, tables and X-macros (docs/contract.md).",
         "#pragma once", "", "#include <array>", "#include <cstdint>", "#include <span>",
         "#include <string_view>", "", "namespace tpuemu::spec {", ""]
    o += ["// A bit field of a 32-bit register.",
          "struct BitField {",
          "  std::uint32_t lsb;", "  std::uint32_t width;",
          "  constexpr std::uint32_t mask() const { return width >= 32 ? ~0u : (1u << width) - 1; }",
          "  constexpr std::uint32_t get(std::uint32_t reg) const { return (reg >> lsb) & mask(); }",
          "  constexpr std::uint32_t put(std::uint32_t value) const { return (value & mask()) << lsb; }",
          "};", "",
          "// A field of an instruction: bits [lsb, lsb+width) of 32-bit word `word`.",
          "struct InstrField {",
          "  std::string_view name;", "  std::uint32_t word;", "  BitField bits;",
          "  constexpr std::uint32_t get(std::span<const std::uint32_t> words) const {",
          "    return bits.get(words[word]);", "  }",
          "  constexpr void put(std::span<std::uint32_t> words, std::uint32_t value) const {",
          "    words[word] |= bits.put(value);", "  }",
          "  // The bits of word `word` this field occupies.",
          "  constexpr std::uint32_t mask() const { return bits.put(~0u); }",
          "};", ""]
    for key in ("id_value", "num_sems", "sem_width", "instr_width", "addr_width",
                "csr_addr_width", "prog_align", "mxu_latency_per_dim", "weight_banks",
                "local_stride_bits", "num_counters"):
        o.append(f"inline constexpr std::uint32_t k{camel(key)} = {c[key]}u;")
    o.append(f"inline constexpr std::uint32_t kInstrWords = {c['instr_width'] // 32}u;")
    o.append("")
    o += cpp_core_params(s)
    # CSRs
    o.append("namespace csr {")
    for r in s.csrs:
        n, addr = camel(r["name"].lower()), num(r["addr"], "")
        o.append(f"inline constexpr std::uint32_t k{n} = 0x{addr:03X}u;  // {r['doc']}")
        if "count" in r:
            o.append(f"inline constexpr std::uint32_t k{n}Stride = {r['stride']}u;")
            o.append(f"inline constexpr std::uint32_t k{n}Count = {s.csr_count(r)}u;")
    o.append("constexpr std::uint32_t sem(std::uint32_t i) { return kSem + kSemStride * i; }")
    o.append("constexpr std::uint32_t counter_lo(std::uint32_t j) { return kCounter + kCounterStride * j; }")
    o.append("constexpr std::uint32_t counter_hi(std::uint32_t j) { return counter_lo(j) + 4; }")
    for r in s.csrs:
        if r.get("fields"):
            o.append(f"namespace {r['name'].lower()} {{")
            for f in r["fields"]:
                o.append(f"inline constexpr BitField {f['name']}{{{f['lsb']}, {f['width']}}};  // {f['doc']}")
            o.append("}")
    o.append("struct Info {")
    o.append("  std::string_view name; std::uint32_t addr; std::string_view access;")
    o.append("  std::uint32_t count; std::uint32_t stride; std::string_view doc;")
    o.append("};")
    o.append(f"inline constexpr std::array<Info, {len(s.csrs)}> kAll{{{{")
    for r in s.csrs:
        o.append(f"    {{{cstr(r['name'])}, 0x{num(r['addr'], ''):03X}u, {cstr(r['access'])}, "
                 f"{s.csr_count(r)}u, {r.get('stride', 4)}u, {cstr(r['doc'])}}},")
    o.append("}};")
    o += ["}  // namespace csr", ""]
    # Counters, errors, queues, paths
    o.append("// X(index, name, doc) for every performance counter, in CSR order.")
    o.append("#define TPUEMU_SPEC_COUNTERS(X) \\")
    for j, k in enumerate(s.counters):
        o.append(f"  X({j}, {k['name']}, {cstr(k['doc'])}){' ' + chr(92) if j + 1 < len(s.counters) else ''}")
    o.append("// Index j of each counter: COUNTER[j].")
    o.append("namespace counter {")
    for j, k in enumerate(s.counters):
        o.append(f"inline constexpr std::uint32_t {k['name']} = {j}u;")
    o.append("}  // namespace counter")
    o.append("")
    for name, items, enum_t, doc in (("ErrorCode", s.errors, "std::uint8_t", "Error codes (STATUS.error_code)."),
                                     ("Queue", s.queues, "std::uint8_t", "Instruction queues (the opcode's high nibble)."),
                                     ("DmaPath", s.dma_paths, "std::uint8_t", "DMA paths (the DMA path field).")):
        o.append(f"// {doc}")
        o.append(f"enum class {name} : {enum_t} {{")
        for it in items:
            o.append(f"  {camel(it['name'])} = {it['code']},")
        o.append("};")
        o.append(f"struct {name}Info {{ {name} value; std::string_view name; std::string_view doc; }};")
        o.append(f"inline constexpr std::array<{name}Info, {len(items)}> k{name}s{{{{")
        for it in items:
            o.append(f"    {{{name}::{camel(it['name'])}, {cstr(it['name'])}, {cstr(it.get('doc', ''))}}},")
        o.append("}};")
        o.append("")
    # Opcodes and instruction fields
    o.append("enum class Opcode : std::uint8_t {")
    for op in s.opcodes:
        o.append(f"  {s.op_camel(op)} = 0x{num(op['code'], ''):02X},")
    o.append("};")
    o.append("struct OpcodeInfo {")
    o.append("  Opcode value; std::string_view name; Queue queue; std::span<const InstrField> fields;")
    o.append("  std::string_view doc;")
    o.append("};")
    o.append("namespace instr {")
    o.append("namespace header {")
    for f in s.header:
        o.append(f"inline constexpr InstrField {f['name']}{{{cstr(f['name'])}, 0, {{{f['lsb']}, {f['width']}}}}};")
    o.append(f"inline constexpr std::array<InstrField, {len(s.header)}> kFields{{{{"
             + ", ".join(f["name"] for f in s.header) + "}};")
    o.append("}  // namespace header")
    for op in s.opcodes:
        o.append(f"namespace {op['name']} {{")
        for f in op["fields"]:
            o.append(f"inline constexpr InstrField {f['name']}{{{cstr(f['name'])}, {f['word']}, {{{f['lsb']}, {f['width']}}}}};")
        o.append(f"inline constexpr std::array<InstrField, {len(op['fields'])}> kFields{{{{"
                 + ", ".join(f["name"] for f in op["fields"]) + "}};")
        o.append(f"}}  // namespace {op['name']}")
    o.append("}  // namespace instr")
    o.append(f"inline constexpr std::array<OpcodeInfo, {len(s.opcodes)}> kOpcodes{{{{")
    for op in s.opcodes:
        o.append(f"    {{Opcode::{s.op_camel(op)}, {cstr(op['name'])}, Queue::{camel(op['queue'])}, "
                 f"instr::{op['name']}::kFields, {cstr(op['doc'])}}},")
    o.append("}};")
    o.append("")
    # Trace port
    layout, total = s.trace_layout()
    o.append(f"// The instruction trace port of tpu_top (trace_o, tpu_pkg::trace_t): {s.trace['doc']}")
    o.append("namespace trace {")
    o.append(f"inline constexpr std::uint32_t kIndexWidth = {s.trace['index_width']}u;")
    o.append(f"inline constexpr std::uint32_t kWidth = {total}u;  // bits of trace_t")
    o.append("// One engine's fields: bit positions in trace_t.")
    o.append("struct Engine {")
    o.append("  std::string_view name; Queue queue; std::uint32_t done_ports;")
    o.append("  std::uint32_t issue, stall_sem, done, done_idx;  // done: port k at done + k; done_idx: port k at")
    o.append("                                                   // done_idx + k * kIndexWidth")
    o.append("};")
    o.append(f"inline constexpr std::array<Engine, {len(layout)}> kEngines{{{{")
    for e, base, f, _ in layout:
        o.append(f"    {{{cstr(e['name'])}, Queue::{camel(e['queue'])}, {e['done_ports']}u, {base + f['issue'][0]}u, "
                 f"{base + f['stall_sem'][0]}u, {base + f['done'][0]}u, {base + f['done_idx'][0]}u}},")
    o.append("}};")
    o.append("}  // namespace trace")
    o.append("")
    # HBM
    o.append("namespace hbm {")
    if hv["max_timing"] >= 1 << hv["timing_width"]:
        fail(s.path, f"hbm.max_timing {hv['max_timing']} does not fit in timing_width {hv['timing_width']} bits")
    for key in ("burst_bytes", "id_width", "row_width", "col_width", "bank_group_width",
                "bank_width", "timing_width", "max_timing", "address_map_custom_code", "starve_cycles"):
        o.append(f"inline constexpr std::uint32_t k{camel(key)} = {hv[key]}u;")
    o.append("// X(name, doc) for every timing field, in the order of the RTL's timing_t (BL follows).")
    o.append("#define TPUEMU_SPEC_HBM_TIMINGS(X) \\")
    for i, t in enumerate(h["timings"]):
        o.append(f"  X({t['name']}, {cstr(t['doc'])}){' ' + chr(92) if i + 1 < len(h['timings']) else ''}")
    o.append(f"inline constexpr std::uint32_t kNumTimings = {len(h['timings'])}u;")
    o.append(f"inline constexpr std::uint32_t kQueueSlots = {hv['queue_slots']}u;  // {hv_doc(h, 'queue_slots')}")
    o.append("// X(name, default, doc) for every queue size of the controller, in the order of timing_t (after BL).")
    o.append("#define TPUEMU_SPEC_HBM_QUEUE_PARAMS(X) \\")
    for i, q in enumerate(h["queue_params"]):
        o.append(f"  X({q['name']}, {q['default']}u, {cstr(q['doc'])}){' ' + chr(92) if i + 1 < len(h['queue_params']) else ''}")
    o.append(f"inline constexpr std::uint32_t kNumQueueParams = {len(h['queue_params'])}u;")
    o.append("inline constexpr std::array<std::string_view, kNumTimings> kTimingNames{{"
             + ", ".join(cstr(t["name"]) for t in h["timings"]) + "}};")
    names = [t["name"] for t in h["timings"]]
    o.append("// timings[field] (>= or >) the sum of timings[sum...]; indices into kTimingNames.")
    o.append("struct TimingConstraint {")
    max_terms = 4
    o.append(f"  std::uint32_t field; bool strict; std::array<std::int32_t, {max_terms}> sum; std::string_view doc;")
    o.append("};")
    cons = h["timing_constraints"]
    o.append(f"inline constexpr std::array<TimingConstraint, {len(cons)}> kTimingConstraints{{{{")
    for cc in cons:
        if len(cc["sum"]) > max_terms:
            fail(s.path, f"a timing constraint sums at most {max_terms} fields")
        terms = [names.index(n) for n in cc["sum"]] + [-1] * (max_terms - len(cc["sum"]))
        o.append(f"    {{{names.index(cc['field'])}u, {'true' if cc['op'] == '>' else 'false'}, "
                 f"{{{', '.join(str(t) for t in terms)}}}, {cstr(cc.get('doc', ''))}}},")
    o.append("}};")
    o += cpp_derived(s)
    o.append("// X(index, name, unit, doc) for every per-channel statistic of the controller.")
    o.append("#define TPUEMU_SPEC_HBM_STATS(X) \\")
    for i, st in enumerate(h["stats"]):
        o.append(f"  X({i}, {st['name']}, {cstr(st['unit'])}, {cstr(st['doc'])}){' ' + chr(92) if i + 1 < len(h['stats']) else ''}")
    o.append(f"inline constexpr std::uint32_t kNumStats = {len(h['stats'])}u;")
    o.append("// Index k of each statistic: bits [64k +: 64] of a channel's stats_t.")
    o.append("namespace stat {")
    for i, st in enumerate(h["stats"]):
        o.append(f"inline constexpr std::uint32_t {st['name']} = {i}u;")
    o.append("}  // namespace stat")
    fields = h["address_fields"]
    o.append("struct AddressField { std::string_view name; std::uint32_t code; std::string_view doc; };")
    o.append(f"inline constexpr std::array<AddressField, {len(fields)}> kAddressFields{{{{")
    for f in fields:
        o.append(f"    {{{cstr(f['name'])}, {f['code']}u, {cstr(f['doc'])}}},")
    o.append("}};")
    o.append("// The code of each address field (a custom order is five of them, least significant first).")
    o.append("namespace field {")
    for f in fields:
        o.append(f"inline constexpr std::uint8_t {f['name']} = {f['code']};  // {f['doc']}")
    o.append("}  // namespace field")
    o.append(f"inline constexpr std::uint32_t kNumAddressFields = {len(fields)}u;")
    o.append("// A named order: its text (most significant field first) and its field codes, least")
    o.append("// significant first.")
    o.append("struct AddressMap {")
    o.append("  std::string_view order; std::uint32_t code; std::string_view doc;")
    o.append("  std::array<std::uint8_t, kNumAddressFields> lsb_first;")
    o.append("};")
    code_of = {f["name"]: f["code"] for f in fields}
    o.append(f"inline constexpr std::array<AddressMap, {len(h['address_maps'])}> kAddressMaps{{{{")
    for m in h["address_maps"]:
        lsb = ", ".join(str(code_of[n]) for n in reversed(m["order"].split("-")))
        o.append(f"    {{{cstr(m['order'])}, {m['code']}u, {cstr(m['doc'])}, {{{lsb}}}}},")
    o.append("}};")
    o.append("// The order byte of the controller's amap_t (amap_order_e).")
    o.append("enum class AddressOrder : std::uint8_t {")
    for m in h["address_maps"]:
        o.append(f"  {''.join(camel(p) for p in m['order'].split('-'))} = {m['code']},")
    o.append(f"  Custom = {hv['address_map_custom_code']},")
    o.append("};")
    o.append("}  // namespace hbm")
    o += ["", "}  // namespace tpuemu::spec", ""]
    return "\n".join(o)


# ---------------------------------------------------------------------------------------------
# Documentation tables
# ---------------------------------------------------------------------------------------------
def md_bits(f):
    hi = f["lsb"] + f["width"] - 1
    return str(f["lsb"]) if f["width"] == 1 else f"{hi}:{f['lsb']}"


def bound_text(p, key):
    return f"`{p[key]}`" if isinstance(p[key], str) else str(p[key])


def doc_tables(s):
    t = {}
    rows = ["| field | tpu_top | values | meaning | why the RTL needs it |",
            "|---|---|---|---|---|"]
    for p in s.core_params:
        values = ("power of two " if p.get("power_of_two") else "") + \
            (f"multiple of {bound_text(p, 'multiple_of')} " if "multiple_of" in p else "") + \
            f"in [{bound_text(p, 'min')}, {bound_text(p, 'max')}]"
        rows.append(f"| `{p['name']}` | `{p['parameter']}` | {values} | {p['doc']} | {p['why']} |")
    t["core_params"] = rows
    rows = ["| addr | name | access | meaning |", "|---|---|---|---|"]
    for r in s.csrs:
        addr = num(r["addr"], "")
        a = f"0x{addr:03X}" if "count" not in r else f"0x{addr:03X}+{r['stride']}*i"
        meaning = r["doc"]
        if r.get("fields"):
            meaning += ": " + ", ".join(f"`[{md_bits(f)}]` {f['name']}" for f in r["fields"])
        if "count" in r:
            meaning += f" (i < {s.csr_count(r)})"
        rows.append(f"| {a} | {r['name']} | {r['access']} | {meaning} |")
    t["csrs"] = rows
    rows = ["| bits | field | meaning |", "|---|---|---|"]
    for f in s.header:
        rows.append(f"| {md_bits(f)} | `{f['name']}` | {f['doc']} |")
    t["header"] = rows
    rows = ["| opcode | name | queue | operands |", "|---|---|---|---|"]
    for op in s.opcodes:
        ops = "; ".join(f"`w{f['word']}[{md_bits(f)}]` {f['name']} ({f['doc']})" for f in op["fields"])
        rows.append(f"| {op['code']} | `{op['name'].upper().replace('_', '.')}` | {op['queue']} | "
                    f"{op['doc']}{': ' + ops if ops else ''} |")
    t["opcodes"] = rows
    rows = ["| code | path |", "|---|---|"] + [f"| {d['code']} | {d['doc']} |" for d in s.dma_paths]
    t["dma_paths"] = rows
    rows = ["| code | error |", "|---|---|"] + [f"| {e['code']} | {e['doc']} |" for e in s.errors]
    t["errors"] = rows
    rows = ["| j | counter | meaning |", "|---|---|---|"]
    rows += [f"| {j} | `{k['name']}` | {k['doc']} |" for j, k in enumerate(s.counters)]
    t["counters"] = rows
    rows = ["| field | meaning |", "|---|---|"] + [f"| `{x['name']}` | {x['doc']} |" for x in s.hbm["timings"]]
    t["hbm_timings"] = rows
    rows = ["| k | statistic | unit | meaning |", "|---|---|---|---|"]
    rows += [f"| {k} | `{x['name']}` | {x['unit']} | {x['doc']} |" for k, x in enumerate(s.hbm["stats"])]
    t["hbm_stats"] = rows
    rows = ["| distance | tCK | meaning |", "|---|---|---|"]
    rows += [f"| `{d['name']}` | `{d['expr']}` | {d['doc']} |" for d in s.hbm["derived_timings"]]
    t["hbm_derived"] = rows
    return {k: "\n".join(v) for k, v in t.items()}


MARK = re.compile(r"(<!-- spec:(\w+) -->\n)(.*?)(<!-- /spec -->)", re.S)


def update_doc(s, text, doc_path):
    tables = doc_tables(s)
    used = set()

    def repl(m):
        name = m.group(2)
        if name not in tables:
            fail(doc_path, f"unknown spec table '{name}' (known: {', '.join(sorted(tables))})")
        used.add(name)
        return m.group(1) + tables[name] + "\n" + m.group(4)
    return MARK.sub(repl, text)


# ---------------------------------------------------------------------------------------------
def write_if_changed(path, text):
    try:
        with open(path, encoding="utf-8") as f:
            if f.read() == text:
                return
    except OSError:
        pass
    d = os.path.dirname(os.path.abspath(path))
    os.makedirs(d, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=d, prefix=".gen-")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("spec")
    ap.add_argument("--sv-core")
    ap.add_argument("--sv-hbm")
    ap.add_argument("--c")
    ap.add_argument("--cpp")
    ap.add_argument("--docs", action="append", default=[])
    ap.add_argument("--check", action="store_true", help="with --docs: compare, do not write")
    a = ap.parse_args(argv)
    try:
        s = Spec(a.spec)
        for path, gen in ((a.sv_core, gen_sv_core), (a.sv_hbm, gen_sv_hbm), (a.c, gen_c),
                          (a.cpp, gen_cpp)):
            if path:
                write_if_changed(path, gen(s))
        for doc in a.docs:
            with open(doc, encoding="utf-8") as f:
                text = f.read()
            new = update_doc(s, text, doc)
            if a.check:
                if new != text:
                    for i, (x, y) in enumerate(zip(text.splitlines(), new.splitlines()), 1):
                        if x != y:
                            fail(f"{doc}:{i}", "table differs from spec/tpuemu.json (run spec/gen_spec.py "
                                               f"{a.spec} --docs {doc})")
                    fail(doc, "tables differ from spec/tpuemu.json in length")
            elif new != text:
                write_if_changed(doc, new)
    except SpecError as e:
        print(f"gen_spec: {e}", file=sys.stderr)
        return 1
    except (KeyError, TypeError) as e:
        print(f"gen_spec: {a.spec}: missing or mistyped entry {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
