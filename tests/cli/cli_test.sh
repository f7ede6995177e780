#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The tpuemu command line on good and bad input: exit codes, one-line errors naming cause and
# place, no partial output files.
set -u
tpuemu=$1
data=$2
source "$(dirname "${BASH_SOURCE[0]}")/checks.sh"
fail_context=100  # the whole of stderr

check zero_shape 2 "is zero" -- run --matmul 0x16x16 --preset small
check negative_shape 2 "not a positive integer" -- run --matmul 16x-4x16 --preset small
check absurd_shape 2 "larger than" -- run --matmul 16x16x99999999999 --preset small
check malformed_shape 2 "is not MxKxN" -- run --matmul 16x16 --preset small
check too_many_elements 2 "more than 2\\^31 elements" -- run --matmul 1000000x1000000x16 --preset small
check out_of_hbm 1 "out of HBM.*capacity" -- run --matmul 30000x30000x16 --preset small
check unknown_preset 1 "unknown preset.*small" -- run --matmul 16x16x16 --preset nosuch
check malformed_json 1 "bad_json.json:6:3" -- run "$data/bad_json.json" --preset small
check bad_layer_chain 1 "bad_chain.json:6:7.*layer 1 takes 48" -- run "$data/bad_chain.json" --preset small
check unknown_key 1 "unknown_key.json:4:3.*bathc" -- run "$data/unknown_key.json" --preset small
check bad_buffers 2 "buffers" -- run --matmul 16x16x16 --buffers 4
check no_workload 2 "either a workload file or --matmul" -- run --preset small
check deadlock 1 "deadlock.*MXU.*s2" -- exec "$data/deadlock.s" --preset small
check watchdog 1 "(timeout|watchdog)" -- run --matmul 64x64x64 --preset small --max-cycles 500
check unknown_option 2 "nosuch" -- run --nosuch

# ---- allocation traces: tpuemu replay / trace (docs/allocation.md)
root="$data/../.."
check replay_bad_number 1 "alloc_bad_number.csv:3:11: size 'x12' is not a non-negative integer" -- replay "$data/alloc_bad_number.csv" --capacity 1MiB
check replay_negative_size 1 "alloc_negative.csv:2:11: negative size -4096" -- replay "$data/alloc_negative.csv" --capacity 1MiB
check replay_unknown_free 1 "alloc_unknown_free.csv:3:8: free of unknown id 'b'" -- replay "$data/alloc_unknown_free.csv" --capacity 1MiB
check replay_unknown_allocator 2 "--allocator: 'slab' is not one of bfc, first-fit, best-fit, buddy, tlsf" -- replay "$root/examples/traces/mlp-serving.csv" --capacity 1MiB --allocator slab
check replay_bad_capacity 2 "unknown size unit" -- replay "$root/examples/traces/mlp-serving.csv" --capacity 12parsecs
check replay_no_vmem_capacity 1 "no capacity for memory space 'vmem'" -- replay "$root/examples/traces/mlp-serving.csv" --capacity hbm=1GiB
check replay_out_of_memory 1 "mlp-serving.csv:[0-9]+: out of hbm memory \\(bfc.*largest free block.*largest live buffers: 'w.layer0'" -- replay "$root/examples/traces/mlp-serving.csv" --capacity 300KiB
check run_unknown_allocator 2 "--allocator: 'nosuch' is not one of bfc, first-fit, best-fit, buddy, tlsf, xla, planner, all" -- run --matmul 16x16x16 --preset small --allocator nosuch
check trace_zero_batch 2 "--batches: 0 is smaller than 1" -- trace "$root/examples/mlp.json" --batches 4,0

# every policy replays the shipped traces without failing at a capacity that holds them, and the
# time series is written whole
if "$tpuemu" replay "$root/examples/traces/cnn-serving.csv" --capacity 1GiB --allocator all --out "$tmp/series.csv" >"$tmp/out" 2>"$tmp/err" &&
   grep -q "tlsf" "$tmp/out" && [[ $(grep -c '^hbm,buddy,' "$tmp/series.csv") -gt 300 ]]; then
  echo "ok   replay --allocator all with a time series"
else
  echo "FAIL replay all: $(cat "$tmp/err")"; failures=$((failures + 1))
