#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# report.html (docs/profile.md): `tpuemu run -o DIR` writes it, `tpuemu report DIR` renders the same
# bytes from the files alone, and headless Chromium (Debian's chromium, installed by
# scripts/setup.sh: a missing browser is a failure) runs its script without a console error, ends
# with exactly one rect.buffer per buffer of summary.json's memory_map and takes a screenshot.
# `--allocator all` puts every policy's placement side by side. Errors of `tpuemu report`: one
# line, exit 1, no output file.
set -u
tpuemu=$1
root=$2
source "$(dirname "${BASH_SOURCE[0]}")/checks.sh"
fail_context=0  # the failure messages carry the error
export HOME=$tmp
command -v chromium >/dev/null || { echo "FAIL chromium is not installed: run scripts/setup.sh"; exit 1; }

# Chromium as root needs --no-sandbox; a profile of its own keeps runs apart.
browser() {
  timeout 120 chromium --headless --no-sandbox --disable-gpu --user-data-dir="$tmp/chromium" \
    --enable-logging=stderr --v=0 "$@"
}
# The DOM after the page's scripts ran, on stdout; the browser's log in $2.
dump_dom() { browser --dump-dom "file://$1" 2>"$2"; }
# Lines of the log that are a script error or a console message (Chromium logs console.error as
# INFO:CONSOLE like any other level, and report.html logs nothing, so any such line fails).
console_errors() { grep -E 'Uncaught|:CONSOLE[:(]' "$1"; }
# The number of <rect> elements whose class list has "buffer", in an HTML/DOM text on stdin.
count_buffer_rects() {
  python3 -c '
import sys
from html.parser import HTMLParser
class P(HTMLParser):
    n = 0
    def handle_starttag(self, tag, attrs):
        if tag == "rect" and "buffer" in (dict(attrs).get("class") or "").split(): P.n += 1
    handle_startendtag = handle_starttag
P().feed(sys.stdin.read()); print(P.n)'
}
# What the page drew in #timeline (read from the DOM, not the script's text, which holds the
# same words): "canvas", "none" (the note that the trace has no lanes) or "empty".
timeline_state() {
  python3 -c '
import sys
from html.parser import HTMLParser
class P(HTMLParser):
    depth = 0; canvas = False; text = ""
    def handle_starttag(self, tag, attrs):
        if P.depth: P.depth += 1; P.canvas |= tag == "canvas"
        elif tag == "div" and dict(attrs).get("id") == "timeline": P.depth = 1
    def handle_endtag(self, tag):
        if P.depth: P.depth -= 1
    def handle_data(self, data):
        if P.depth: P.text += data
P().feed(sys.stdin.read())
print("canvas" if P.canvas else "none" if "no engine timeline in this trace" in P.text else "empty")'
}
map_buffers() {
  python3 -c 'import json,sys; print(sum(len(s["buffers"]) for s in json.load(open(sys.argv[1]))["memory_map"]["spaces"]))' "$1"
}

# The console check itself can fail: a page that throws, or logs an error, must be caught.
for script in 'undefinedFunction();' 'console.error("boom");'; do
  printf '<!DOCTYPE html><html><body><script>%s</script></body></html>\n' "$script" >"$tmp/broken.html"
  dump_dom "$tmp/broken.html" "$tmp/broken.log" >/dev/null
  console_errors "$tmp/broken.log" >/dev/null && pass "the browser log shows $script" ||
    fail "the console check does not see $script: $(head -c 400 "$tmp/broken.log")"
done

"$tpuemu" run "$root/examples/mlp.json" -q -o "$tmp/r" 2>"$tmp/err" || fail "run -o: $(cat "$tmp/err")"
[[ -s "$tmp/r/report.html" ]] && pass "run -o writes report.html" || fail "report.html missing"
"$tpuemu" report "$tmp/r" -o "$tmp/again.html" 2>"$tmp/err" || fail "report: $(cat "$tmp/err")"
cmp -s "$tmp/r/report.html" "$tmp/again.html" && pass "tpuemu report renders the same bytes as run" ||
  fail "tpuemu report differs from run's report.html"
