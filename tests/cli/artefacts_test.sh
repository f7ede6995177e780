#!/usr/bin/env bash
# `tpuemu run -o DIR` (docs/profile.md): the artefacts are written, `go tool pprof` (Debian's
# golang-go, installed by scripts/setup.sh: a missing tool is a failure) reads memory.pb.gz and its
# total equals the allocator's peak live bytes, trace.json is valid trace-event JSON with a buffer
# slice per allocation, and a failed run leaves nothing in DIR.
set -u
tpuemu=$1
root=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export HOME=$tmp GOCACHE=$tmp/gocache
failures=0
pass() { echo "ok   $1"; }
fail() { echo "FAIL $1"; failures=$((failures + 1)); }
command -v go >/dev/null || { echo "FAIL go (golang-go) is not installed: run scripts/setup.sh"; exit 1; }

"$tpuemu" run "$root/examples/mlp.json" --preset small -q -o "$tmp/r" 2>"$tmp/err" || fail "run -o: $(cat "$tmp/err")"
for f in summary.json fragmentation.csv memory.pb.gz trace.json report.html; do
  [[ -s "$tmp/r/$f" ]] && pass "$f written" || fail "$f missing"
done
peak=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["hbm_allocation"]["peak_live_bytes"])' "$tmp/r/summary.json")
top=$(go tool pprof -top -unit=B -sample_index=space "$tmp/r/memory.pb.gz" 2>&1)
total=$(sed -nE 's/^Showing nodes accounting for ([0-9]+)B, 100% of ([0-9]+)B total$/\2/p' <<<"$top")
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
# a failed run (out of HBM) writes nothing
"$tpuemu" run --matmul 30000x30000x16 --preset small -q -o "$tmp/failed" 2>/dev/null
[[ ! -e "$tmp/failed" ]] && pass "a failed run leaves no output directory" || fail "failed run wrote $(ls "$tmp/failed")"
echo "$failures failures"
exit $((failures > 0))
