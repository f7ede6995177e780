#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A user's own preset on the RTL through the core cache (docs/core-cache.md): `small` with
# vmem_banks 1, a core no build compiles in. --no-build refuses naming the command; the first
# run builds the core (a progress line), the second reuses it (both timed); a matmul and a model
# run bit-exact (run exits 3 on a mismatch with the C++ reference, and result.bit_exact says so);
# the bank-conflict counters differ from the stock small core's; info lists the core. A truncated
# core.so is refused in one line (run, exec, Python), listed as damaged and rebuilt by `core build`.
# A second concurrent build says once that it waits; Ctrl-C stops a build within a second, its
# tools and its directory gone, exit 130, nothing written (SIGINT to tpuemu alone, and to its
# process group as a terminal sends it). An edited RTL file (in a copy of rtl/, never the tree's)
# makes the core stale and rebuilt, a bare touch does not. Presets the RTL cannot build (dim 4,
# acc_rows 1) are refused at load naming the field; a build that fails in Verilator is one line
# naming its log and leaves no entry. Builds four cores: label slow.
# Usage: core_cache_test.sh <tpuemu> <source root> <python with numpy>
#        (PYTHONPATH: the tpuemu Python module)
tpuemu=$1
root=$2
python=$3
source "$root/tests/cli/checks.sh"
check_timeout=1500

export XDG_CACHE_HOME="$tmp/cache"
cp -r "$root/rtl" "$tmp/rtl"
export TPUEMU_RTL_SOURCE_DIR="$tmp/rtl"
custom="$tmp/small-b1.json"
dim4="$tmp/small-d4.json"
acc1="$tmp/small-acc1.json"
queue4="$tmp/small-q4.json"
out32="$tmp/small-o32.json"
python3 - "$root/configs/presets/small.json" "$tmp" <<'PY'
import json, sys
small = json.load(open(sys.argv[1]))
def variant(file, **fields):
    p = dict(small, **fields)
    json.dump(p, open(f"{sys.argv[2]}/{file}", "w"), indent=2)
variant("small-b1.json", name="small-b1", description="small with one VMEM bank", vmem_banks=1)
variant("small-d4.json", name="small-d4", description="small with a 4-lane MXU", dim=4,
        hbm=dict(small["hbm"], bytes_per_cycle=4))
variant("small-acc1.json", name="small-acc1", description="one ACC row", acc_rows=1)
variant("small-q4.json", name="small-q4", description="4-entry queues", queue_depth=4)
variant("small-o32.json", name="small-o32", description="32 reads in flight", mem_outstanding=32)
PY
matmul=(--matmul 64x64x64 --json)
field() {  # field FILE PYTHON-EXPRESSION-ON-j
  python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}
now() { date +%s.%N; }
seconds() { python3 -c "print(f'{$2 - $1:.1f}')"; }

check preset_accepted 0 "" -- info --preset "$custom"
check no_build_refuses 1 "no Verilated core for preset 'small-b1'.*build it with \`tpuemu core build $custom\`" -- \
  run "${matmul[@]}" --preset "$custom" --no-build
check no_build_refuses_exec 1 "tpuemu core build $custom\`" -- \
  exec "$root/examples/programs/matmul-8x8.s" --preset "$custom" --no-build
check no_build_refuses_serve 1 "tpuemu core build $custom\`" -- \
  serve --listen 127.0.0.1:0 --preset "$custom" --no-build
[[ -z $(ls -A "$XDG_CACHE_HOME/tpuemu/cores" 2>/dev/null | grep -v '^\.') ]] && pass "a refusal builds nothing" ||
  fail "a refusal builds nothing"

# ---- first use builds (one progress line on stderr), then runs bit-exact
t0=$(now)
"$tpuemu" run "${matmul[@]}" --preset "$custom" >"$tmp/first.json" 2>"$tmp/err"; rc=$?
t1=$(now)
first=$(seconds "$t0" "$t1")
[[ $rc -eq 0 ]] && [[ $(field "$tmp/first.json" 'j["result"]["bit_exact"]') == True ]] &&
  pass "first run builds the core and runs bit-exact (${first} s)" || fail "first run (exit $rc)"
