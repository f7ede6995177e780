#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Synthesis of the tpuemu core (tpu_top) and, for presets with the HBM model, its HBM controller
# (hbm_ctrl) with an open-source tool: Yosys (npm @yowasp/yosys, scripts/synth; Debian's 0.23
# cannot parse the RTL, docs/fpga.md). Reports the resources of every module (LUT, FF, DSP, block
# RAM, LUT RAM, carry) as JSON and as a Markdown table, and checks that every on-chip memory
# (each sram_1w1r: the VMEM banks, ACC and SMEM) became block RAM.
#
#   scripts/synth.sh PRESET [--family xc7|xcu|ice40] [-o OUT] [--no-hbm|--board] [--keep DIR]
#
# PRESET is a name in configs/presets/ or a path to a preset file. OUT (default
# synth-PRESET-FAMILY) gets OUT.json and OUT.md; nothing is written when synthesis or the block
# RAM check fails. --no-hbm leaves the HBM controller out. --board synthesizes instead the whole
# board top (rtl/board/tpu_board_top.sv: core, beat bridge, controller, DRAM shim) in one run,
# reports it per module and against a Virtex UltraScale+ VU9P, and fails when it takes half of
# the VU9P's LUTs or more. --keep keeps Yosys's work directory (netlists, logs). The packages are
# generated from spec/tpuemu.json here: no build tree needed.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
family=xc7 out="" preset="" with_hbm=1 with_board=0 keep=""
usage() {
  echo "usage: scripts/synth.sh PRESET [--family xc7|xcu|ice40] [-o OUT] [--no-hbm|--board] [--keep DIR]" >&2
  exit 2
}
while (($#)); do
  case $1 in
    --family) family=${2:?}; shift 2 ;;
    -o) out=${2:?}; shift 2 ;;
    --no-hbm) with_hbm=0; shift ;;
    --board) with_board=1; shift ;;
    --keep) keep=${2:?}; shift 2 ;;
    -h|--help) usage ;;
    -*) echo "synth: unknown option '$1'" >&2; usage ;;
    *) [[ -z $preset ]] || { echo "synth: one preset only, got '$preset' and '$1'" >&2; usage; }
       preset=$1; shift ;;
  esac
done
[[ -n $preset ]] || usage
((with_hbm || !with_board)) || { echo "synth: --board includes the HBM controller; drop --no-hbm" >&2; exit 2; }
case $family in xc7|xcu|ice40) ;; *) echo "synth: --family must be xc7, xcu or ice40, got '$family'" >&2; exit 2 ;; esac
preset_file=$preset
[[ -f $preset_file ]] || preset_file=$root/configs/presets/$preset.json
[[ -f $preset_file ]] || { echo "synth: no preset '$preset' (not a file, not in configs/presets/)" >&2; exit 2; }
[[ -d $root/scripts/synth/node_modules/@yowasp/yosys ]] || { echo "synth: @yowasp/yosys is not installed: run scripts/setup.sh" >&2; exit 1; }
name=$(basename "$preset_file" .json)
[[ -n $out ]] || out=synth-$name-$family

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 "$root/spec/gen_spec.py" "$root/spec/tpuemu.json" --sv-core "$work/tpu_pkg.sv" --sv-hbm "$work/hbm_spec_pkg.sv"

# Sources from the manifests every other reader uses (rtl/core.f, rtl/mem/hbm/hbm.f, the board's
# lists in rtl/CMakeLists.txt), flattened into the work directory (the Yosys runner sees one
# directory); tops and parameters from the preset (scripts/synth/synth_tops.py).
if ((with_board)); then
  board_sources=$(python3 "$root/scripts/synth/synth_tops.py" "$root" "$preset_file" "$work" --board)
else
  plan=$(python3 "$root/scripts/synth/synth_tops.py" "$root" "$preset_file" "$work" "$with_hbm")
  core_sources=${plan%%|*}
  hbm_sources=${plan#*|}
  hbm_sources=${hbm_sources# }
fi
cp "$root"/rtl/include/*.svh "$work"/

case $family in
  xc7)   synth_cmd="synth_xilinx -family xc7" ;;
  xcu)   synth_cmd="synth_xilinx -family xcu" ;;
  ice40) synth_cmd="synth_ice40 -dsp" ;;
esac
run_yosys() {  # top, sources...: synthesizes one top, keeps its hierarchy, writes stat_<top>.json
  local top=$1; shift
  local start=$SECONDS
  echo "synth: $top for $family (Yosys $(sed -nE 's/^  "version": *"([^"]+)".*/\1/p' "$root/scripts/synth/node_modules/@yowasp/yosys/package.json"))" >&2
  # $scopeinfo cells (hierarchy names) are not resources: dropped before counting.
  node "$root/scripts/synth/yosys.mjs" "$work" -- -q -l "yosys_$top.log" -p \
    "read_verilog -sv -DSYNTHESIS $*; $synth_cmd -top $top; delete t:\$scopeinfo; tee -q -o stat_$top.json stat -json" \
    >/dev/null 2>&1 || { echo "synth: synthesis of $top failed:" >&2; grep -E "ERROR" "$work/yosys_$top.log" >&2 || tail -5 "$work/yosys_$top.log" >&2; exit 1; }
  # Warnings that mean Yosys read the RTL differently from the simulators are errors here.
  # (Block RAM primitives' own data pins are resized when narrow modes are used: not a misreading.)
  if grep -E "is implicitly declared|used but has no driver|Resizing cell port" "$work/yosys_$top.log" \
       | grep -vE "Resizing cell port .*\.(DI|DO|DIP|DOP)[AB]?(DI|DO|DIP|DOP)?|Resizing cell port .*\.(WEA|WEBWE|ADDR\w+)" >&2; then
    echo "synth: Yosys read $top differently from Verilator (the warnings above)" >&2
    exit 1
  fi
  echo "synth: $top took $((SECONDS - start)) s" >&2
}
if ((with_board)); then
  # One run, hierarchy kept: the 8 channel controllers are one module, synthesized once.
  run_yosys synth_board tpu_pkg.sv hbm_spec_pkg.sv $board_sources synth_board.sv
else
  run_yosys synth_core tpu_pkg.sv $core_sources synth_core.sv
  [[ -z $hbm_sources ]] || run_yosys synth_hbm hbm_spec_pkg.sv $hbm_sources synth_hbm.sv
fi

[[ -z $keep ]] || { mkdir -p "$keep"; cp -r "$work"/. "$keep"/; }
python3 "$root/scripts/synth/synth_report.py" "$work" "$name" "$family" "$out"
