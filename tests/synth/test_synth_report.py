#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The checks of scripts/synth/synth_report.py on hand-made Yosys `stat -json` netlists: totals
through the hierarchy, and the block RAM check, which must fail when a memory became LUT RAM or
flip-flops and pass when it became block RAM; for the whole board top, the tree of modules, the
VU9P utilisation (LUT RAM counted in LUTs) and the fit check, which must fail at half the LUTs;
the board synthesized in parts, merged, and refused when a part's netlist is missing.

    test_synth_report.py path/to/synth_report.py"""
import json
import pathlib
import subprocess
import sys
import tempfile

REPORT = sys.argv[1]


def stat(memory_cells):
    """synth_core > tpu_top > {2 x vmem > 2 x sram_1w1r, glue}; the sram's cells as given."""
    return {"creator": "Yosys 0.55 (test)", "modules": {
        "\\synth_core": {"num_cells_by_type": {"\\tpu_top": 1, "IBUF": 3, "OBUF": 2}},
        "\\tpu_top": {"num_cells_by_type": {"$paramod$1\\vmem": 2, "LUT6": 10, "FDRE": 4}},
        "$paramod$1\\vmem": {"num_cells_by_type": {"$paramod$2\\sram_1w1r": 2, "leaf": 1, "LUT2": 2}},
        "\\leaf": {"num_cells_by_type": {"LUT2": 1}},  # a plain module: instances named without the backslash
        "$paramod$2\\sram_1w1r": {"num_cells_by_type": memory_cells},
    }}


def run(memory_cells):
    with tempfile.TemporaryDirectory() as d:
        work = pathlib.Path(d)
        (work / "stat_synth_core.json").write_text(json.dumps(stat(memory_cells)))
        out = work / "report"
        p = subprocess.run([sys.executable, REPORT, str(work), "test", "xc7", str(out)],
                           capture_output=True, text=True)
        result = json.loads((work / "report.json").read_text()) if p.returncode == 0 else None
        md = (work / "report.md").exists()
        return p, result, md


failures = []

p, result, md = run({"RAMB36E1": 2, "RAMB18E1": 1, "FDRE": 8})
if p.returncode != 0:
    failures.append(f"block RAM memory rejected: {p.stderr}")
else:
    rows = {r["module"]: r for r in result["tops"]["tpu_top"]}
    # 2 vmem x (2 srams x (2 RAMB36 + 1 RAMB18)) = 8 RAMB36 + 4 RAMB18 = 10 equivalent
    if rows["vmem"]["bram36"] != 8 or rows["vmem"]["bram18"] != 4 or rows["vmem"]["bram36_equiv"] != 10:
        failures.append(f"vmem's block RAM not summed through the hierarchy: {rows['vmem']}")
    if rows["vmem"]["lut"] != 6 or rows["vmem"]["ff"] != 32:
        failures.append(f"vmem's LUT/FF not summed: {rows['vmem']}")
    if rows["total"]["lut"] != 16 or rows["tpu_top (own logic)"]["lut"] != 10:
        failures.append(f"total or own logic wrong: {rows['total']}, {rows['tpu_top (own logic)']}")
    if rows["vmem"]["instances"] != 2:
        failures.append("vmem instance count wrong")

for cells, what in (({"RAM64M": 4, "FDRE": 8}, "LUT RAM"), ({"FDRE": 4096, "LUT6": 900}, "flip-flops"),
                    ({"RAMB36E1": 1, "RAM32M": 1}, "block RAM plus LUT RAM")):
    p, _, md = run(cells)
    if p.returncode == 0:
        failures.append(f"a memory mapped to {what} passed the block RAM check")
    elif "not block RAM" not in p.stderr:
        failures.append(f"{what}: the failure does not say why: {p.stderr!r}")
    if md:
        failures.append(f"{what}: a failed check left a report behind")

def board(glue_luts):
    """synth_board > tpu_board_top > {tpu_top > sram_1w1r, hbm_board_memsys > 8 x channel}."""
    return {"creator": "Yosys 0.55 (test)", "modules": {
        "\\synth_board": {"num_cells_by_type": {"$paramod$9\\tpu_board_top": 1, "IBUF": 3}},
        "$paramod$9\\tpu_board_top": {"num_cells_by_type": {"$paramod$1\\tpu_top": 1,
                                                            "$paramod$3\\hbm_board_memsys": 1}},
        "$paramod$1\\tpu_top": {"num_cells_by_type": {"$paramod$2\\sram_1w1r": 2, "LUT6": 10}},
        "$paramod$2\\sram_1w1r": {"num_cells_by_type": {"RAMB36E2": 1}},
        "$paramod$3\\hbm_board_memsys": {"num_cells_by_type": {"$paramod$4\\hbm_channel_ctrl": 8,
                                                                "LUT6": glue_luts, "RAM64M": 2}},
        "$paramod$4\\hbm_channel_ctrl": {"num_cells_by_type": {"LUT6": 100, "FDRE": 50, "SRLC32E": 1}},
    }}


