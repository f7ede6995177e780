#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Resource report of a scripts/synth.sh run: reads Yosys's `stat -json` of each synthesized top
(WORK/stat_synth_core.json, WORK/stat_synth_hbm.json, or WORK/stat_synth_board.json with the
parts synthesized out of context, WORK/stat_part_*.json), sums every
module's cells through the hierarchy, checks that each on-chip memory (sram_1w1r) became block
RAM, and writes OUT.json and OUT.md (both or neither).

    synth_report.py WORK PRESET FAMILY OUT

Rows are the modules the core (tpu_top) and the controller (hbm_ctrl) instantiate, each with the
resources of its whole subtree, plus the top's own logic and the total. The whole board top
(tpu_board_top) is reported as a tree (the core's modules, the memory system down to one channel
controller) and against the resources of a Virtex UltraScale+ VU9P; it fails, after writing the
report, when the board takes half of the VU9P's LUTs or more."""
import json
import os
import pathlib
import re
import sys

# Cell types per resource class; I/O buffers and clock buffers are not counted.
CLASSES = {
    "xc7": {"lut": r"LUT[1-6](_2)?", "ff": r"FD[CPRS]E", "dsp": r"DSP48E1", "bram36": r"RAMB36E1",
            "bram18": r"RAMB18E1", "lutram": r"RAM(32|64|128|256)(M|X1[SD])\w*", "carry": r"CARRY4",
            "muxf": r"MUXF[78]"},
    "xcu": {"lut": r"LUT[1-6](_2)?", "ff": r"FD[CPRS]E", "dsp": r"DSP48E2", "bram36": r"RAMB36E2",
            "bram18": r"RAMB18E2", "lutram": r"RAM(32|64|128|256|512)(M16|M8|M|X1[SD])\w*",
            "carry": r"CARRY8", "muxf": r"MUXF[789]"},
    "ice40": {"lut": r"SB_LUT4", "ff": r"SB_DFF\w*", "dsp": r"SB_MAC16", "bram4k": r"SB_RAM40_4K",
              "carry": r"SB_CARRY"},
}
IGNORED = r"(I|O|IO)BUF\w*|BUFG\w*|SB_IO\w*|SB_GB\w*|INV|VCC|GND|\$scopeinfo"
for _fam in ("xc7", "xcu"):
    CLASSES[_fam]["srl"] = r"SRL(16E|C32E)"  # a shift register in one LUT
    CLASSES[_fam]["latch"] = r"LD[CP]E"
# LUT sites a distributed RAM primitive occupies (LUT utilisation counts them, as Vivado's does)
LUTRAM_SITES = {"RAM32X1S": 1, "RAM32X1D": 2, "RAM64X1S": 1, "RAM64X1D": 2, "RAM128X1S": 2,
                "RAM128X1D": 4, "RAM256X1S": 4, "RAM256X1D": 8, "RAM512X1S": 8, "RAM32M": 4,
                "RAM64M": 4, "RAM32M16": 8, "RAM64M8": 8}
# The FPGA of the cloud instances FPGA-accelerated simulators run on (AWS F1): Virtex UltraScale+ VU9P
VU9P = {"lut": 1182240, "ff": 2364480, "bram36": 2160, "dsp": 6840}
MAX_LUT_SHARE = 0.5  # the board must fit with room


def base_name(module):
    """'$paramod$<hash>\\sram_1w1r' / '$paramod\\leaf\\W=..' / '\\top' -> 'sram_1w1r' / 'leaf' / 'top'
    (and so for a part's module, named 'PART|module' when merged, load_board)."""
    m = module.split("|", 1)[-1].lstrip("\\")
    if m.startswith("$paramod"):
        return m.split("\\")[1]
    return m


def classify(cell, family):
    for cls, pat in CLASSES[family].items():
        if re.fullmatch(pat, cell):
            return cls
    if re.fullmatch(IGNORED, cell):
        return None
    return "other"


def module_of(cell, modules):
    """The key in `modules` of the module a cell instantiates, or None for a primitive (Yosys
    names a plain module's instances without the leading backslash of its key)."""
    for key in (cell, "\\" + cell):
        if key in modules:
            return key
    return None


