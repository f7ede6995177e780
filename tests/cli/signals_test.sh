#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# One signal stops any long command within a second (docs/cli.md, "Exit codes"): SIGINT or SIGTERM
# while the command works ends it with exit 130 and one line saying it was interrupted and that
# nothing was written, and no output or temporary file is left. Each case runs a command that
# takes many seconds (inputs from gen_hard_inputs.py), signals it once it is at work, and measures
# how long it takes to end. Host code, the tlm backend and the compiled-in default core.
set -u
tpuemu=$1
root=$2
source "$(dirname "${BASH_SOURCE[0]}")/checks.sh"
python3 "$root/tests/cli/gen_hard_inputs.py" "$tmp" || { echo "FAIL cannot generate the inputs"; exit 1; }
# The bound of the house is 1 s; the slack covers a loaded two-core CI machine.
limit=1.5

# stops NAME SIGNAL OUTPUT -- ARGS...: tpuemu ARGS, signalled after 1.5 s, ends within $limit s
# with exit 130, one "interrupted ...nothing was written" line, and OUTPUT (a path) not created.
stops() {
  local name=$1 sig=$2 output=$3
  shift 4
  "$tpuemu" "$@" >"$tmp/out" 2>"$tmp/err" &
  local pid=$!
  sleep 1.5
  if ! kill -0 "$pid" 2>/dev/null; then
    wait "$pid"
    fail "$name: ended by itself (exit $?) before the signal: the input is too small"
    return
  fi
  local t0 t1 rc
  t0=$(date +%s.%N)
  kill -"$sig" "$pid"
  # wait returns early only on the child's end; a hang is caught by ctest's timeout
  wait "$pid"; rc=$?
  t1=$(date +%s.%N)
  local took
  took=$(python3 -c "print(f'{$t1 - $t0:.3f}')")
  if [[ $rc -ne 130 ]]; then fail "$name: exit $rc, expected 130"; return; fi
  if [[ $(grep -c . "$tmp/err") -ne 1 ]] || ! grep -qE "interrupted.*nothing was written" "$tmp/err"; then
    fail "$name: stderr '$(cat "$tmp/err")'"; return
  fi
  if [[ -n "$output" && -e "$output" ]]; then fail "$name: $output was written"; return; fi
  if python3 -c "import sys; sys.exit(0 if $took <= $limit else 1)"; then
    pass "$name: stopped in $took s: $(cat "$tmp/err")"
  else
    fail "$name: took $took s to stop (limit $limit s)"
  fi
}

stops "analyze X.hlo, the planner's search, SIGINT" INT "$tmp/a1" -- analyze "$tmp/hard.hlo" --allocator planner --schedule text -o "$tmp/a1"
stops "analyze X.hlo, the planner's search, SIGTERM" TERM "$tmp/a2.json" -- analyze "$tmp/hard.hlo" --allocator planner --schedule text --report "$tmp/a2.json"
stops "plan, the search, SIGINT" INT "$tmp/p.csv" -- plan "$tmp/hard.csv" --capacity 2420000 --timeout 600 -o "$tmp/p.csv"
stops "hbm, a long pattern, SIGINT" INT "$tmp/h.json" -- hbm --pattern random --requests 100000000 -o "$tmp/h.json"
stops "run on tlm, the C++ reference of a large matmul, SIGINT" INT "$tmp/r.json" -- run --matmul 4096x4096x2048 --preset default --backend tlm --report "$tmp/r.json"
# The reference of this one takes a fraction of a second; its one launch on the Verilated core many.
stops "run on rtl, one long launch, SIGTERM" TERM "$tmp/l.json" -- run --matmul 1024x1024x1024 --preset default --backend rtl --report "$tmp/l.json"
stops "sweep, points running on two threads, SIGINT" INT "$tmp/sw" -- sweep "$root/examples/sweep/mlp.json" --jobs 2 -o "$tmp/sw"
leftovers=$(find "$tmp" \( -name '*.tmp*' -o -name '.*staging*' \) -print | head -3)
[[ -z "$leftovers" ]] && pass "no temporary file left" || fail "left $leftovers"
finish
