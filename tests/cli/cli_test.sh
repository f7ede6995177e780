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

exit $((failures > 0))