def run_board(glue_luts):
    with tempfile.TemporaryDirectory() as d:
        work = pathlib.Path(d)
        (work / "stat_synth_board.json").write_text(json.dumps(board(glue_luts)))
        p = subprocess.run([sys.executable, REPORT, str(work), "test", "xcu", str(work / "report")],
                           capture_output=True, text=True)
        path = work / "report.json"
        return p, json.loads(path.read_text()) if path.exists() else None


p, result = run_board(5)
if p.returncode != 0:
    failures.append(f"a small board failed: {p.stderr}")
else:
    rows = {r["module"]: r for r in result["tops"]["tpu_board_top"]}
    ch = rows.get("tpu_board_top / hbm_board_memsys / hbm_channel_ctrl")
    if not ch or ch["instances"] != 8 or ch["lut"] != 800 or ch["ff"] != 400:
        failures.append(f"the channels are not a row of the tree with 8 instances: {ch}")
    if rows["total"]["lut"] != 815 or rows["tpu_board_top / tpu_top"]["bram36"] != 2:
        failures.append(f"board total wrong: {rows['total']}")
    # LUTs: 815 logic + 2 RAM64M x 4 sites + 8 SRLs
    if result["vu9p"]["lut"]["used"] != 831 or result["vu9p"]["bram36"]["used"] != 2:
        failures.append(f"VU9P utilisation wrong: {result['vu9p']}")
p, result = run_board(591120)  # with the rest: just over half of the VU9P's 1 182 240 LUTs
if p.returncode == 0:
    failures.append("a board with half of the VU9P's LUTs passed the fit check")
elif "must fit with room" not in p.stderr or result is None:
    failures.append(f"the fit check failed without saying why or without its report: {p.stderr!r}")


def run_board_in_parts(with_channel_part=True):
    """The board above as scripts/synth.sh --board builds it: the core and the channel controller
    synthesized in runs of their own, black boxes in the board's run. Each part has a module
    named leaf, different in each (the report must keep them apart)."""
    whole = board(5)["modules"]
    core, channel = "$paramod$1\\tpu_top", "$paramod$4\\hbm_channel_ctrl"
    parts = {
        "tpu_top": {core: {"num_cells_by_type": {**whole[core]["num_cells_by_type"], "leaf": 1}},
                    "$paramod$2\\sram_1w1r": whole["$paramod$2\\sram_1w1r"],
                    "\\leaf": {"num_cells_by_type": {"LUT6": 3}}},
        "hbm_channel_ctrl": {channel: {"num_cells_by_type": {**whole[channel]["num_cells_by_type"], "leaf": 1}},
                             "\\leaf": {"num_cells_by_type": {"LUT6": 7}}},
    }
    if not with_channel_part:
        del parts["hbm_channel_ctrl"]
    boxed = {k: v for k, v in whole.items() if k not in (core, channel, "$paramod$2\\sram_1w1r")}
    with tempfile.TemporaryDirectory() as d:
        work = pathlib.Path(d)
        (work / "stat_synth_board.json").write_text(json.dumps({"creator": "Yosys 0.55 (test)", "modules": boxed}))
        (work / "parts.txt").write_text("".join(f"{b}={next(iter(m))}\n" for b, m in parts.items()))
        for b, m in parts.items():
            (work / f"stat_part_{b}.json").write_text(json.dumps({"creator": "Yosys 0.55 (test)", "modules": m}))
        p = subprocess.run([sys.executable, REPORT, str(work), "test", "xcu", str(work / "report")],
                           capture_output=True, text=True)
        path = work / "report.json"
        return p, json.loads(path.read_text()) if path.exists() else None


p, result = run_board_in_parts()
if p.returncode != 0:
    failures.append(f"a board in parts failed: {p.stderr}")
else:
    rows = {r["module"]: r for r in result["tops"]["tpu_board_top"]}
    ch = rows.get("tpu_board_top / hbm_board_memsys / hbm_channel_ctrl")
    if not ch or ch["instances"] != 8 or ch["lut"] != 8 * 107:
        failures.append(f"the channel part is not counted with its own leaf, 8 times: {ch}")
    if rows["tpu_board_top / tpu_top"]["lut"] != 13 or rows["tpu_board_top / tpu_top"]["bram36"] != 2:
        failures.append(f"the core part is not counted with its own leaf and memories: {rows['tpu_board_top / tpu_top']}")
    if rows["total"]["lut"] != 5 + 13 + 8 * 107:
        failures.append(f"board in parts: total wrong: {rows['total']}")
p, result = run_board_in_parts(with_channel_part=False)
if p.returncode == 0 or "no netlist of module $paramod$4\\hbm_channel_ctrl" not in p.stderr or result:
    failures.append(f"a black box without its part's netlist was not refused: {p.returncode} {p.stderr!r}")

if failures:
    print("\n".join(failures))
    sys.exit(1)
print("synth_report: all checks passed")