grep -q "^tpuemu: building the Verilated core of preset small-b1 (dim 8, vmem_rows 8192, vmem_banks 1, " "$tmp/err" &&
  [[ $(grep -c . "$tmp/err") -eq 1 ]] && pass "first run: one progress line" || fail "first run: progress line"

# ---- the second run reuses it: no build, a fraction of the time
t0=$(now)
"$tpuemu" run "${matmul[@]}" --preset "$custom" --no-build >"$tmp/second.json" 2>"$tmp/err"; rc=$?
t1=$(now)
second=$(seconds "$t0" "$t1")
[[ $rc -eq 0 && ! -s "$tmp/err" ]] && pass "second run reuses the core (${second} s)" || fail "second run (exit $rc)"
cmp -s <(field "$tmp/first.json" 'j["counters"]') <(field "$tmp/second.json" 'j["counters"]') &&
  pass "second run: the same counters" || fail "second run: the same counters"
python3 -c "import sys; sys.exit(0 if $second * 3 < $first else 1)" && pass "cached run is faster than the build" ||
  fail "cached run ${second} s vs first ${first} s"
echo "timing: first run (build + run) ${first} s, cached run ${second} s"

check core_build_cached 0 "" -- core build "$custom"
grep -q "already built" "$tmp/out" && pass "core build: already built" || fail "core build: already built"

# ---- counters against the stock small core's, and the same matmul on the fake backend
check stock_small 0 "" -- run "${matmul[@]}" --preset small
cp "$tmp/out" "$tmp/stock.json"
[[ $(field "$tmp/first.json" 'j["counters"]["vmem_bank_conflicts"]') != \
   $(field "$tmp/stock.json" 'j["counters"]["vmem_bank_conflicts"]') ]] &&
  pass "bank conflicts differ from the stock core's ($(field "$tmp/first.json" 'j["counters"]["vmem_bank_conflicts"]') vs $(field "$tmp/stock.json" 'j["counters"]["vmem_bank_conflicts"]'))" ||
  fail "bank conflicts equal the stock core's"
[[ $(field "$tmp/first.json" 'j["preset"]') == small-b1 && $(field "$tmp/first.json" 'j["backend"]') == rtl ]] &&
  pass "the run names the custom preset on rtl" || fail "the run's preset and backend"

# ---- a model and a hand-written program on the custom core
check model_bit_exact 0 "" -- run "$root/tests/data/small_mlp.json" --preset "$custom" --no-build --json
[[ $(field "$tmp/out" 'j["result"]["bit_exact"]') == True ]] && pass "model: bit_exact" || fail "model: bit_exact"
check exec_program 0 "" -- exec "$root/examples/programs/matmul-8x8.s" --preset "$custom" --no-build

# ---- info lists the core
check info_lists 0 "" -- info
grep -q "^built cores ($XDG_CACHE_HOME/tpuemu/cores):" "$tmp/out" && grep -q "^  small-b1 .*dim 8, .*vmem_banks 1" "$tmp/out" &&
  pass "info lists the built core" || fail "info lists the built core"
check info_json 0 "" -- info --json
[[ $(field "$tmp/out" '[(c["preset"], c["fields"]["vmem_banks"], c["current"]) for c in j["core_cache"]["cores"]]') == \
   "[('small-b1', 1, True)]" ]] && pass "info --json lists the built core" || fail "info --json lists the built core"
hash1=$(field "$tmp/out" 'j["core_cache"]["cores"][0]["hash"]')

