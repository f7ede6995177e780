#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `tpuemu analyze PROGRAM.hlo -o DIR` (docs/hlo.md, "Artefacts"): report.html with every policy's
# memory map and the buffers-at-peak table, memory.pb.gz whose stacks are the op_name paths (read
# back with `go tool pprof`: go is part of scripts/setup.sh, so a missing go fails here), the
# per-position fragmentation.csv, summary.json equal to --json; all or nothing. Host code only
# (label quick).
set -u
tpuemu=$1
root=$2
source "$(dirname "${BASH_SOURCE[0]}")/checks.sh"
data=$root/tests/data/hlo
module=$data/transformer_block.hlo

if ! command -v go >/dev/null; then
  fail "go is not installed (scripts/setup.sh installs golang-go): memory.pb.gz cannot be read back"
  finish
  exit 1
fi

# ---- every file, summary.json equal to --json
check artefacts 0 "" -- analyze "$module" -o "$tmp/art"
for f in summary.json fragmentation.csv memory.pb.gz report.html; do
  [[ -s "$tmp/art/$f" ]] && pass "$f written" || fail "$f missing or empty"
done
check json 0 "" -- analyze "$module" --json
cp "$tmp/out" "$tmp/analysis.json"
python3 - "$tmp/art/summary.json" "$tmp/analysis.json" <<'PY' && pass "summary.json parses and equals --json" || fail "summary.json differs from --json"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
assert a == b and "policies" in a
PY

# ---- memory.pb.gz: the peak, one sample per buffer, stacks = instruction under its op_name path
go tool pprof -top -unit=B "$tmp/art/memory.pb.gz" >"$tmp/top" 2>"$tmp/err"
python3 - "$tmp/top" "$tmp/analysis.json" <<'PY' && pass "pprof -top: the peak's bytes, model parts as frames" || fail "pprof -top"
import json, re, sys
top = open(sys.argv[1]).read()
j = json.load(open(sys.argv[2]))
total = int(re.search(r"of (\d+)B total", top).group(1))
assert total == j["memory"]["peak_live_bytes"], (total, j["memory"]["peak_live_bytes"])
names = {line.split()[-1] for line in top.splitlines() if re.match(r"\s*\d", line)}
for frame in ("jit(transformer_block)", "jit(main)", "mlp", "up_proj", "dot_general"):
    assert frame in names, frame
PY
go tool pprof -traces "$tmp/art/memory.pb.gz" >"$tmp/traces" 2>"$tmp/err"
python3 - "$tmp/traces" "$module" <<'PY' && pass "pprof -traces: every stack is its op_name path" || fail "pprof -traces"
import re, sys
op_name = {}
for line in open(sys.argv[2]):
    m = re.match(r'\s*(?:ROOT\s+)?%?([\w.\-]+)\s*=.*op_name="([^"]*)"', line)
    if m: op_name[m.group(1)] = m.group(2)
blocks = open(sys.argv[1]).read().split("-----------+")[1:]
assert len(blocks) > 5
checked = 0
for block in blocks:
    lines = [l for l in block.splitlines()[1:] if l.strip()]
    if not lines: continue
    frames = [l.split()[-1] for l in lines if not re.match(r"\s*[\w]+:\s", l)]
    leaf, stack = frames[0], frames[1:]
    if leaf in op_name and op_name[leaf]:
        assert stack == list(reversed([p for p in op_name[leaf].split("/") if p])), (leaf, stack)
        checked += 1
assert checked >= 5, checked
PY

# ---- report.html: a map per policy, the buffers-at-peak table, the hover's fields
python3 - "$tmp/art/report.html" "$tmp/analysis.json" "$tmp/traces" <<'PY' && pass "report.html: every policy's map, buffers at peak, hover details" || fail "report.html"
import html, json, re, sys
page = open(sys.argv[1]).read()
j = json.load(open(sys.argv[2]))
maps = re.findall(r'<figure class="map" data-space="hbm" data-policy="([^"]+)"', page)
assert sorted(maps) == sorted(j["policies"]), maps  # the JSON's keys are sorted
assert len(maps) == 7
# Every rectangle's hover lines, once per buffer (the same id in every policy's map).
details = json.loads(re.search(r'<script type="application/json" id="report-data">(.*?)</script>', page, re.S).group(1))["details"]
ids = set(re.findall(r'<rect class="buffer" data-id="([^"]*)"', page))
assert ids and ids == set(details), (len(ids), len(details))
assert any("op_name jit(transformer_block)/jit(main)/mlp/up_proj/dot_general" in d and "source model.py:50" in d
           and "shape f32[128,1024]" in d and "padding" in d for d in details.values())
table = re.search(r'<table class="sortable" id="buffers-at-peak-table">(.*?)</table>', page, re.S).group(1)
heads = re.findall(r"<th>([^<]*)</th>", table)
for h in ("buffer", "size", "padding", "expansion", "shape", "op_name", "source"):
    assert h in heads, h
rows = re.findall(r"<tr><td", table)
samples = open(sys.argv[3]).read().count("-----------+") - 1
assert len(rows) == samples, (len(rows), samples)
# The size and padding columns sort by their numbers.
col = heads.index("size")
sizes = [float(re.findall(r"<td[^>]*>", r)[col].split('data-sort="')[1].split('"')[0])
         for r in re.findall(r"<tr>(<td.*?)</tr>", table)]
assert sizes == sorted(sizes, reverse=True)
assert 'data-sort=' in table and "table.sortable" in page
PY

# ---- report.html in headless Chromium (scripts/setup.sh installs it: missing is a failure): the
# script runs without an error, lays every rectangle out on the schedule-position axis, a hover
# shows the buffer's op_name, source, shape and padding, and a click on a heading sorts the
# table by that column's numbers.
if ! command -v chromium >/dev/null; then
  fail "chromium is not installed (scripts/setup.sh)"