cp "$tmp/r/report.html" "$tmp/first.html"
"$tpuemu" report "$tmp/r" 2>"$tmp/err" && cmp -s "$tmp/first.html" "$tmp/r/report.html" &&
  pass "tpuemu report DIR writes DIR/report.html" || fail "report DIR: $(cat "$tmp/err")"
grep -qE 'https?://|src=' "$tmp/r/report.html" && fail "report.html refers outside: $(grep -oE '.{20}(https?://|src=).{20}' "$tmp/r/report.html" | head -2)" ||
  pass "report.html names no URL and no src"

want=$(map_buffers "$tmp/r/summary.json")
dump_dom "$tmp/r/report.html" "$tmp/dom.log" >"$tmp/dom.html"
got=$(count_buffer_rects <"$tmp/dom.html")
[[ "$want" -ge 1 && "$got" == "$want" ]] && pass "DOM after scripts: $got rect.buffer = the memory map's $want buffers" ||
  fail "DOM has $got rect.buffer, the memory map $want buffers"
laid_out=$(grep -cE '<rect class="buffer"[^>]* x="[0-9.]+" y="[0-9.]+" width="[0-9.]+" height="[0-9.]+" fill="rgb' "$tmp/dom.html")
[[ $laid_out == "$want" ]] && pass "the script laid out and coloured every buffer" ||
  fail "$laid_out of $want buffers laid out"
state=$(timeline_state <"$tmp/dom.html")
[[ $state == canvas ]] && pass "engine timeline: the run's queue lanes are drawn" || fail "engine timeline of the run: $state"
console_errors "$tmp/dom.log" && fail "console errors (above) in report.html" || pass "no console error"

browser --screenshot="$tmp/shot.png" --window-size=1400,1000 "file://$tmp/r/report.html" 2>"$tmp/shot.log" >/dev/null
[[ -s "$tmp/shot.png" && "$(head -c 8 "$tmp/shot.png" | od -An -tx1 | tr -d ' \n')" == "89504e470d0a1a0a" ]] &&
  pass "screenshot is a PNG of $(stat -c %s "$tmp/shot.png") bytes" || fail "no PNG screenshot: $(tail -2 "$tmp/shot.log")"

# The engine lanes, when trace.json has them (the engine tracks): 10^5 slices on a canvas.
mkdir "$tmp/lanes"
cp "$tmp/r/summary.json" "$tmp/r/fragmentation.csv" "$tmp/lanes/"
python3 - "$tmp/r/trace.json" "$tmp/lanes/trace.json" <<'PY'
import json, sys
trace = json.load(open(sys.argv[1]))
ev = trace["traceEvents"]
ev += [{"ph": "M", "name": "process_name", "pid": 90, "args": {"name": "core"}},
       {"ph": "M", "name": "process_name", "pid": 91, "args": {"name": "HBM"}}]