# ---- a damaged entry: refused in one line (never a crash), listed as damaged, rebuilt
entry=$(find "$XDG_CACHE_HOME/tpuemu/cores" -mindepth 1 -maxdepth 1 -type d -name "$hash1")
size=$(stat -c %s "$entry/core.so")
truncate -s $((size / 2)) "$entry/core.so"
damage="$entry/core.so: $((size / 2)) bytes where the manifest records $size"
check damaged_run_refused 1 "the core cache's entry for it \($entry\) is damaged: $damage; rebuild it with \`tpuemu core build $custom\`" -- \
  run --matmul 16x16x16 --preset "$custom" --backend rtl --no-build
check damaged_exec_refused 1 "is damaged: $damage; rebuild it" -- \
  exec "$root/examples/programs/matmul-8x8.s" --preset "$custom" --no-build
"$python" - "$custom" "$damage" >"$tmp/out" 2>"$tmp/err" <<'PY'; rc=$?
import sys, tpuemu
try:
    tpuemu.open_device("rtl", sys.argv[1])
    sys.exit("opened a damaged core")
except tpuemu.Error as e:
    sys.exit(0 if f"is damaged: {sys.argv[2]}" in str(e) else f"other error: {e}")
PY
[[ $rc -eq 0 ]] && pass "Python: a damaged core is a tpuemu.Error" || fail "Python open_device on a damaged core (exit $rc)"
check info_damaged 0 "" -- info
grep -qF "(damaged: $damage; rebuilt on next use)" "$tmp/out" && pass "info lists the entry as damaged" ||
  fail "info lists the entry as damaged"
check info_damaged_json 0 "" -- info --json
[[ $(field "$tmp/out" 'j["core_cache"]["cores"][0]["damaged"]') == "$damage" ]] &&
  pass "info --json: damaged" || fail "info --json: damaged"
"$tpuemu" core build "$custom" --json >"$tmp/out" 2>"$tmp/err"; rc=$?
[[ $rc -eq 0 && $(field "$tmp/out" 'j["built"]') == True && $(grep -c . "$tmp/err") -eq 1 ]] &&
  grep -qF "tpuemu: rebuilding the Verilated core of preset small-b1 (dim 8, " "$tmp/err" &&
  grep -qF "whose entry is damaged ($damage)" "$tmp/err" &&
  pass "core build rebuilds a damaged entry" || fail "core build rebuilds a damaged entry (exit $rc)"
check damaged_rebuilt_runs 0 "" -- run "${matmul[@]}" --preset "$custom" --no-build
cmp -s <(field "$tmp/first.json" 'j["counters"]') <(field "$tmp/out" 'j["counters"]') &&
  pass "the rebuilt core counts the same" || fail "the rebuilt core counts the same"
[[ -z $(find "$XDG_CACHE_HOME/tpuemu/cores" -maxdepth 1 -name '.*.damaged') ]] &&
  pass "no damaged entry left aside" || fail "no damaged entry left aside"

# ---- a second build of one core waits, saying so once; Ctrl-C stops a build within a second
cores="$XDG_CACHE_HOME/tpuemu/cores"
wait_for() {  # wait_for FILE PATTERN SECONDS: until FILE has a line matching PATTERN
  local i
  for ((i = 0; i < $3 * 10; i++)); do grep -qF -- "$2" "$1" 2>/dev/null && return 0; sleep 0.1; done
  return 1
}
stopped_within() {  # stopped_within PID SECONDS: the process ends within SECONDS of now
  local i
  for ((i = 0; i < $2 * 20; i++)); do kill -0 "$1" 2>/dev/null || return 0; sleep 0.05; done
  return 1
}
leftovers() {  # processes still working in a build directory of the cache
  pgrep -af -- "$cores/\." | grep -v pgrep
}
setsid "$tpuemu" core build "$queue4" >"$tmp/a.out" 2>"$tmp/a.err" &
first_build=$!
wait_for "$tmp/a.err" "building the Verilated core of preset small-q4" 60 || fail "the first build did not start"
setsid "$tpuemu" core build "$queue4" --json >"$tmp/b.out" 2>"$tmp/b.err" &
second_build=$!
if wait_for "$tmp/b.err" "waiting for another build of this core to finish (it holds $cores/." 30; then
  sleep 1  # still waiting: still one line
  [[ $(grep -c . "$tmp/b.err") -eq 1 ]] && grep -qE "^tpuemu: waiting for another build of this core to finish \(it holds $cores/\.[0-9a-f]{16}\.lock\)$" "$tmp/b.err" &&
    pass "a second build says once that it waits, naming the lock" || fail "the waiting line: $(cat "$tmp/b.err")"