class Design:
    def __init__(self, stat, family):
        self.family = family
        self.modules = stat["modules"]
        self.memo = {}

    def module_of(self, cell):
        return module_of(cell, self.modules)

    def own(self, module):
        res, children = {}, {}
        for cell, n in self.modules[module]["num_cells_by_type"].items():
            sub = self.module_of(cell)
            if sub is not None:
                children[sub] = children.get(sub, 0) + n
                continue
            if cell.startswith("$paramod"):
                sys.exit(f"synth: no netlist of module {cell} (a black box no part run synthesized)")
            cls = classify(cell, self.family)
            if cls == "lutram":
                sites = LUTRAM_SITES.get(re.sub(r"_\d+$", "", cell))
                if sites is None:
                    sys.exit(f"synth: unknown LUT RAM primitive {cell}: add its LUT sites to LUTRAM_SITES")
                res["lutram_luts"] = res.get("lutram_luts", 0) + n * sites
            if cls is not None:
                res[cls] = res.get(cls, 0) + n
                if cls == "other":
                    res.setdefault("other_types", set()).add(cell)
        return res, children

    def total(self, module):
        if module not in self.memo:
            res, children = self.own(module)
            res = {k: (set(v) if isinstance(v, set) else v) for k, v in res.items()}
            for child, n in children.items():
                for k, v in self.total(child).items():
                    if isinstance(v, set):
                        res.setdefault(k, set()).update(v)
                    else:
                        res[k] = res.get(k, 0) + n * v
            self.memo[module] = res
        return self.memo[module]

    def find(self, base):
        hits = [m for m in self.modules if base_name(m) == base]
        if len(hits) != 1:
            sys.exit(f"synth: expected one module {base} in the netlist, found {len(hits)}")
        return hits[0]


def bram36(res, family):
    if family == "ice40":
        return res.get("bram4k", 0) * 4096 / 36864
    return res.get("bram36", 0) + res.get("bram18", 0) / 2


def row(name, count, res, family):
    r = {"module": name, "instances": count, "lut": res.get("lut", 0), "ff": res.get("ff", 0),
         "dsp": res.get("dsp", 0), "lutram": res.get("lutram", 0), "carry": res.get("carry", 0)}
    for extra in ("lutram_luts", "srl", "latch"):
        if res.get(extra):
            r[extra] = res[extra]
    if family == "ice40":
        r["bram_4k"] = res.get("bram4k", 0)
    else:
        r["bram36"] = res.get("bram36", 0)
        r["bram18"] = res.get("bram18", 0)
    r["bram36_equiv"] = round(bram36(res, family), 2)
    if res.get("other"):
        r["other"] = res["other"]
        r["other_types"] = sorted(res["other_types"])
    return r


def report_top(design, top_base, family):
    """Rows for the children of top_base (grouped by module name), its own logic, its total."""
    top = design.find(top_base)
    own, children = design.own(top)
    groups = {}
    for child, n in children.items():
        g = groups.setdefault(base_name(child), {"count": 0, "res": {}})
        g["count"] += n
        for k, v in design.total(child).items():
            if isinstance(v, set):
                g["res"].setdefault(k, set()).update(v)
            else:
                g["res"][k] = g["res"].get(k, 0) + n * v
    rows = [row(name, g["count"], g["res"], family) for name, g in sorted(groups.items())]
    rows.append(row(f"{top_base} (own logic)", 1, own, family))
    rows.append(row("total", 1, design.total(top), family))
    return rows


def report_tree(design, top_base, family, deep=("hbm_board_memsys",), depth=2, deep_depth=5):
    """Rows for the modules under top_base as a tree: each row is a module (grouped by name under
    its parent, with the instances of all its parents) and its whole subtree, named by its path.
    Modules are listed down to `depth` levels, and under a module named in `deep` down to
    `deep_depth`; a module with submodules also gets a row for its own logic."""
    rows = []

    def walk(module, path, mult, level, limit):
        own, children = design.own(module)
        groups = {}
        for child, n in children.items():
            groups.setdefault(base_name(child), []).append((child, n))
        if own.get("lut", 0) or own.get("ff", 0) or own.get("lutram", 0):
            if path != top_base or children:
                res = {k: (mult * v if not isinstance(v, set) else v) for k, v in own.items()}
                rows.append(row(f"{path} (own logic)", mult, res, family))
        for name in sorted(groups):
            res, count = {}, 0
            for child, n in groups[name]:
                count += n
                for k, v in design.total(child).items():
                    if isinstance(v, set):
                        res.setdefault(k, set()).update(v)
                    else:
                        res[k] = res.get(k, 0) + mult * n * v
            child_path = f"{path} / {name}"
            rows.append(row(child_path, mult * count, res, family))
            child_limit = deep_depth if name in deep else limit
            if level + 1 < child_limit:
                for child, n in groups[name]:
                    walk(child, child_path, mult * n, level + 1, child_limit)

    walk(design.find(top_base), top_base, 1, 0, depth)
    rows.append(row("total", 1, design.total(design.find(top_base)), family))
    return rows