fi
if "$tpuemu" replay "$root/examples/traces/mlp-serving.csv" --capacity 1GiB --allocator tlsf,buddy >"$tmp/out" 2>"$tmp/err" &&
   grep -qE "policy +tlsf +buddy$" "$tmp/out"; then
  echo "ok   replay --allocator with a list"
else
  echo "FAIL replay list: $(cat "$tmp/err")"; failures=$((failures + 1))
fi
check plan_trace_unknown_space 1 "cnn-serving.csv: no buffers in space 'gpu'" -- plan "$root/examples/traces/cnn-serving.csv" --space gpu --capacity 1MiB --out "$tmp/p.csv"
# the offline planner packs a trace's VMEM buffers at exactly their peak live bytes (180 KiB)
if "$tpuemu" plan "$root/examples/traces/cnn-serving.csv" --space vmem --capacity 180KiB --out "$tmp/vmem-plan.csv" >"$tmp/out" 2>"$tmp/err" &&
   head -1 "$tmp/vmem-plan.csv" | grep -q ',offset$'; then
  echo "ok   plan --space on an allocation trace"
else
  echo "FAIL plan --space: $(cat "$tmp/err")"; failures=$((failures + 1))
fi
# the shipped traces are exactly what the project generates from its workloads today
if bash "$root/scripts/gen-traces.sh" "$tpuemu" "$tmp/traces" 2>"$tmp/err" &&
   cmp -s "$tmp/traces/mlp-serving.csv" "$root/examples/traces/mlp-serving.csv" &&
   cmp -s "$tmp/traces/cnn-serving.csv" "$root/examples/traces/cnn-serving.csv" &&
   cmp -s "$tmp/traces/mlp-bursty.csv" "$root/examples/traces/mlp-bursty.csv"; then
  echo "ok   examples/traces regenerate identically"
else
  echo "FAIL examples/traces differ from scripts/gen-traces.sh output (rerun it): $(cat "$tmp/err")"; failures=$((failures + 1))
fi
# a run records its HBM allocations as a trace that replays
if "$tpuemu" run "$data/small_mlp.json" --preset small --allocator tlsf --alloc-trace "$tmp/run-trace.csv" >"$tmp/out" 2>"$tmp/err" &&
   grep -q "HBM alloc   tlsf" "$tmp/out" &&
   "$tpuemu" replay "$tmp/run-trace.csv" --capacity 64MiB --allocator all >/dev/null 2>>"$tmp/err"; then
  echo "ok   run --alloc-trace replays"
else
  echo "FAIL run --alloc-trace: $(cat "$tmp/err")"; failures=$((failures + 1))
fi

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

# tpuemu plan (docs/allocation.md): one-line errors with file:line:column, no output on failure
check plan_bad_number 1 "plan_bad_number.csv:5:5: [a-z]+ 'x3' is not a non-negative integer" -- plan "$data/plan_bad_number.csv" --capacity 64 --out "$tmp/plan_out.csv"
check plan_negative_size 1 "plan_negative_size.csv:3:7: negative size" -- plan "$data/plan_negative_size.csv" --capacity 64 --out "$tmp/plan_out.csv"
check plan_upper_le_lower 1 "plan_upper_le_lower.csv:3:5: upper 4 <= lower 9" -- plan "$data/plan_upper_le_lower.csv" --capacity 64 --out "$tmp/plan_out.csv"
check plan_infeasible_peak 1 "infeasible: peak live bytes 48 at time 4 exceed the capacity 40" -- plan "$data/plan_ok.csv" --capacity 40 --out "$tmp/plan_out.csv"
check plan_infeasible_search 1 "infeasible: exhaustive search found no placement" -- plan "$data/plan_infeasible.csv" --capacity 8 --out "$tmp/plan_out.csv"
check plan_bad_capacity 2 "capacity" -- plan "$data/plan_ok.csv" --capacity 12XiB
[[ -e "$tmp/plan_out.csv" ]] && fail "plan: output written on failure"
if "$tpuemu" plan "$data/plan_ok.csv" --capacity 48 --out "$tmp/plan_out.csv" >"$tmp/out" 2>"$tmp/err" &&
   head -1 "$tmp/plan_out.csv" | grep -q '^id,lower,upper,size,offset$' && [[ $(grep -c . "$tmp/plan_out.csv") -eq 6 ]]; then
  pass "plan writes the placement with an offset column"
else
  fail "plan"
fi
finish
