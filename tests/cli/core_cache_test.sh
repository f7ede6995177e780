#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A user's own preset on the RTL through the core cache (docs/core-cache.md): `small` with
# vmem_banks 1, a core no build compiles in. --no-build refuses naming the command; the first
# run builds the core (a progress line), the second reuses it (both timed); a matmul and a model
# run bit-exact (run exits 3 on a mismatch with the C++ reference, and result.bit_exact says so);
# the bank-conflict counters differ from the stock small core's; info lists the core; an edited
# RTL file (in a copy of rtl/, never the tree's) makes the core stale and rebuilt, a bare touch
# does not. A preset the RTL cannot build (dim 4: SMEM needs two word banks) fails in one line
# with the RTL's own reason and leaves no entry. Builds two cores: label slow.
# Usage: core_cache_test.sh <tpuemu> <source root>
tpuemu=$1
root=$2
source "$root/tests/cli/checks.sh"
check_timeout=1500

export XDG_CACHE_HOME="$tmp/cache"
cp -r "$root/rtl" "$tmp/rtl"
export TPUEMU_RTL_SOURCE_DIR="$tmp/rtl"
custom="$tmp/small-b1.json"
dim4="$tmp/small-d4.json"
python3 - "$root/configs/presets/small.json" "$custom" "$dim4" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
p.update(name="small-b1", description="small with one VMEM bank", vmem_banks=1)
json.dump(p, open(sys.argv[2], "w"), indent=2)
p.update(name="small-d4", description="small with a 4-lane MXU", dim=4, vmem_banks=4)
p["hbm"]["bytes_per_cycle"] = 4  # at most one 4-byte beat per cycle
json.dump(p, open(sys.argv[3], "w"), indent=2)
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

# ---- a preset the RTL refuses: one line with the RTL's reason and the log, no entry
entries() { find "$XDG_CACHE_HOME/tpuemu/cores" -mindepth 1 -maxdepth 1 -type d | sort; }
before=$(entries)
# stderr: the progress line, then the error
"$tpuemu" core build "$dim4" >"$tmp/out" 2>"$tmp/err"; rc=$?
[[ $rc -eq 1 && $(grep -c . "$tmp/err") -eq 2 ]] && grep -q "^tpuemu: building the Verilated core of preset small-d4 " "$tmp/err" &&
  tail -1 "$tmp/err" | grep -qE "^tpuemu: error: core build: cmake configure of preset small-d4's core failed \(exit 1\): smem.sv:[0-9]+:[0-9]+: smem: Dim/4 \(1\) must be a power of two of at least 2 .*: see $XDG_CACHE_HOME/tpuemu/cores/[0-9a-f]{16}.failed.log$" &&
  pass "dim 4: refused by the RTL in one line naming the log" || fail "dim 4 refused by the RTL (exit $rc)"
log=$(grep -oE "[^ ]+\.failed\.log" "$tmp/err")
[[ -s $log ]] && pass "the failed build's log is kept" || fail "the failed build's log is kept"
[[ $(entries) == "$before" ]] && pass "a failed build leaves no entry and no build directory" ||
  fail "a failed build leaves no entry: $(entries)"

# ---- a missing RTL source is one line naming it
rm "$tmp/rtl/mem/vmem.sv"
check missing_source 1 "$tmp/rtl/mem/vmem.sv: cannot read a source of the core" -- run "${matmul[@]}" --preset "$custom"
finish
