#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Gate-level equivalence of one HBM channel (docs/fpga.md "Gate-level equivalence"): Yosys makes
# the flattened netlist of hbm_channel_ctrl (scripts/synth/gate_netlist.sh), Verilator builds the
# RTL controller with that netlist beside channel 0 (hbm_channel_eq.sv) and the driver
# hbm_channel_eq.cpp runs a request trace on the channel: the test passes when every output of
# the netlist (responses, commands, ready, every statistics counter) equals the RTL channel's in
# every cycle, AND the same run with one gate of the netlist changed (tests/gate/break_gate.py,
# switched on by the plusarg +gate-break: one build) reports a mismatch.
#
#   hbm_gate_eq.sh SOURCE_ROOT DRAM_LIB GENERATED_INCLUDE HBM_SPEC_PKG [QUEUE_DEPTH [LEVEL [REQUESTS]]]
#
# DRAM_LIB is the build's libtpuemu_dram.a, GENERATED_INCLUDE its generated headers, HBM_SPEC_PKG
# its hbm_spec_pkg.sv. QUEUE_DEPTH is the channel's slots (default or "contract": the contract's,
# as shipped); the timing set's queue sizes are scaled to fit them. LEVEL is gate_netlist.sh's
# --level (gates, the default, or cells).
set -uo pipefail
root=$1 dram_lib=$2 gen_inc=$3 spec_pkg=$4 depth=${5:-} level=${6:-gates} requests=${7:-6000}
tset=hbm2-2000
# channel 0 inside hbm_ctrl_harness (instance names of hbm_ctrl_harness.sv and hbm_ctrl.sv)
channel_path="u_rtl.u_ctrl.g_ch[0].u_ch"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
now() { date +%s; }
command -v verilator >/dev/null || fail "verilator not found (scripts/setup.sh installs it)"
[[ -n $depth && $depth != contract ]] || depth=$(sed -nE 's/.*localparam int unsigned QueueSlots *= *([0-9]+).*/\1/p' "$spec_pkg")

# ---- the netlist
t0=$(now)
bash "$root/scripts/synth/gate_netlist.sh" hbm-channel "$tset" "$tmp/gates.v" --queue-depth "$depth" --level "$level" ||
  fail "no netlist of the channel"
t_synth=$(($(now) - t0))

# ---- one gate that the run can change: one of a statistics counter's (an output), so that the
# change must show (the counters are cnt_q in a netlist of cells, stats_o in one of gates)
python3 "$root/tests/gate/break_gate.py" "$tmp/gates.v" "$tmp/breakable.v" hbm_channel_gates \
  '$test$plusargs("gate-break")' cnt_q,stats_o || fail "no gate to break"

# ---- the model: RTL controller + intact netlist + broken netlist
python3 "$root/tests/gate/channel_eq_bind.py" "$tmp/gates.v" "$channel_path" \
  "$tmp/hbm_channel_gates_bind.svh" "$tmp/hbm_channel_gates_names.h" || fail "cannot bind the netlist"
mapfile -t hbm_f < <(sed -nE 's/^(rtl\/.*\.sv)$/\1/p' "$root/rtl/mem/hbm/hbm.f")
geometry=$(python3 - "$root/configs/hbm/$tset.json" "$depth" <<'PY'
import json, sys
t = json.load(open(sys.argv[1])); d = int(sys.argv[2])
kv = dict(t["geometry"]); kv.update(t["timing"])
kv.update(read_queue=d // 2, write_queue=d - d // 2, write_high=d - d // 2, write_low=max(1, (d - d // 2) // 8))
print(" ".join(f"{k}={v}" for k, v in kv.items()))
PY
)
channels=$(sed -nE 's/.*\bchannels=([0-9]+).*/\1/p' <<<"$geometry")
# the netlists are not lint clean, and their bit-level wires make false loops (UNOPTFLAT)
f=$tmp/breakable.v
printf '`verilator_config\nlint_off -file "%s"\nlint_off -rule UNOPTFLAT -file "%s"\n' "$f" "$f" >"$tmp/gates.vlt"
# A gate-level model compiles much faster without optimisation and still runs the trace in
# seconds; the word-level one is small either way.
copt=-Os
[[ $level == cells ]] || copt=-O0
t0=$(now)
(cd "$tmp" && verilator --cc --exe --build -j 2 -O3 --x-assign fast --x-initial fast -Wall \
  --top-module hbm_channel_eq -GNumChannels="$channels" -GQueueDepth="$depth" \
  -I"$root/rtl/include" -I"$tmp" "$tmp/gates.vlt" "$spec_pkg" "${hbm_f[@]/#/$root/}" \
  "$root/rtl/mem/hbm/hbm_ctrl_harness.sv" "$tmp/breakable.v" "$root/tests/gate/hbm_channel_eq.sv" \
  "$root/tests/gate/hbm_channel_eq.cpp" "$dram_lib" \
  -CFLAGS "-std=c++20 -O1 -I$root/sim/src -I$root/sim/include -I$root/spec/include -I$gen_inc -I$tmp -DTPUEMU_GATE_CHANNELS=$channels -DTPUEMU_GATE_CHECKED=0" \
  -MAKEFLAGS "OPT_FAST=$copt OPT_SLOW=$copt" -o hbm_channel_eq >"$tmp/build.log" 2>&1) || { tail -30 "$tmp/build.log"; fail "the model does not build"; }
t_build=$(($(now) - t0))

t0=$(now)
"$tmp/obj_dir/hbm_channel_eq" $geometry requests="$requests" seed=1 >"$tmp/run.out" 2>&1; rc=$?
t_run=$(($(now) - t0))
cat "$tmp/run.out"
[[ $rc -eq 0 ]] || fail "the netlist of the channel differs from the RTL (exit $rc)"
"$tmp/obj_dir/hbm_channel_eq" $geometry requests="$requests" seed=1 +gate-break >"$tmp/broken.out" 2>&1; rc=$?
cat "$tmp/broken.out"
[[ $rc -eq 1 ]] && grep -q "MISMATCH in cycle" "$tmp/broken.out" || fail "the netlist with a changed gate was not caught (exit $rc)"
echo "PASS: the $level netlist ($depth slots) equals the RTL channel in every cycle; with a changed gate it differs"
echo "timing: Yosys ${t_synth} s, Verilator build ${t_build} s, run ${t_run} s"
