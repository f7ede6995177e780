#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Netlist equivalence of the `small` core (docs/fpga.md "Gate-level equivalence"): Yosys makes the
# flattened netlist of tpu_top with the preset's core fields (scripts/synth/gate_netlist.sh, word-
# level cells by default: a gate-level core takes the C++ compiler many times longer);
# the core cache (docs/core-cache.md) verilates it as the "RTL" of a preset named small-gates
# (TPUEMU_RTL_SOURCE_DIR: a directory laid out like rtl/core.f whose tpu_top.sv is a parameter
# shim around the netlist, every other source empty); `tpuemu run`/`exec --json` on it must equal
# the stock small core's output field for field (every counter, the cycles, the bit-exact result;
# only the preset's name and the wall-clock figures differ), and the runs' timelines (trace.json of
# -o DIR: every engine's issue, stall and completion cycle, from tpu_top's trace_o) byte for byte. Then one gate of the netlist is
# changed (tests/gate/break_gate.py: switched on at run time by the file gate-break, so that one
# build serves both) and the same runs must differ.
#
#   core_gate_eq.sh TPUEMU SOURCE_ROOT [gates|cells]
set -uo pipefail
tpuemu=$1
root=$2
level=${3:-cells}
source "$root/tests/cli/checks.sh"
check_timeout=1800
now() { date +%s; }
command -v verilator >/dev/null || { fail "verilator not found (scripts/setup.sh installs it)"; finish; }

export XDG_CACHE_HOME="$tmp/cache"
preset="$tmp/small-gates.json"
python3 - "$root/configs/presets/small.json" "$preset" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
p.update(name="small-gates", description="small on its gate-level netlist")
json.dump(p, open(sys.argv[2], "w"), indent=2)
PY

# ---- the netlist, and an "RTL directory" for the core cache around it
t0=$(now)
bash "$root/scripts/synth/gate_netlist.sh" core small "$tmp/gates.v" --level "$level" 2>"$tmp/err" &&
  pass "$level netlist of the small core ($(($(now) - t0)) s)" || { fail "$level netlist of the small core"; finish; }
t_synth=$(($(now) - t0))
python3 "$root/tests/gate/break_gate.py" "$tmp/gates.v" "$tmp/breakable.v" tpu_top_gates \
  "\$fopen(\"$tmp/gate-break\", \"r\")" || fail "a gate to break"
