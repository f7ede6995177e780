#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `tpuemu run -o DIR` (docs/profile.md): the artefacts are written, `go tool pprof` (Debian's
# golang-go, installed by scripts/setup.sh: a missing tool is a failure) reads memory.pb.gz and its
# total equals the allocator's peak live bytes, trace.json is valid trace-event JSON with a buffer
# slice per allocation, and a failed run leaves nothing in DIR.
set -u
tpuemu=$1
root=$2
source "$(dirname "${BASH_SOURCE[0]}")/checks.sh"
fail_context=0  # the failure messages carry the error
export HOME=$tmp GOCACHE=$tmp/gocache
command -v go >/dev/null || { echo "FAIL go (golang-go) is not installed: run scripts/setup.sh"; exit 1; }

"$tpuemu" run "$root/examples/mlp.json" --preset small -q -o "$tmp/r" 2>"$tmp/err" || fail "run -o: $(cat "$tmp/err")"
for f in summary.json fragmentation.csv memory.pb.gz trace.json report.html; do
  [[ -s "$tmp/r/$f" ]] && pass "$f written" || fail "$f missing"
done
peak=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["hbm_allocation"]["peak_live_bytes"])' "$tmp/r/summary.json")
top=$(go tool pprof -top -unit=B -sample_index=space "$tmp/r/memory.pb.gz" 2>&1)
total=$(sed -nE 's/^Showing nodes accounting for ([0-9]+)B, [0-9.]+% of ([0-9]+)B total$/\2/p' <<<"$top")
[[ -n "$total" && "$total" == "$peak" ]] && pass "pprof total $total B = the allocator's peak live bytes" ||
  { fail "pprof total '$total' != peak $peak"; echo "$top" | head -5; }
grep -q "layer 0 weights" <<<"$top" && pass "pprof lists buffers by owner" || fail "pprof -top lacks buffers"
count=$(go tool pprof -top -sample_index=allocations "$tmp/r/memory.pb.gz" 2>&1 | sed -nE 's/^Showing nodes accounting for ([0-9]+), 100% of ([0-9]+) total$/\2/p')
allocs=$(grep -c ',alloc,' <(python3 - "$tmp/r/trace.json" <<'PY'
import json, sys
for e in json.load(open(sys.argv[1]))["traceEvents"]:
    if e["ph"] == "b": print("x,alloc,")
PY
))
[[ "$count" -ge 1 && "$allocs" -ge "$count" ]] && pass "allocations/count $count, $allocs buffer slices in trace.json" || fail "counts: pprof $count, trace $allocs"
python3 - "$tmp/r/trace.json" <<'PY' && pass "trace.json: balanced b/e slices and counter tracks" || fail "trace.json structure"
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
b = [e["id"] for e in ev if e["ph"] == "b"]; e_ = [e["id"] for e in ev if e["ph"] == "e"]
counters = {e["name"] for e in ev if e["ph"] == "C"}
sys.exit(0 if b and sorted(b) == sorted(e_) and {"hbm bytes", "hbm largest free block", "hbm external fragmentation"} <= counters else 1)
PY
head -1 "$tmp/r/fragmentation.csv" | grep -q "^space,policy,event,time,live_bytes" && pass "fragmentation.csv header" || fail "fragmentation.csv header"
# The issue's acceptance run: the CNN on `default` (the HBM model) with two requests in flight.
"$tpuemu" run "$root/examples/cnn.json" --requests 2 -q -o "$tmp/cnn" 2>"$tmp/err" || fail "cnn run -o: $(cat "$tmp/err")"
for f in summary.json fragmentation.csv memory.pb.gz trace.json report.html; do
  [[ -s "$tmp/cnn/$f" ]] && pass "cnn: $f written" || fail "cnn: $f missing"
done
peak=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["hbm_allocation"]["peak_live_bytes"])' "$tmp/cnn/summary.json")
total=$(go tool pprof -top -unit=B -sample_index=space "$tmp/cnn/memory.pb.gz" 2>&1 |
        sed -nE 's/^Showing nodes accounting for ([0-9]+)B, [0-9.]+% of ([0-9]+)B total$/\2/p')
[[ -n "$total" && "$total" == "$peak" ]] && pass "cnn: pprof total $total B = the allocator's peak live bytes" ||
  fail "cnn: pprof total '$total' != peak $peak"