def utilisation(total):
    """The board's share of each VU9P resource (LUT RAM and shift registers count as LUTs)."""
    used = {"lut": total["lut"] + total.get("lutram_luts", 0) + total.get("srl", 0),
            "ff": total["ff"], "bram36": total["bram36_equiv"], "dsp": total["dsp"]}
    return {k: {"used": used[k], "available": VU9P[k], "percent": round(100 * used[k] / VU9P[k], 2)}
            for k in VU9P}


def report_inside(design, top_base, family):
    """Per instance of each module under top_base that has submodules: its submodules and its own
    logic (one level down, so that a large module's LUTs are attributed)."""
    rows = []
    _, children = design.own(design.find(top_base))
    for child in sorted(children, key=base_name):
        own, grand = design.own(child)
        if not grand:
            continue
        for g, n in sorted(grand.items(), key=lambda kv: base_name(kv[0])):
            res = {k: (n * v if not isinstance(v, set) else v) for k, v in design.total(g).items()}
            rows.append(row(f"{base_name(child)} / {base_name(g)}", n, res, family))
        rows.append(row(f"{base_name(child)} (own logic)", 1, own, family))
    return rows


def check_memories(design, family):
    """Every sram_1w1r must be block RAM and nothing else: returns (rows, failures)."""
    rows, failures = [], []
    parents = {}
    for m, st in design.modules.items():
        for cell, n in st["num_cells_by_type"].items():
            sub = design.module_of(cell)
            if sub is not None and base_name(sub) == "sram_1w1r":
                parents.setdefault(sub, {})[base_name(m)] = n
    for m in sorted(parents, key=lambda k: sorted(parents[k])):
        res = design.total(m)
        used = ",".join(sorted(parents[m]))
        blocks = res.get("bram4k", 0) if family == "ice40" else res.get("bram36", 0) + res.get("bram18", 0)
        rows.append({"memory_of": used, "instances": sum(parents[m].values()),
                     "bram36_equiv": round(bram36(res, family), 2),
                     "lutram": res.get("lutram", 0), "ff": res.get("ff", 0)})
        if blocks == 0 or res.get("lutram", 0):
            failures.append(f"a memory of {used} is not block RAM ({blocks} block RAMs, "
                            f"{res.get('lutram', 0)} LUT RAMs, {res.get('ff', 0)} FFs)")
    if not parents:
        failures.append("no sram_1w1r in the netlist")
    return rows, failures


