#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tpuemu sweep (docs/sweep.md) on a tiny real grid: examples/mlp.json on preset small with the fake
# backend, buffers x batch. The table and the plots are written; a bad grid, a point the runner
# cannot run and a bad model are one line on stderr, exit 1, and leave no output directory. A
# sharded grid runs the same on threads and as 2 MPI ranks.
set -u
tpuemu=$1
root=$2
source "$(dirname "${BASH_SOURCE[0]}")/checks.sh"

# The model beside the grid, named relative to the grid's folder; the sweep runs from elsewhere.
mkdir -p "$tmp/grids/models" "$tmp/elsewhere"
cp "$root/examples/mlp.json" "$tmp/grids/models/mlp.json"
cat >"$tmp/grids/grid.json" <<'JSON'
{
  "model": "models/mlp.json",
  "axes": {"batch": [2, 64], "buffers": [1, 2], "preset": ["small"], "backend": ["fake"]},
  "metrics": ["step_cycles", "hbm_peak_bytes"],
  "x": "batch"
}
JSON
cd "$tmp/elsewhere"
"$tpuemu" sweep ../grids/grid.json -o out --jobs 2 >"$tmp/stdout" 2>"$tmp/err"
got=$?
if [[ $got -ne 0 ]]; then
  fail "good_grid: exit $got"
else
  header="buffers,preset,batch,backend,analytic_min_bytes,bit_exact,dma_bytes,fragmentation,hbm_peak_bytes,interconnect_bytes,load_balance,memory_saved,mxu_utilization,step_cycles,wall_seconds"
  [[ $(head -1 out/sweep.csv) == "$header" ]] && pass "csv_header" || fail "csv_header: $(head -1 out/sweep.csv)"
  [[ $(tail -n +2 out/sweep.csv | grep -c .) -eq 4 ]] && pass "csv_has_4_rows" || fail "csv_has_4_rows"
  [[ $(ls out | sort | tr '\n' ' ') == "plot-hbm_peak_bytes.svg plot-step_cycles.svg sweep.csv sweep.json " ]] &&
    pass "outputs: the table and a plot per metric" || fail "outputs: $(ls -A out | tr '\n' ' ')"
  for plot in out/plot-*.svg; do
    # x = batch; a series per value of buffers, the only other axis that varies
    if [[ $(grep -c "<polyline" "$plot") -eq 2 ]] && grep -q "class=\"legend\">buffers=1<" "$plot" &&
       grep -q "class=\"legend\">buffers=2<" "$plot" && grep -q "^</svg>" "$plot"; then
      pass "$(basename "$plot"): two series"
    else
      fail "$(basename "$plot"): two series"
    fi
  done
  python3 - out/sweep.csv <<'PY' && pass "results follow the axes (batch 64 takes longer, every point bit-exact)" || fail "results follow the axes"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert [(r["buffers"], r["batch"]) for r in rows] == [("1", "2"), ("1", "64"), ("2", "2"), ("2", "64")], rows
assert all(r["bit_exact"] == "true" for r in rows), rows
cycles = {(r["buffers"], r["batch"]): int(r["step_cycles"]) for r in rows}
assert cycles[("1", "64")] > cycles[("1", "2")] and cycles[("2", "64")] > cycles[("2", "2")], cycles
PY
fi

# --json: the contents of sweep.json on stdout
"$tpuemu" sweep ../grids/grid.json -o out-json --json >"$tmp/stdout" 2>"$tmp/err" &&
  python3 - "$tmp/stdout" out-json/sweep.json <<'PY' && pass "json_stdout_is_sweep_json" || fail "json_stdout_is_sweep_json"
import json, sys
j = json.load(open(sys.argv[1]))
f = json.load(open(sys.argv[2]))
assert len(j["rows"]) == 4 and j["axes"] == ["buffers", "preset", "batch", "backend"], j
assert j["grid"] == f["grid"] and [r["values"] for r in j["rows"]] == [r["values"] for r in f["rows"]]
PY

