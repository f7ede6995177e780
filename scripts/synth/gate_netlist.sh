#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A flattened gate-level netlist of the core or of one HBM channel, for the gate-level
# equivalence tests (docs/fpga.md "Gate-level equivalence"): npm Yosys (scripts/synth/yosys.mjs,
# as scripts/synth.sh runs it) reads the RTL as the FPGA build does, `synth -flatten` maps every
# module's logic to Yosys's generic gates and flip-flops, and `write_verilog -noattr` writes one
# module that Verilator reads without a cell library. Memories stay arrays ($mem cells, written as
# Verilog arrays), as block RAM keeps them on the FPGA; everything around them is gates.
#
#   scripts/synth/gate_netlist.sh core PRESET OUT.v [--level gates|cells]
#   scripts/synth/gate_netlist.sh hbm-channel TIMING_SET OUT.v [--queue-depth N] [--level gates|cells]
#
# --level gates (the default) is the netlist described above. --level cells stops before the
# mapping to gates: Yosys's word-level cells ($add, $mux, $eq, $dff, ...) of the flattened design,
# after every step that interprets the RTL (processes, FSMs, memories, arithmetic, sharing); a
# gate-level model of a whole core takes Verilator and the C++ compiler many times longer.
#
# core: tpu_top with the preset's core fields, as module tpu_top_gates (tpu_top's ports).
# hbm-channel: one hbm_channel_ctrl as hbm_ctrl instantiates it for the timing set's geometry
# (configs/hbm/TIMING_SET.json), N slots (default: the contract's), as module hbm_channel_gates.
# The packages are generated from spec/tpuemu.json: no build tree needed. Prints the Yosys time.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
usage() {
  echo "usage: scripts/synth/gate_netlist.sh core PRESET OUT.v | hbm-channel TIMING_SET OUT.v [--queue-depth N]" \
    "[--level gates|cells]" >&2
  exit 2
}
(($# >= 3)) || usage
kind=$1 src=$2 out=$3
shift 3
depth="" level=gates
while (($#)); do
  case $1 in
    --queue-depth) depth=${2:?}; shift 2 ;;
    --level) level=${2:?}; shift 2 ;;
    *) echo "gate_netlist: unknown option '$1'" >&2; usage ;;
  esac
done
case $level in gates|cells) ;; *) echo "gate_netlist: --level must be gates or cells, got '$level'" >&2; exit 2 ;; esac
case $kind in
  core)
    [[ -z $depth ]] || usage
    file=$src; [[ -f $file ]] || file=$root/configs/presets/$src.json
    name=tpu_top_gates ;;
  hbm-channel)
    file=$src; [[ -f $file ]] || file=$root/configs/hbm/$src.json
    name=hbm_channel_gates ;;
  *) usage ;;
esac
[[ -f $file ]] || { echo "gate_netlist: no $kind input '$src'" >&2; exit 2; }
[[ -d $root/scripts/synth/node_modules/@yowasp/yosys ]] ||
  { echo "gate_netlist: @yowasp/yosys is not installed: run scripts/setup.sh" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 "$root/spec/gen_spec.py" "$root/spec/tpuemu.json" --sv-core "$work/tpu_pkg.sv" --sv-hbm "$work/hbm_spec_pkg.sv"
if [[ $kind == hbm-channel && -z $depth ]]; then
  depth=$(sed -nE 's/.*localparam int unsigned QueueSlots *= *([0-9]+).*/\1/p' "$work/hbm_spec_pkg.sv")
fi
plan=$(python3 "$root/scripts/synth/gate_tops.py" "$root" "$kind" "$file" "$work" ${depth:+"$depth"})
IFS='|' read -r sources top chparam <<<"$plan"
cp "$root"/rtl/include/*.svh "$work"/

# synth's "fine" step without memory_map: the memories stay arrays. $scopeinfo cells (names of
# the flattened instances) are not logic and Verilator does not know them.
# Cells: no $alu/$macc (alumacc), which write_verilog cannot express; $add, $mul, ... it can.
map="techmap; opt -fast; abc -fast; opt -fast;" coarse=""
[[ $level == gates ]] || map="" coarse="-noalumacc"
top=${top// /} chparam=${chparam# }
rename="" params=""
[[ $top == "$name" ]] || rename="rename -top $name;"
[[ -z ${chparam// /} ]] || params="chparam $chparam $top;"
script="read_verilog -sv -DSYNTHESIS $sources; $params hierarchy -check -top $top;
  synth -flatten $coarse -run coarse:fine; opt -fast -full; $map
  delete t:\$scopeinfo; opt_clean -purge; check -assert; $rename stat; write_verilog -noattr gates.v"
start=$(date +%s)
node "$root/scripts/synth/yosys.mjs" "$work" -- -q -l yosys.log -p "$script" >/dev/null 2>&1 ||
  { echo "gate_netlist: synthesis of $top failed:" >&2; grep -E "ERROR" "$work/yosys.log" >&2 || tail -5 "$work/yosys.log" >&2; exit 1; }
# a cell write_verilog could not express is written as an instance of it: not a netlist of this
if grep -qE '^\s*\\\$[a-z_0-9]+ ' "$work/gates.v"; then
  echo "gate_netlist: Yosys cells left in the netlist:" \
    "$(grep -oE '^\s*\\\$[a-z_0-9]+ ' "$work/gates.v" | sort -u | tr -d ' ' | tr '\n' ' ')" >&2
  exit 1
fi
cp "$work/gates.v" "$out"
echo "gate_netlist: $kind $(basename "$file" .json) ($level) -> $out ($name, $(grep -c . "$out") lines), Yosys $(($(date +%s) - start)) s" >&2