# --profile-at a cycle: the live bytes of the allocator's last sample at or before it
at=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["steps"][3]["start_cycle"] + 1)' "$tmp/cnn/summary.json")
"$tpuemu" run "$root/examples/cnn.json" --requests 2 --profile-at "$at" -q -o "$tmp/at" 2>"$tmp/err" || fail "--profile-at $at: $(cat "$tmp/err")"
at_total=$(go tool pprof -top -unit=B -sample_index=space "$tmp/at/memory.pb.gz" 2>&1 |
           sed -nE 's/^Showing nodes accounting for ([0-9]+)B, [0-9.]+% of ([0-9]+)B total$/\2/p')
at_live=$(python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))["hbm_allocation"]["samples"]
print([x for x in s if x["time"] <= int(sys.argv[2])][-1]["live_bytes"])' "$tmp/at/summary.json" "$at")
[[ -n "$at_total" && "$at_total" == "$at_live" ]] && pass "--profile-at $at: pprof total $at_total B = the allocator's live bytes then" ||
  fail "--profile-at $at: pprof '$at_total' vs live '$at_live'"
python3 - "$tmp/cnn/trace.json" "$tmp/cnn/summary.json" <<'PY' && pass "cnn trace.json: instructions on every queue, busy and refresh on every HBM channel" || fail "cnn trace.json engine/HBM tracks"
import json, sys
t = json.load(open(sys.argv[1]))
channels = json.load(open(sys.argv[2]))["hbm_device"]["channels"]
names = {}
for e in t["traceEvents"]:
    if e["ph"] == "M" and e["name"] == "process_name": names[e["pid"]] = e["args"]["name"]
threads = {}
for e in t["traceEvents"]:
    if e["ph"] == "M" and e["name"] == "thread_name": threads[(e["pid"], e["tid"])] = e["args"]["name"]
per_track = {}
for e in t["traceEvents"]:
    if e["ph"] == "X":
        key = (names[e["pid"]], threads[(e["pid"], e["tid"])].split(" (")[0])
        per_track.setdefault(key, set()).add(e["name"])
for q in ("DMA queue", "MXU queue", "vector queue"):
    assert per_track.get(("core", q)), f"no instructions on {q}"
assert {"DMA", "LOADW", "MATMUL"} <= per_track[("core", "DMA queue")] | per_track[("core", "MXU queue")]
assert {"VQUANT", "VADD"} <= per_track[("core", "vector queue")], per_track[("core", "vector queue")]
assert any(n.startswith("wait s") for names_ in per_track.values() for n in names_), "no semaphore waits"
for c in range(channels):
    got = per_track.get(("HBM", f"channel {c}"), set())
    assert {"busy", "refresh"} <= got, f"channel {c}: {got}"
PY

# Ctrl-C: the run stops before the next step or within the launch it is in, exit 130, one line
# on stderr, nothing in DIR
"$tpuemu" run "$root/examples/ffn.json" --requests 16 -q -o "$tmp/intr" 2>"$tmp/intr.err" &
pid=$!
sleep 3
kill -INT "$pid"
wait "$pid"
rc=$?
[[ $rc -eq 130 && $(grep -c . "$tmp/intr.err") -eq 1 && ! -e "$tmp/intr" ]] && grep -qE "interrupted (before step|during a run on the device)" "$tmp/intr.err" &&
  pass "Ctrl-C: exit 130, '$(cat "$tmp/intr.err")', no output directory" || fail "Ctrl-C: exit $rc, $(cat "$tmp/intr.err")"

# The progress bar: on a terminal (script(1) from util-linux gives the run a pty) a run longer than
# a second shows layers done, cycles, cycles/s and an ETA, and clears its line at the end; with
# stderr not a terminal it stays silent.
script -qec "'$tpuemu' run '$root/examples/ffn.json' --requests 2 >/dev/null" "$tmp/pty.log" >/dev/null
bar=$(tr '\r' '\n' <"$tmp/pty.log" | grep -ac 'layers .* M cycles .* k cycles/s  ETA')
[[ $bar -ge 1 ]] && pass "progress bar on a terminal ($bar updates)" || fail "no progress bar on a terminal"
"$tpuemu" run "$root/examples/ffn.json" --requests 2 >/dev/null 2>"$tmp/notty.err"
[[ ! -s "$tmp/notty.err" ]] && pass "no progress output when stderr is not a terminal" || fail "stderr not a terminal: $(head -c 200 "$tmp/notty.err")"

# a failed run (out of HBM) writes nothing
"$tpuemu" run --matmul 30000x30000x16 --preset small -q -o "$tmp/failed" 2>/dev/null
[[ ! -e "$tmp/failed" ]] && pass "a failed run leaves no output directory" || fail "failed run wrote $(ls "$tmp/failed")"
finish