else
  fail "a second build waits silently"
fi
sleep 2  # the first build's tools are at work
kill -INT "$first_build"  # to tpuemu alone, not its process group
stopped_within "$first_build" 1 && pass "SIGINT to tpuemu alone stops the build within a second" ||
  fail "SIGINT to tpuemu alone: still running after a second"
wait "$first_build"; rc=$?
[[ $rc -eq 130 && $(tail -1 "$tmp/a.err") == "tpuemu: error: interrupted during the core build; nothing was written" && ! -s "$tmp/a.out" ]] &&
  pass "the interrupted build: exit 130, nothing was written" || fail "the interrupted build: exit $rc, $(tail -1 "$tmp/a.err")"
[[ -z $(find "$cores" -maxdepth 1 -name "*.failed.log") ]] && pass "no failed log for a stop" ||
  fail "a stop left a failed log"
sleep 0.5
[[ -z $(find "$cores" -maxdepth 1 -name ".*.$first_build.tmp") ]] && pass "the stopped build's directory is gone" ||
  fail "the stopped build's directory is left"
# The second build now takes the lock and builds the core itself.
wait "$second_build"; rc=$?
[[ $rc -eq 0 && $(field "$tmp/b.out" 'j["built"]') == True && $(grep -c . "$tmp/b.err") -eq 2 ]] &&
  grep -q "^tpuemu: building the Verilated core of preset small-q4 " "$tmp/b.err" &&
  pass "the waiting build builds the core once the first stopped" || fail "the waiting build (exit $rc)"
[[ -z $(leftovers) ]] && pass "no tool of a stopped build still runs" || fail "left running: $(leftovers)"
# Ctrl-C at a terminal: SIGINT to tpuemu's whole process group (its tools run in their own).
setsid "$tpuemu" core build "$out32" >"$tmp/c.out" 2>"$tmp/c.err" &
third_build=$!
wait_for "$tmp/c.err" "building the Verilated core of preset small-o32" 60 || fail "the third build did not start"
sleep 2
kill -INT -- "-$third_build"
stopped_within "$third_build" 1 && pass "Ctrl-C stops the build within a second" ||
  fail "Ctrl-C: still running after a second"
wait "$third_build"; rc=$?
[[ $rc -eq 130 && $(tail -1 "$tmp/c.err") == "tpuemu: error: interrupted during the core build; nothing was written" ]] &&
  pass "Ctrl-C: exit 130, nothing was written" || fail "Ctrl-C: exit $rc, $(tail -1 "$tmp/c.err")"
sleep 0.5
[[ -z $(leftovers) && -z $(find "$cores" -maxdepth 1 -name '.*.tmp') ]] && pass "Ctrl-C leaves no tool and no build directory" ||
  fail "Ctrl-C left: $(leftovers) $(find "$cores" -maxdepth 1 -name '.*.tmp')"
"$tpuemu" info --json >"$tmp/out"
[[ $(field "$tmp/out" '[c["preset"] for c in j["core_cache"]["cores"]]') == "['small-b1', 'small-q4']" ]] &&
  pass "only the finished builds are entries" || fail "entries after the stops"

