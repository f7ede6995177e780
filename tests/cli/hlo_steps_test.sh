#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `tpuemu trace PROGRAM.hlo --steps N [--also OTHER.hlo]` (docs/hlo.md, "The runtime across
# steps"): the trace of a JAX loop, read back by replay; the options of workloads and of HLO
# programs refused across; and the long-run finding at a reduced scale: best-fit fails only after
# a thousand steps while first-fit never does at the same capacity. Host code only (label quick).
set -u
tpuemu=$1
root=$2
source "$(dirname "${BASH_SOURCE[0]}")/checks.sh"
data=$root/tests/data/hlo

# ---- a valid trace that replay reads: resident arguments once, per step outputs and one block
check trace_io_alias 0 "" -- trace "$data/io_alias.hlo" --steps 3 -o "$tmp/t.csv"
[[ $(grep -c ',alloc,s[0-9]*\.jit_train_step\.temp,' "$tmp/t.csv") -eq 3 ]] && pass "one temporary block a step" ||
  fail "one temporary block a step"
# The donated params and momentum are allocated once and never again: output {0} and {1} are their buffers.
[[ $(grep -c ',jit_train_step\.params,' "$tmp/t.csv") -eq 1 && $(grep -c ',free,jit_train_step\.' "$tmp/t.csv") -eq 0 ]] &&
  pass "donated state resident" || fail "donated state resident"
check replay_reads_it 0 "" -- replay "$tmp/t.csv" --capacity 64MiB --allocator all
check trace_json 0 "" -- trace "$data/io_alias.hlo" --also "$data/mlp3.hlo" --steps 4 -o "$tmp/t2.csv" --json
python3 - "$tmp/out" "$tmp/t2.csv" <<'PY' && pass "json summary and alternation" || fail "json summary and alternation"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["steps"] == 4 and [p["name"] for p in j["programs"]] == ["jit_train_step", "jit_mlp"]
rows = [l.split(",") for l in open(sys.argv[2]).read().splitlines()[1:]]
assert j["events"] == len(rows)
temps = [r[2] for r in rows if r[1] == "alloc" and r[2].endswith(".temp")]
assert temps == ["s0.jit_train_step.temp", "s1.jit_mlp.temp", "s2.jit_train_step.temp", "s3.jit_mlp.temp"], temps
PY

# ---- options of the other kind refused, never ignored
check hlo_batches 2 "--batches: applies to a workload served in requests" -- trace "$data/mlp3.hlo" --steps 2 --batches 1,8
check hlo_requests 2 "--requests: applies to a workload" -- trace "$data/mlp3.hlo" --steps 2 --requests 4
check hlo_in_flight 2 "--in-flight: applies to a workload" -- trace "$data/mlp3.hlo" --steps 2 --in-flight 2
check hlo_no_steps 2 "--steps: an HLO program's trace needs the number of steps" -- trace "$data/mlp3.hlo"
check hlo_zero_steps 2 "--steps" -- trace "$data/mlp3.hlo" --steps 0
check hlo_also_json 2 "--also: .* is not HLO text" -- trace "$data/mlp3.hlo" --steps 2 --also "$root/examples/mlp.json"
check workload_steps 2 "--steps: applies to an HLO program's steps" -- trace "$root/examples/mlp.json" --batches 1 --steps 3
check workload_also 2 "--also: applies to an HLO program's steps" -- trace "$root/examples/mlp.json" --batches 1 --also "$data/mlp3.hlo"
check workload_no_batches 2 "--batches: a workload's trace needs the batch size" -- trace "$root/examples/mlp.json"
check workload_still_works 0 "" -- trace "$root/examples/mlp.json" --batches 1,8 -q
check bad_module 1 "unknown_opcode.hlo:[0-9]+:[0-9]+: unknown opcode" -- trace "$data/bad/unknown_opcode.hlo" --steps 2
cp "$data/bad/unknown_opcode.hlo" "$tmp/bad.hlo"
check bad_module_nothing_written 1 "bad.hlo:[0-9]+:[0-9]+: " -- trace "$tmp/bad.hlo" --steps 2 -o "$tmp/none.csv"
[[ ! -e "$tmp/none.csv" ]] && pass "no partial trace" || fail "a partial trace was written"

# ---- the long-run finding, at 1/62.5 of the docs' scale: the same creep, 64 steps per scale unit.
# Capacity = peak live + 32768 B x 16. best-fit's highest block rises 256 B a step until, at step
# 1026, the train step's temporary block finds no hole (fragmentation: it would fit unfragmented);
# first-fit never fails, here or over 10^5 steps.
small="$data/steps_train_small.hlo --also $data/steps_eval_small.hlo"
check long_trace 0 "" -- trace $small --steps 1500 -o "$tmp/long.csv"
check long_first_fit 0 "" -- replay "$tmp/long.csv" --capacity 3680288 --allocator first-fit
check long_best_fit 1 "'step 1026 temporaries of train_step' .* would fit without fragmentation" -- \
  replay "$tmp/long.csv" --capacity 3680288 --allocator best-fit
# Not an early failure: the first 1026 steps fit under best-fit at that capacity.
check long_best_fit_early 0 "" -- trace $small --steps 1026 -o "$tmp/early.csv"
check best_fit_holds_1026_steps 0 "" -- replay "$tmp/early.csv" --capacity 3680288 --allocator best-fit
# And first-fit holds 10^5 steps at that capacity (the claim of docs/hlo.md at this scale).
check long_trace_100k 0 "" -- trace $small --steps 100000 -o "$tmp/100k.csv"
check first_fit_holds_100k 0 "" -- replay "$tmp/100k.csv" --capacity 3680288 --allocator first-fit

finish
