#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Synthesis of the tpuemu core (tpu_top) and, for presets with the HBM model, its HBM controller
# (hbm_ctrl) with an open-source tool: Yosys (npm @yowasp/yosys, scripts/synth; Debian's 0.23
# cannot parse the RTL, docs/fpga.md). Reports the resources of every module (LUT, FF, DSP, block
# RAM, LUT RAM, carry) as JSON and as a Markdown table, and checks that every on-chip memory
# (each sram_1w1r: the VMEM banks, ACC and SMEM) became block RAM.
#
#   scripts/synth.sh PRESET [--family xc7|xcu|ice40] [-o OUT] [--no-hbm|--board] [--keep DIR] [--jobs N]
#
# PRESET is a name in configs/presets/ or a path to a preset file. OUT (default
# synth-PRESET-FAMILY) gets OUT.json and OUT.md; nothing is written when synthesis or the block
# RAM check fails. --no-hbm leaves the HBM controller out. --board synthesizes instead the whole
# board top (rtl/board/tpu_board_top.sv: core, beat bridge, controller, DRAM shim), in parts: the
# core, the bridge and the channel controller out of context (up to N Yosys runs at once, --jobs,
# default: the processors), then the board around them. It reports the board per module and
# against a Virtex UltraScale+ VU9P, and fails when it takes half of the VU9P's LUTs or more.
# --keep keeps Yosys's work directory (netlists, logs). The packages are generated from
# spec/tpuemu.json here: no build tree needed.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
family=xc7 out="" preset="" with_hbm=1 with_board=0 keep="" jobs=$(nproc)
usage() {
  echo "usage: scripts/synth.sh PRESET [--family xc7|xcu|ice40] [-o OUT] [--no-hbm|--board] [--keep DIR] [--jobs N]" >&2
  exit 2
}
while (($#)); do
  case $1 in
    --family) family=${2:?}; shift 2 ;;
    -o) out=${2:?}; shift 2 ;;
    --no-hbm) with_hbm=0; shift ;;
    --board) with_board=1; shift ;;
    --keep) keep=${2:?}; shift 2 ;;
    --jobs) jobs=${2:?}; shift 2 ;;
    -h|--help) usage ;;
    -*) echo "synth: unknown option '$1'" >&2; usage ;;
    *) [[ -z $preset ]] || { echo "synth: one preset only, got '$preset' and '$1'" >&2; usage; }
       preset=$1; shift ;;
  esac
done
[[ -n $preset ]] || usage
[[ $jobs =~ ^[1-9][0-9]*$ ]] || { echo "synth: --jobs must be a positive number, got '$jobs'" >&2; exit 2; }
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
yosys_version=$(sed -nE 's/^  "version": *"([^"]+)".*/\1/p' "$root/scripts/synth/node_modules/@yowasp/yosys/package.json")
yosys() {  # name, script: runs Yosys on the work directory, log in yosys_NAME.log; 1 on failure
  local name=$1 script=$2
  if ! node "$root/scripts/synth/yosys.mjs" "$work" -- -q -l "yosys_$name.log" -p "$script" \
       >"$work/yosys_$name.out" 2>&1; then
    # Yosys's own errors are in its log; a Node.js failure (the package's JavaScript glue cannot
    # pass data above 2 GiB of WebAssembly memory, docs/fpga.md) leaves no log, only its output.
    echo "synth: synthesis of $name failed:" >&2
    grep -hE "ERROR" "$work/yosys_$name.log" >&2 2>/dev/null || tail -n 5 "$work/yosys_$name.out" >&2
    return 1
  fi
  # Warnings that mean Yosys read the RTL differently from the simulators are errors here.
  # (Block RAM primitives' own data pins are resized when narrow modes are used: not a misreading.)
  if grep -E "is implicitly declared|used but has no driver|Resizing cell port" "$work/yosys_$name.log" \
       | grep -vE "Resizing cell port .*\.(DI|DO|DIP|DOP)[AB]?(DI|DO|DIP|DOP)?|Resizing cell port .*\.(WEA|WEBWE|ADDR\w+)" >&2; then
    echo "synth: Yosys read $name differently from Verilator (the warnings above)" >&2
    return 1
  fi
}
run_yosys() {  # name, top, script prefix[, options]: synthesizes one top, keeps its hierarchy, writes stat_NAME.json
  local name=$1 top=$2 prefix=$3 options=${4:-} start=$SECONDS
  echo "synth: $name for $family (Yosys $yosys_version)" >&2
  # $scopeinfo cells (hierarchy names) are not resources: dropped before counting.
  yosys "$name" "$prefix; $synth_cmd -top $top $options; delete t:\$scopeinfo; tee -q -o stat_$name.json stat -json" || return 1
  echo "synth: $name took $((SECONDS - start)) s" >&2
}
if ((with_board)); then
  board_read="read_verilog -sv -DSYNTHESIS tpu_pkg.sv hbm_spec_pkg.sv $board_sources synth_board.sv; hierarchy -check -top synth_board"
  # The board in parts (out of context, as a large FPGA design is built): the core, the beat
  # bridge and the channel controller each in a Yosys run of its own, with its own memory, then
  # the board with those parts as black boxes. Each run elaborates the whole board first, so a
  # part is the very module the board instantiates, with its parameters (Yosys names a module
  # with parameters after a hash of them: the same name in every run).
  yosys elaborate "$board_read; tee -q -o modules.txt ls" || exit 1
  parts=() boxes=""
  for base in tpu_top hbm_beat_bridge hbm_channel_ctrl; do
    mapfile -t hits < <(sed -nE 's/^ *(\$paramod(\$[0-9a-f]+)?\\'"$base"'(\\.*)?)$/\1/p' "$work/modules.txt")
    ((${#hits[@]} == 1)) || { echo "synth: expected one $base in the board, found ${#hits[@]}" >&2; exit 1; }
    parts+=("$base=${hits[0]}")
    boxes+=" ${hits[0]//\\/\\\\}"  # a selection pattern: a backslash is escaped
  done
  printf '%s\n' "${parts[@]}" >"$work/parts.txt"
  # A part's ports are wires inside the board: no I/O or clock buffers on them.
  part_options=""
  [[ $family == ice40 ]] || part_options="-noiopad -noclkbuf"
  for part in "${parts[@]}"; do  # up to --jobs at a time; each records its exit status
    while (($(jobs -rp | wc -l) >= jobs)); do wait -n || true; done
    part_name=part_${part%%=*}
    { rc=0; run_yosys "$part_name" "${part#*=}" "$board_read" "$part_options" || rc=1; echo $rc >"$work/rc_$part_name"; } &
  done
  wait
  for part in "${parts[@]}"; do
    [[ $(cat "$work/rc_part_${part%%=*}") == 0 ]] || exit 1
  done
  run_yosys synth_board synth_board "$board_read; blackbox$boxes" || exit 1
else
  run_yosys synth_core synth_core "read_verilog -sv -DSYNTHESIS tpu_pkg.sv $core_sources synth_core.sv" || exit 1
  [[ -z $hbm_sources ]] || run_yosys synth_hbm synth_hbm "read_verilog -sv -DSYNTHESIS hbm_spec_pkg.sv $hbm_sources synth_hbm.sv" || exit 1
fi

[[ -z $keep ]] || { mkdir -p "$keep"; cp -r "$work"/. "$keep"/; }
python3 "$root/scripts/synth/synth_report.py" "$work" "$name" "$family" "$out"
