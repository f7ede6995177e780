#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The checks of scripts/synth/synth_report.py on hand-made Yosys `stat -json` netlists: totals
through the hierarchy, and the block RAM check, which must fail when a memory became LUT RAM or
flip-flops and pass when it became block RAM.

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

if failures:
    print("\n".join(failures))
    sys.exit(1)
print("synth_report: all checks passed")