else
  # mlp3's buffers at peak differ in padding, in an order that is not their sizes'.
  check mlp3 0 "" -- analyze "$data/mlp3.hlo" -o "$tmp/mlp3"
  # The page, plus a click on "padding" and then on "size" twice (largest first, then smallest first).
  sed 's|</body>|<script>const h = [...document.querySelectorAll("#buffers-at-peak-table th")]; const col = (n) => h.find((t) => t.textContent === n); col("padding").click(); window.byPadding = [...document.querySelectorAll("#buffers-at-peak-table tbody tr")].map((r) => r.cells[h.indexOf(col("padding"))].dataset.sort).join(","); col("size").click(); col("size").click(); document.body.dataset.byPadding = window.byPadding; document.querySelector("rect.buffer[data-name=\\"dot.1\\"]").dispatchEvent(new MouseEvent("mouseover", {bubbles: true, clientX: 10, clientY: 10})); document.body.dataset.tooltip = document.getElementById("tooltip").textContent;</script></body>|' \
    "$tmp/mlp3/report.html" >"$tmp/clicked.html"
  HOME=$tmp timeout 120 chromium --headless --no-sandbox --disable-gpu --user-data-dir="$tmp/chromium" --enable-logging=stderr \
    --v=0 --dump-dom "file://$tmp/clicked.html" >"$tmp/dom" 2>"$tmp/browser.log"
  python3 - "$tmp/dom" "$tmp/browser.log" <<'PY' && pass "report.html in Chromium: laid out, hover details, sorts by padding and size" || fail "report.html in Chromium"
import html, re, sys
dom, log = open(sys.argv[1]).read(), open(sys.argv[2]).read()
assert not re.search(r"Uncaught|:CONSOLE[:(]", log), log
rects = re.findall(r'<rect class="buffer"[^>]*>', dom)
assert rects and all(' width="' in r for r in rects), "rectangles not laid out"
assert "time (schedule position)" in dom
tip = html.unescape(re.search(r'data-tooltip="([^"]*)"', dom).group(1))
for want in ("dot.1", "op_name jit(mlp)/jit(main)/dense_0/dot_general", "source mlp.py:10", "shape f32[8,64]", "padding"):
    assert want in tip, (want, tip)
padding = [float(v) for v in re.search(r'data-by-padding="([^"]*)"', dom).group(1).split(",")]
assert padding == sorted(padding, reverse=True) and padding[0] > padding[-1], padding
table = re.search(r'id="buffers-at-peak-table">(.*?)</table>', dom, re.S).group(1)
heads = re.findall(r"<th[^>]*>([^<]*)</th>", table)
col = heads.index("size")
rows = re.findall(r"<tr>(.*?)</tr>", table, re.S)[1:]
sizes = [float(re.findall(r"<td[^>]*>", r)[col].split('data-sort="')[1].split('"')[0]) for r in rows]
assert sizes == sorted(sizes) and sizes[0] < sizes[-1], sizes  # the second click: smallest first
PY
fi

# ---- fragmentation.csv: the run's columns, one row per policy and schedule position
python3 - "$tmp/art/fragmentation.csv" "$tmp/analysis.json" <<'PY' && pass "fragmentation.csv: every policy at every position" || fail "fragmentation.csv"
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1])))
j = json.load(open(sys.argv[2]))
policies = {}
for r in rows:
    policies.setdefault(r["policy"], []).append(r)
assert sorted(policies) == sorted(j["policies"])
for name, rs in policies.items():
    heap = j["policies"][name]["heap_bytes"]
    assert [int(r["time"]) for r in rs] == list(range(len(rs))) and len(rs) > 50
    assert max(int(r["in_use_bytes"]) for r in rs) == j["memory"]["peak_live_bytes"], name
    assert max(int(r["footprint_bytes"]) for r in rs) == heap, name
    for r in rs:
        assert int(r["in_use_bytes"]) + int(r["free_bytes"]) == heap, name
        assert int(r["largest_free_block"]) <= int(r["free_bytes"])
        assert 0 <= float(r["external_fragmentation"]) <= 1
PY

# ---- out of memory: the analysis's exit 1, the artefacts still written, failed policies say why
check oom 1 "Ran out of memory" -- analyze "$module" --hbm-capacity 4MiB -o "$tmp/oom"
[[ -s "$tmp/oom/report.html" && -s "$tmp/oom/memory.pb.gz" ]] && grep -q 'class="failure">bfc failed' "$tmp/oom/report.html" &&
  pass "out of memory: artefacts with each failed policy's reason" || fail "out of memory artefacts"
# One policy: one map.
check one_policy 0 "" -- analyze "$module" --allocator xla -o "$tmp/one"
[[ $(grep -c '<figure class="map"' "$tmp/one/report.html") -eq 1 ]] && pass "--allocator xla: one map" || fail "--allocator xla maps"

# ---- all or nothing
mkdir -p "$tmp/blocked/report.html"
check blocked 1 "report.html: is a directory" -- analyze "$module" -o "$tmp/blocked"
[[ $(ls "$tmp/blocked") == "report.html" && -z $(ls "$tmp/blocked/report.html") ]] &&
  pass "a write that cannot happen leaves nothing" || fail "blocked left $(ls "$tmp/blocked")"
check bad_module 1 "binary_garbage.hlo:5:26" -- analyze "$data/bad/binary_garbage.hlo" -o "$tmp/bad"
[[ ! -e "$tmp/bad" ]] && pass "a bad module leaves no directory" || fail "a bad module made $tmp/bad"
check dash 2 "-o -" -- analyze "$module" -o -

finish