def markdown(result):
    fam = result["family"]
    bram_cols = ["bram_4k"] if fam == "ice40" else ["bram36", "bram18"]
    cols = ["module", "instances", "lut", "ff", "dsp"] + bram_cols + ["bram36_equiv", "lutram", "carry"]
    out = [f"# Synthesis of preset `{result['preset']}` for {fam} ({result['yosys']})", ""]
    for top, rows in result["tops"].items():
        out += [f"## {top}", "", "| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
        for r in rows:
            out.append("| " + " | ".join(str(r.get(c, 0)) for c in cols) + " |")
        out.append("")
    if "vu9p" in result:
        out += [f"## Against a Virtex UltraScale+ VU9P ({fam} cells)", "",
                "| resource | used | VU9P | share |", "|---|---|---|---|"]
        for k, u in result["vu9p"].items():
            out.append(f"| {k} | {u['used']} | {u['available']} | {u['percent']} % |")
        out.append("")
    for top, rows in result.get("inside", {}).items():
        out += [f"## Inside the modules of {top} (one instance each)", "",
                "| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
        for r in rows:
            out.append("| " + " | ".join(str(r.get(c, 0)) for c in cols) + " |")
        out.append("")
    out += ["## On-chip memories (sram_1w1r, each instance)", "",
            "| memory of | instances in it | BRAM36 equivalent | LUT RAM | FF |", "|---|---|---|---|---|"]
    for m in result["memories"]:
        out.append(f"| {m['memory_of']} | {m['instances']} | {m['bram36_equiv']} | {m['lutram']} | {m['ff']} |")
    return "\n".join(out) + "\n"


def load_board(work):
    """The board's `stat -json` (WORK/stat_synth_board.json) with its parts merged in: the board
    run has each part (WORK/parts.txt: BASE=MODULE) as a black box named as in its own run
    (WORK/stat_part_BASE.json). A part's modules other than its top are renamed 'part_BASE|module'
    (and so are the references to them), since two parts may each have a module of one name."""
    stat = json.loads((work / "stat_synth_board.json").read_text())
    parts = work / "parts.txt"
    for line in (parts.read_text().split() if parts.exists() else []):
        base, top = line.split("=", 1)
        part = json.loads((work / f"stat_part_{base}.json").read_text())["modules"]
        if top not in part:
            sys.exit(f"synth: the run of part {base} has no module {top}")
        rename = {m: (m if m == top else f"part_{base}|{m}") for m in part}
        for m, st in part.items():
            cells = {}
            for cell, n in st["num_cells_by_type"].items():
                key = module_of(cell, part)
                cells[rename[key] if key else cell] = n
            stat["modules"][rename[m]] = {**st, "num_cells_by_type": cells}
    return stat


def main():
    work, preset, family, out = sys.argv[1:]
    work = pathlib.Path(work)
    result = {"preset": preset, "family": family, "tops": {}, "inside": {}, "memories": []}
    failures = []
    for top, stat_file, inner in (("tpu_top", "stat_synth_core.json", "tpu_top"),
                                  ("hbm_ctrl", "stat_synth_hbm.json", "hbm_ctrl"),
                                  ("tpu_board_top", "stat_synth_board.json", "tpu_board_top")):
        path = work / stat_file
        if not path.exists():
            continue
        stat = load_board(work) if top == "tpu_board_top" else json.loads(path.read_text())
        result["yosys"] = stat.get("creator", "Yosys").split(" (")[0]
        design = Design(stat, family)
        if top == "tpu_board_top":
            result["tops"][top] = report_tree(design, inner, family)
        else:
            result["tops"][top] = report_top(design, inner, family)
            result["inside"][top] = report_inside(design, inner, family)
        if top in ("tpu_top", "tpu_board_top"):
            result["memories"], failures = check_memories(design, family)
        if top == "tpu_board_top" and family != "ice40":
            result["vu9p"] = utilisation(result["tops"][top][-1])
    for top, rows in result["tops"].items():
        t = rows[-1]
        print(f"synth: {top}: {t['lut']} LUT, {t['ff']} FF, {t['dsp']} DSP, "
              f"{t['bram36_equiv']} BRAM36 equivalent, {t['lutram']} LUT RAM")
    if failures:
        for f in failures:
            print(f"synth: {f}", file=sys.stderr)
        sys.exit(1)
    fit = []
    if "vu9p" in result:
        u = result["vu9p"]
        print("synth: tpu_board_top on a VU9P: " + ", ".join(
            f"{u[k]['used']} {k.upper()} ({u[k]['percent']} %)" for k in u))
        if u["lut"]["used"] >= MAX_LUT_SHARE * u["lut"]["available"]:
            fit.append(f"the board takes {u['lut']['percent']} % of the VU9P's LUTs: "
                       f"it must fit with room (under {int(100 * MAX_LUT_SHARE)} %)")
        fit += [f"the board needs more {k.upper()} than the VU9P has" for k in u
                if u[k]["used"] > u[k]["available"]]
    for suffix, text in ((".json", json.dumps(result, indent=2, default=sorted) + "\n"),
                         (".md", markdown(result))):
        with open(out + suffix + ".tmp", "w") as f:
            f.write(text)
    for suffix in (".json", ".md"):
        os.replace(out + suffix + ".tmp", out + suffix)
    print(f"synth: wrote {out}.json and {out}.md")
    if fit:
        for f in fit:
            print(f"synth: {f}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