# ---- a bare touch changes nothing; an edited RTL file makes the core stale and rebuilt
touch "$tmp/rtl/mem/vmem.sv"
check touched_reused 0 "" -- run "${matmul[@]}" --preset "$custom" --no-build
echo "// an edit" >>"$tmp/rtl/mem/vmem.sv"
check edited_refused 1 "tpuemu core build $custom\`" -- run "${matmul[@]}" --preset "$custom" --no-build
check info_stale 0 "" -- info
grep -q "stale: its sources changed" "$tmp/out" && pass "info marks the old core stale" || fail "info marks the old core stale"
t0=$(now)
check rebuilt 0 "" -- core build "$custom" --json
t1=$(now)
echo "timing: rebuild after an RTL edit $(seconds "$t0" "$t1") s"
[[ $(field "$tmp/out" 'j["built"]') == True && $(field "$tmp/out" 'j["hash"]') != "$hash1" ]] &&
  pass "an edited RTL file rebuilds under a new key" || fail "rebuild after an edit"
check rebuilt_runs 0 "" -- run "${matmul[@]}" --preset "$custom" --no-build
cmp -s <(field "$tmp/first.json" 'j["counters"]') <(field "$tmp/out" 'j["counters"]') &&
  pass "the rebuilt core counts the same" || fail "the rebuilt core counts the same"
[[ -z $(find "$XDG_CACHE_HOME/tpuemu/cores" -maxdepth 1 -name '.*.tmp') ]] && pass "no build directory left" ||
  fail "no build directory left"

# ---- presets the RTL cannot build: refused at load, naming the field (the contract's core_params)
entries() { find "$XDG_CACHE_HOME/tpuemu/cores" -mindepth 1 -maxdepth 1 -type d | sort; }
before=$(entries)
check dim4_refused 1 "^tpuemu: error: $dim4:[0-9]+:[0-9]+: /dim: must be a power of two in \[8, 256\], got 4: SMEM has dim/4 word banks" -- \
  core build "$dim4"
check acc1_refused 1 "^tpuemu: error: $acc1:[0-9]+:[0-9]+: /acc_rows: must be a power of two in \[2, 16777216\], got 1: " -- \
  run "${matmul[@]}" --preset "$acc1"
check dim4_refused_fake 1 "/dim: must be a power of two in \[8, 256\], got 4" -- run "${matmul[@]}" --preset "$dim4" --backend fake

# ---- a build that fails in Verilator: one line with its first error and the log, no entry
cp -r "$tmp/rtl" "$tmp/rtl-broken"
echo "module broken (; endmodule" >>"$tmp/rtl-broken/mem/vmem.sv"
# stderr: the progress line, then the error
TPUEMU_RTL_SOURCE_DIR="$tmp/rtl-broken" "$tpuemu" core build "$custom" >"$tmp/out" 2>"$tmp/err"; rc=$?
[[ $rc -eq 1 && $(grep -c . "$tmp/err") -eq 2 ]] && grep -q "^tpuemu: building the Verilated core of preset small-b1 " "$tmp/err" &&
  tail -1 "$tmp/err" | grep -qE "^tpuemu: error: core build: cmake configure of preset small-b1's core failed \(exit 1\): vmem.sv:[0-9]+:[0-9]+: syntax error.*: see $XDG_CACHE_HOME/tpuemu/cores/[0-9a-f]{16}.failed.log$" &&
  pass "a failed build: one line with Verilator's error and the log" || fail "a failed build (exit $rc): $(tail -1 "$tmp/err")"
log=$(grep -oE "[^ ]+\.failed\.log" "$tmp/err")
[[ -s $log ]] && pass "the failed build's log is kept" || fail "the failed build's log is kept"
[[ $(entries) == "$before" ]] && pass "a failed build leaves no entry and no build directory" ||
  fail "a failed build leaves no entry: $(entries)"

# ---- a missing RTL source is one line naming it
rm "$tmp/rtl/mem/vmem.sv"
check missing_source 1 "$tmp/rtl/mem/vmem.sv: cannot read a source of the core" -- run "${matmul[@]}" --preset "$custom"
finish