# bad NAME GRID-TEXT PATTERN...: exit 1, one line on stderr matching every pattern, no output dir
bad() {
  local name=$1 text=$2
  shift 2
  printf '%s\n' "$text" >"$tmp/grids/bad.json"
  rm -rf bad-out
  "$tpuemu" sweep ../grids/bad.json -o bad-out >"$tmp/stdout" 2>"$tmp/err"
  local got=$?
  if [[ $got -ne 1 ]]; then fail "$name: exit $got, expected 1"; return; fi
  if [[ $(grep -c . "$tmp/err") -ne 1 ]]; then fail "$name: not one line on stderr"; return; fi
  for p in "$@"; do
    if ! grep -qF -e "$p" "$tmp/err"; then fail "$name: stderr lacks '$p'"; return; fi
  done
  if [[ -e bad-out ]]; then fail "$name: left an output directory"; return; fi
  pass "$name"
}
bad unknown_axis $'{"model": "models/mlp.json",\n "axes": {"buffers": [1], "threads": [2]}}' \
  "../grids/bad.json:2:27: /axes/threads: unknown axis \"threads\""
bad duplicate_value $'{"model": "models/mlp.json",\n  "axes": {"batch": [2, 2]}}' \
  "../grids/bad.json:2:12: /axes/batch/1: duplicate value 2"
bad syntax $'{"model": "models/mlp.json",\n "axes": {"batch": [2,]}}' "../grids/bad.json:2:23:"
bad devices_need_a_shard_axis \
  '{"model": "models/mlp.json", "axes": {"devices": [2], "preset": ["small"], "backend": ["fake"]}}' \
  "sweep point 0 (devices=2 preset=small backend=fake): devices 2: the grid needs a shard axis (batch, tensor, fsdp)"
bad split_that_cannot_be_made \
  '{"model": "models/mlp.json", "axes": {"devices": [1, 3], "shard": ["tensor"], "preset": ["small"], "backend": ["fake"]}}' \
  "sweep point 1 (devices=3 shard=tensor preset=small backend=fake): --shard tensor: layer 'layer 0' has 256 output channels"
bad unknown_preset '{"model": "models/mlp.json", "axes": {"preset": ["tiny"], "backend": ["fake"]}}' \
  "sweep point 0 (preset=tiny backend=fake): unknown preset \"tiny\""
bad missing_model '{"model": "models/none.json", "axes": {"batch": [2]}}' \
  "../grids/bad.json: /model: ../grids/models/none.json: cannot open"

# A sharded grid on the Verilated cores: one process on threads, and 2 MPI ranks sharing the
# points, write the same table (but for wall time); the figures follow the shard modes.
cd "$tmp/elsewhere"
cat >"$tmp/grids/shard.json" <<'JSON'
{"model": "models/mlp.json",
 "axes": {"devices": [1, 4], "shard": ["batch", "tensor", "fsdp"], "preset": ["small"], "backend": ["rtl"]},
 "x": "devices"}
JSON
if "$tpuemu" sweep ../grids/shard.json -o shard-threads --jobs 2 --json >"$tmp/threads.json" 2>"$tmp/err" &&
   mpirun --allow-run-as-root --oversubscribe -np 2 "$tpuemu" sweep ../grids/shard.json -o shard-mpi --json >"$tmp/mpi.json" 2>"$tmp/err"; then
  python3 - "$tmp/threads.json" "$tmp/mpi.json" shard-mpi/sweep.json <<'PY' && pass "sharded grid: threads and 2 MPI ranks agree; tensor saves memory" || fail "sharded grid"
import json, sys
def rows(path):
    j = json.load(open(path))
    for r in j["rows"]:
        r["results"].pop("wall_seconds")
    return j["rows"]
a, b, c = rows(sys.argv[1]), rows(sys.argv[2]), rows(sys.argv[3])
assert a == b == c and len(a) == 6, (len(a), len(b))
by = {(r["values"]["devices"], r["values"]["shard"]): r["results"] for r in a}
assert all(r["bit_exact"] for r in by.values())
assert by[(4, "tensor")]["hbm_peak_bytes"] < by[(1, "tensor")]["hbm_peak_bytes"]
assert by[(4, "fsdp")]["interconnect_bytes"] == by[(4, "fsdp")]["analytic_min_bytes"] > 0
assert by[(1, "batch")]["interconnect_bytes"] == 0
PY
else
  fail "sharded grid: exit $?"
fi

echo "$failures failure(s)"
[[ $failures -eq 0 ]]
