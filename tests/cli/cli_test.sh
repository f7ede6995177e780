#!/usr/bin/env bash
# The tpuemu command line on good and bad input: exit codes, one-line errors naming cause and
# place, no partial output files.
set -u
tpuemu=$1
data=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0

# expect_error NAME EXIT_CODE PATTERN -- ARGS...
expect_error() {
  local name=$1 code=$2 pattern=$3
  shift 4
  "$tpuemu" "$@" >"$tmp/out" 2>"$tmp/err"
  local got=$?
  local lines
  lines=$(grep -c . "$tmp/err")
  if [[ $got -ne $code ]]; then
    echo "FAIL $name: exit $got, expected $code"; cat "$tmp/err"; failures=$((failures + 1)); return
  fi
  if [[ $lines -ne 1 ]]; then
    echo "FAIL $name: $lines lines on stderr, expected one"; cat "$tmp/err"; failures=$((failures + 1)); return
  fi
  if ! grep -qE "$pattern" "$tmp/err"; then
    echo "FAIL $name: stderr does not match /$pattern/"; cat "$tmp/err"; failures=$((failures + 1)); return
  fi
  echo "ok   $name: $(cat "$tmp/err")"
}

expect_error zero_shape 1 "is zero" -- run --matmul 0x16x16 --preset small
expect_error negative_shape 1 "not a positive integer" -- run --matmul 16x-4x16 --preset small
expect_error absurd_shape 1 "larger than" -- run --matmul 16x16x99999999999 --preset small
expect_error malformed_shape 1 "expected MxKxN" -- run --matmul 16x16 --preset small
expect_error too_many_elements 1 "more than 2\\^31 elements" -- run --matmul 1000000x1000000x16 --preset small
expect_error out_of_hbm 1 "out of HBM.*capacity" -- run --matmul 30000x30000x16 --preset small
expect_error unknown_preset 1 "unknown preset.*small" -- run --matmul 16x16x16 --preset nosuch
expect_error malformed_json 1 "bad_json.json:6:3" -- run "$data/bad_json.json" --preset small
expect_error bad_layer_chain 1 "bad_chain.json:6:7.*layer 1 takes 48" -- run "$data/bad_chain.json" --preset small
expect_error unknown_key 1 "unknown_key.json:4:3.*bathc" -- run "$data/unknown_key.json" --preset small
expect_error bad_buffers 2 "buffers" -- run --matmul 16x16x16 --buffers 4
expect_error no_workload 1 "either a workload file or --matmul" -- run --preset small
expect_error deadlock 1 "deadlock.*MXU.*s2" -- exec "$data/deadlock.s" --preset small
expect_error watchdog 1 "(timeout|watchdog)" -- run --matmul 64x64x64 --preset small --max-cycles 500
expect_error unknown_option 2 "nosuch" -- run --nosuch

# a report is written whole, or not at all
"$tpuemu" run --matmul 0x1x1 --preset small --report "$tmp/report.json" >/dev/null 2>&1
if ls "$tmp" | grep -q report; then echo "FAIL partial report left behind"; failures=$((failures + 1)); fi
if "$tpuemu" run "$data/small_mlp.json" --preset small --report "$tmp/report.json" >/dev/null 2>"$tmp/err" &&
   python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); sys.exit(0 if r["result"]["bit_exact"] else 1)' "$tmp/report.json"; then
  echo "ok   report written and bit-exact"
else
  echo "FAIL report: $(cat "$tmp/err")"; failures=$((failures + 1))
fi
if ls "$tmp" | grep -q '\.tmp'; then echo "FAIL temporary file left behind"; failures=$((failures + 1)); fi

# tpuemu plan (docs/planner.md): one-line errors with file:line:column, no output on failure
expect_error plan_bad_number 1 "plan_bad_number.csv:5:5: 'x3' is not a non-negative integer" -- plan "$data/plan_bad_number.csv" --capacity 64 --out "$tmp/plan_out.csv"
expect_error plan_negative_size 1 "plan_negative_size.csv:3:7: negative size" -- plan "$data/plan_negative_size.csv" --capacity 64 --out "$tmp/plan_out.csv"
expect_error plan_upper_le_lower 1 "plan_upper_le_lower.csv:3:5: upper 4 <= lower 9" -- plan "$data/plan_upper_le_lower.csv" --capacity 64 --out "$tmp/plan_out.csv"
expect_error plan_infeasible_peak 1 "infeasible: peak live bytes 48 at time 4 exceed the capacity 40" -- plan "$data/plan_ok.csv" --capacity 40 --out "$tmp/plan_out.csv"
expect_error plan_infeasible_search 1 "infeasible: exhaustive search found no placement" -- plan "$data/plan_infeasible.csv" --capacity 8 --out "$tmp/plan_out.csv"
expect_error plan_bad_capacity 2 "capacity" -- plan "$data/plan_ok.csv" --capacity 12XiB
if [[ -e "$tmp/plan_out.csv" ]]; then echo "FAIL plan: output written on failure"; failures=$((failures + 1)); fi
if "$tpuemu" plan "$data/plan_ok.csv" --capacity 48 --out "$tmp/plan_out.csv" >"$tmp/out" 2>"$tmp/err" &&
   head -1 "$tmp/plan_out.csv" | grep -q '^id,lower,upper,size,offset$' && [[ $(grep -c . "$tmp/plan_out.csv") -eq 6 ]]; then
  echo "ok   plan writes the placement with an offset column"
else
  echo "FAIL plan: $(cat "$tmp/err")"; failures=$((failures + 1))
fi

exit $((failures > 0))