# tpu_top as the core cache verilates it: tpu_top's parameters (the preset's -G values; the
# netlist has them built in) and ports, the netlist inside. The netlist is not lint clean, and its
# bit-level wires make false combinational loops (UNOPTFLAT), so lint.vlt turns both off here.
rtl_dir() {  # rtl_dir DIR NETLIST
  local dir=$1 f
  mkdir -p "$dir/include"
  while read -r f; do
    [[ $f == +* || $f == //* || -z $f ]] && continue
    mkdir -p "$dir/$(dirname "$f")"
    : >"$dir/$f"
  done <"$root/rtl/core.f"
  printf '`verilator_config\nlint_off\nlint_off -rule UNOPTFLAT\n' >"$dir/lint.vlt"
  cat >"$dir/tpu_top.sv" <<'SV'
/* verilator lint_off UNUSEDPARAM */
module tpu_top #(
  parameter int unsigned Dim = 8, parameter int unsigned VmemRows = 8192,
  parameter int unsigned VmemBanks = 4, parameter int unsigned AccRows = 1024,
  parameter int unsigned SmemWords = 256, parameter int unsigned QueueDepth = 8,
  parameter int unsigned MemOutstanding = 64, localparam int unsigned DataW = Dim * 8
) (
  input  logic clk_i, input logic rst_ni,
  input  logic csr_valid_i, input logic csr_write_i,
  input  logic [tpu_pkg::CsrAddrWidth-1:0] csr_addr_i, input logic [31:0] csr_wdata_i,
  output logic [31:0] csr_rdata_o,
  output logic mem_req_valid_o, input logic mem_req_ready_i, output logic mem_req_write_o,
  output logic [tpu_pkg::AddrWidth-1:0] mem_req_addr_o, output logic [DataW-1:0] mem_req_wdata_o,
  input  logic mem_rsp_valid_i, input logic [DataW-1:0] mem_rsp_rdata_i,
  input  logic mem_wack_valid_i, output logic busy_o, output tpu_pkg::trace_t trace_o
);
  tpu_top_gates u_gates (.*);
endmodule
SV
  cat "$2" >>"$dir/tpu_top.sv"
}
rtl_dir "$tmp/rtl" "$tmp/breakable.v"
export TPUEMU_RTL_SOURCE_DIR="$tmp/rtl"

# ---- the netlist's core, built by the core cache
t0=$(now)
check core_build 0 "" -- core build "$preset"
t_build=$(($(now) - t0))

# ---- the runs: the stock core (RTL) and the netlist's, compared field for field
runs=(
  "run --matmul 64x64x64 --json"
  "run $root/tests/data/small_mlp.json --json"
  "exec $root/examples/programs/matmul-8x8.s --json"
)
same() {  # same A.json B.json: equal but for the preset's name and the wall clock
  python3 - "$1" "$2" <<'PY'
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
for j in (a, b):
    j.pop("preset", None)
    j.pop("simulation", None)
diff = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
counters = [k for k in a.get("counters", {}) if a["counters"][k] != b.get("counters", {}).get(k)]
print(f"fields differing: {diff}; counters differing: {counters}" if diff else
      f"identical: {a.get('counters', {}).get('cycles')} cycles, {len(a.get('counters', {}))} counters")
sys.exit(1 if diff else 0)
PY
}
t_runs=0
out() {  # out NAME K: the artefact directory of a `run` (the timeline is its trace.json)
  [[ ${runs[$2]} == run* ]] && echo "-o $tmp/$1$2"
}
for k in "${!runs[@]}"; do
  read -ra args <<<"${runs[$k]} $(out rtl "$k")"
  "$tpuemu" "${args[@]}" --preset small >"$tmp/rtl$k.json" 2>"$tmp/err" || fail "RTL: ${runs[$k]}"
  read -ra args <<<"${runs[$k]} $(out gates "$k")"
  t0=$(now)
  "$tpuemu" "${args[@]}" --preset "$preset" --no-build >"$tmp/gates$k.json" 2>"$tmp/err" ||
    fail "netlist: ${runs[$k]}"
  t_runs=$((t_runs + $(now) - t0))
  msg=$(same "$tmp/rtl$k.json" "$tmp/gates$k.json") && pass "netlist = RTL: ${args[0]} ${args[1]##*/} ($msg)" ||
    fail "netlist = RTL: ${args[0]} ${args[1]##*/} ($msg)"
  if [[ -n $(out rtl "$k") ]]; then
    cmp -s "$tmp/rtl$k/trace.json" "$tmp/gates$k/trace.json" && pass "netlist = RTL: ${args[1]##*/} timeline" ||
      fail "netlist = RTL: ${args[1]##*/} timeline (trace.json differs)"
  fi
done

# ---- a changed gate must show
touch "$tmp/gate-break"
caught=0
for k in "${!runs[@]}"; do
  read -ra args <<<"${runs[$k]} $(out broken "$k")"
  "$tpuemu" "${args[@]}" --preset "$preset" --no-build >"$tmp/broken$k.json" 2>"$tmp/err"
  rc=$?
  if [[ $rc -ne 0 ]]; then
    echo "broken netlist: ${runs[$k]} exits $rc: $(tail -1 "$tmp/err")"; caught=1
  elif [[ -n $(out rtl "$k") ]] && ! cmp -s "$tmp/rtl$k/trace.json" "$tmp/broken$k/trace.json"; then
    echo "broken netlist: ${runs[$k]}: the timeline differs"; caught=1
  elif msg=$(same "$tmp/rtl$k.json" "$tmp/broken$k.json"); then
    echo "broken netlist: ${runs[$k]} is identical ($msg)"
  else
    echo "broken netlist: ${runs[$k]} differs ($msg)"; caught=1
  fi
done
((caught)) && pass "the netlist with a changed gate differs from the RTL" ||
  fail "the netlist with a changed gate was NOT caught"
echo "timing: Yosys ${t_synth} s, core build ${t_build} s, netlist runs ${t_runs} s"
finish
