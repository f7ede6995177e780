#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Gives a netlist written by scripts/synth/gate_netlist.sh one gate that a run can break, for the
gate-level equivalence tests' must-fail half: the first two-input XOR gate (`assign y = a ^ b;`,
the sum bit of an adder or a bit of a comparator) becomes `a ^ b ^ gate_break`, and gate_break is
set once at the start of the run from WHEN, a SystemVerilog function call that is non-zero to
break it ($test$plusargs("gate-break"), or $fopen of a file that exists). With gate_break 0 the netlist is the one Yosys wrote; with 1 that gate is an XNOR. One
build serves both runs (a gate-level model takes minutes to compile).

    break_gate.py IN.v OUT.v MODULE WHEN [REGISTERS]

With REGISTERS (register names of the netlist, comma separated: a counter keeps its RTL name in a
netlist of cells and is named after the output it drives in one of gates, so cnt_q,stats_o), the
gate is the first XOR gate or adder with an operand of one of them, if there is one: a gate whose
change must show at the outputs, where the first gate of the netlist may sit on a path the run
never exercises (in a 64-slot HBM channel it does: its first adder changes nothing the trace
shows)."""
import re
import sys


def main():
    src, dst, module, when = sys.argv[1:5]
    registers = sys.argv[5].split(",") if len(sys.argv) > 5 else []
    text = open(src).read()
    # An operand: a plain name or an escaped one (a backslash, up to a space), with a bit select.
    operand = r"(?:\\\S+\s|[^\s();~^+\\]+)(?:\s*\[[0-9:]+\])?"
    m = None
    if registers:
        names = "|".join(re.escape(r) for r in registers)
        reg = rf"\\?(?:{names})(?:\[[0-9]+\])?\s*(?:\[[0-9:]+\])?"
        for op, what in (("^", "an XNOR"), ("+", "an adder that adds one more")):
            m = re.search(rf"^(\s*assign\s+\S+\s*=\s*)({reg}\s*\{op}\s*{operand})\s*;", text, re.M)
            if m:
                break
    if not m:
        for op, what in (("^", "an XNOR"), ("+", "an adder that adds one more")):
            m = re.search(rf"^(\s*assign\s+\S+\s*=\s*)([^\s();~^+]+\s*\{op}\s*[^\s();~^+]+)\s*;", text, re.M)
            if m:
                break
    if not m:
        sys.exit(f"break_gate: no XOR gate and no adder in {src}")
    print(f"break_gate: '{m.group(0).strip()}' becomes {what} when {when}")
    text = text[:m.start()] + m.group(1) + m.group(2) + f" {op} gate_break;" + text[m.end():]
    head = re.search(rf"^module {re.escape(module)}\(.*?\);\n", text, re.M | re.S)
    if not head:
        sys.exit(f"break_gate: no module {module} in {src}")
    decl = (f"  reg gate_break;\n  integer gate_when;\n"
            f"  initial begin\n    gate_when = {when};\n    gate_break = gate_when != 0;\n  end\n")
    open(dst, "w").write(text[:head.end()] + decl + text[head.end():])


if __name__ == "__main__":
    main()