queues = ["DMA queue", "MXU queue", "vector queue"]
ev += [{"ph": "M", "name": "thread_name", "pid": 90, "tid": i, "args": {"name": q}} for i, q in enumerate(queues)]
ev += [{"ph": "M", "name": "thread_name", "pid": 91, "tid": c, "args": {"name": f"channel {c}"}} for c in range(8)]
for i in range(100000):
    lane = i % 11
    pid, tid = (90, lane) if lane < 3 else (91, lane - 3)
    name = ["LOAD", "MATMUL", "wait s1"][i % 3] if pid == 90 else ("refresh" if i % 97 == 0 else "busy")
    ev.append({"ph": "X", "name": name, "pid": pid, "tid": tid, "ts": (i // 11) * 0.01, "dur": 0.004, "args": {"pc": i}})
json.dump(trace, open(sys.argv[2], "w"))
PY
"$tpuemu" report "$tmp/lanes" 2>"$tmp/err" || fail "report with engine lanes: $(cat "$tmp/err")"
dump_dom "$tmp/lanes/report.html" "$tmp/lanes.log" >"$tmp/lanes.html"
state=$(timeline_state <"$tmp/lanes.html")
[[ $state == canvas ]] && pass "engine lanes: drawn on a canvas ($(stat -c %s "$tmp/lanes/report.html") bytes of page)" ||
  fail "engine lanes: $state"
console_errors "$tmp/lanes.log" && fail "console errors with engine lanes" || pass "engine lanes: no console error"

# every policy, side by side
"$tpuemu" run "$root/examples/mlp.json" --preset small --allocator all -q -o "$tmp/all" 2>"$tmp/err" ||
  fail "run --allocator all: $(cat "$tmp/err")"
policies=$(python3 -c 'import json,sys; print(" ".join(s["policy"] for s in json.load(open(sys.argv[1]))["memory_map"]["spaces"]))' "$tmp/all/summary.json")
[[ "$policies" == "bfc first-fit best-fit buddy tlsf" ]] && pass "--allocator all: a map per policy ($policies)" ||
  fail "--allocator all policies: '$policies'"
want=$(map_buffers "$tmp/all/summary.json")
got=$(dump_dom "$tmp/all/report.html" "$tmp/all.log" | count_buffer_rects)
[[ "$got" == "$want" ]] && pass "--allocator all: $got rect.buffer in the DOM" || fail "--allocator all: DOM $got, map $want"
console_errors "$tmp/all.log" && fail "console errors with --allocator all" || pass "--allocator all: no console error"
"$tpuemu" run "$root/examples/mlp.json" --preset small --allocator all -q 2>"$tmp/err"; rc=$?
[[ $rc -eq 2 && $(grep -c . "$tmp/err") -eq 1 ]] && pass "--allocator all without -o: usage error" || fail "--allocator all without -o: exit $rc"

# errors: one line naming the file, exit 1, no output file
expect_error() {  # name, expected exit code, expected fragment, args...
  local name=$1 code=$2 fragment=$3
  shift 3
  rm -f "$tmp/out.html"
  "$tpuemu" report "$@" -o "$tmp/out.html" >"$tmp/stdout" 2>"$tmp/err"; local rc=$?
  if [[ $rc -eq $code && $(grep -c . "$tmp/err") -eq 1 && ! -s "$tmp/stdout" ]] && grep -qF -- "$fragment" "$tmp/err" &&
    [[ ! -e "$tmp/out.html" ]]; then
    pass "$name: $(cat "$tmp/err")"
  else
    fail "$name: exit $rc, stderr '$(cat "$tmp/err")', output $(ls "$tmp/out.html" 2>/dev/null)"
  fi
}
# A missing input is a usage error (exit 2) whatever its kind; a damaged one inside it is a data error (1).
expect_error "missing directory" 2 "Directory does not exist: $tmp/nowhere" "$tmp/nowhere"
mkdir "$tmp/bad"
cp "$tmp/r/fragmentation.csv" "$tmp/r/trace.json" "$tmp/bad/"
printf '{"workload": "w",\n "memory_map": {"spaces": [}\n' >"$tmp/bad/summary.json"
expect_error "bad JSON" 1 "$tmp/bad/summary.json:2:" "$tmp/bad"
python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); del j["memory_map"]; print(json.dumps(j, indent=1))' \
  "$tmp/r/summary.json" >"$tmp/bad/summary.json"
expect_error "summary without a memory map" 1 "$tmp/bad/summary.json:1:1: /: missing the memory_map section" "$tmp/bad"
cp "$tmp/r/summary.json" "$tmp/bad/summary.json"
rm "$tmp/bad/fragmentation.csv"
expect_error "missing file" 1 "$tmp/bad/fragmentation.csv: cannot open" "$tmp/bad"
finish
