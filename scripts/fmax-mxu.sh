#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Synthesis, place and route of the MXU (rtl/mxu) for an iCE40, for its resources and measured
# fmax (docs/fpga.md): Yosys (npm @yowasp/yosys, scripts/synth) maps mxu_array at DIM N
# with synth_ice40, nextpnr-ice40 places and routes it, and the script prints and writes (-o, JSON)
# the cells and the fmax nextpnr reports.
#
#   scripts/fmax-mxu.sh [--dim N] [--device hx8k] [--package ct256] [--seed S] [-o OUT.json]
#                       [--build DIR] [--min-fmax MHZ]
#
# --build: the build tree whose generated tpu_pkg.sv is used (default build/). Exits non-zero when
# synthesis or place and route fails, or when the fmax is below --min-fmax (the test's floor).
# scripts/setup.sh installs the tools.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dim=4 device=hx8k package=ct256 seed=1 out="" build=$root/build min_fmax=0
usage() {
  echo "usage: scripts/fmax-mxu.sh [--dim N] [--device hx8k|lp8k|up5k...] [--package P] [--seed S] [-o OUT.json] [--build DIR] [--min-fmax MHZ]" >&2
  exit 2
}
while (($#)); do
  case $1 in
    --dim) dim=${2:?}; shift 2 ;;
    --device) device=${2:?}; shift 2 ;;
    --package) package=${2:?}; shift 2 ;;
    --seed) seed=${2:?}; shift 2 ;;
    -o) out=${2:?}; shift 2 ;;
    --build) build=${2:?}; shift 2 ;;
    --min-fmax) min_fmax=${2:?}; shift 2 ;;
    -h|--help) usage ;;
    *) echo "fmax-mxu: unknown argument '$1'" >&2; usage ;;
  esac
done
[[ $dim =~ ^[0-9]+$ ]] && ((dim >= 2)) || { echo "fmax-mxu: --dim must be an integer >= 2, got '$dim'" >&2; exit 2; }
yosys_js=$root/scripts/synth/yosys.mjs
[[ -d $root/scripts/synth/node_modules/@yowasp/yosys ]] || { echo "fmax-mxu: @yowasp/yosys is not installed: run scripts/setup.sh" >&2; exit 1; }
command -v nextpnr-ice40 >/dev/null || { echo "fmax-mxu: nextpnr-ice40 is missing: run scripts/setup.sh" >&2; exit 1; }
generated=$build/generated/rtl/tpu_pkg.sv
[[ -f $generated ]] || { echo "fmax-mxu: $generated is missing: configure the build first (cmake --preset default)" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$generated" "$root"/rtl/mxu/mxu_pe.sv "$root"/rtl/mxu/mxu_array.sv "$root"/rtl/include/tpu_assert.svh "$work"/
# A top that fixes DIM (synth_ice40 -top with a parameter override is not reliable in Yosys 0.55).
cat >"$work/mxu_top.sv" <<SV
module mxu_top (
  input  logic clk_i, input logic rst_ni,
  input  logic wload_valid_i, input logic wload_bank_i, input logic [$dim-1:0][7:0] wload_row_i,
  input  logic in_valid_i, input logic in_bank_i, input logic [$dim-1:0][7:0] in_row_i,
  output logic out_valid_o, output logic [$dim-1:0][31:0] out_row_o
);
  mxu_array #(.Dim($dim)) u_mxu (.clk_i, .rst_ni, .wload_valid_i, .wload_bank_i, .wload_row_i,
                                 .in_valid_i, .in_bank_i, .in_row_i, .out_valid_o, .out_row_o);
endmodule
SV
yosys_version=$(sed -nE 's/^  "version": *"([^"]+)".*/\1/p' "$root/scripts/synth/node_modules/@yowasp/yosys/package.json")
echo "fmax-mxu: synthesizing mxu_array DIM $dim for iCE40 (Yosys $yosys_version)" >&2
# $scopeinfo cells (hierarchy names kept by flatten) have no iCE40 BEL: dropped before the netlist.
node "$yosys_js" "$work" -- -q -l yosys.log -p \
  'read_verilog -sv tpu_pkg.sv mxu_pe.sv mxu_array.sv mxu_top.sv; synth_ice40 -top mxu_top; delete t:$scopeinfo; tee -o stat.txt stat; write_json mxu.json' \
  >/dev/null 2>&1 || { echo "fmax-mxu: synthesis failed:" >&2; grep -E "ERROR" "$work/yosys.log" >&2 || tail -5 "$work/yosys.log" >&2; exit 1; }
echo "fmax-mxu: placing and routing on $device-$package (seed $seed)" >&2
nextpnr-ice40 "--$device" --package "$package" --json "$work/mxu.json" --pcf-allow-unconstrained \
  --freq 12 --seed "$seed" --asc "$work/mxu.asc" >"$work/pnr.log" 2>&1 \
  || { echo "fmax-mxu: place and route failed:" >&2; grep -E "ERROR" "$work/pnr.log" >&2 || tail -5 "$work/pnr.log" >&2; exit 1; }

python3 - "$work" "$dim" "$device" "$package" "$seed" "$out" "$min_fmax" <<'PY'
import json, re, sys
work, dim, device, package, seed, out, min_fmax = sys.argv[1:]
stat = open(f"{work}/stat.txt").read()
pnr = open(f"{work}/pnr.log").read()
cells = {m.group(1): int(m.group(2)) for m in re.finditer(r"^\s+(SB_\w+)\s+(\d+)\s*$", stat, re.M)}
fmax = [float(x) for x in re.findall(r"Max frequency for clock '[^']*': ([\d.]+) MHz", pnr)]
util = {m.group(1): (int(m.group(2)), int(m.group(3))) for m in re.finditer(r"^Info:\s+(\w+):\s+(\d+)/\s*(\d+)", pnr, re.M)}
if not fmax or "ICESTORM_LC" not in util:
    sys.exit("fmax-mxu: nextpnr reported no fmax or no logic cells")
result = {
    "block": "mxu_array", "dim": int(dim), "device": f"{device}-{package}", "seed": int(seed),
    "yosys_cells": cells,
    "placed": {k: {"used": u, "available": a} for k, (u, a) in util.items() if u > 0},
    "fmax_mhz": fmax[-1],  # the last report is after routing
}
lc, lc_all = util["ICESTORM_LC"]
print(f"mxu_array DIM {dim} on iCE40 {device}-{package}: {cells.get('SB_LUT4', 0)} LUT4, "
      f"{sum(v for k, v in cells.items() if k.startswith('SB_DFF'))} FF, {cells.get('SB_CARRY', 0)} carry; "
      f"{lc}/{lc_all} logic cells; fmax {fmax[-1]:.2f} MHz (after routing, seed {seed})")
if fmax[-1] < float(min_fmax):  # checked first: a failed run writes no file
    sys.exit(f"fmax-mxu: fmax {fmax[-1]:.2f} MHz is below the floor of {float(min_fmax):g} MHz")
if out:
    with open(out + ".tmp", "w") as f:
        json.dump(result, f, indent=2)
        f.write("\n")
    import os
    os.replace(out + ".tmp", out)
PY
