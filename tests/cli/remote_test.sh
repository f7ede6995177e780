#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `tpuemu serve` as its own process and the CLI on `--backend remote://host:port` (docs/remote.md):
# the same reports as in-process; a server killed mid-run is one error line, a non-zero exit and no
# output directory; SIGTERM and SIGINT stop the server cleanly (exit 0, every session logged).
set -u
tpuemu=$1
root=$2
source "$(dirname "${BASH_SOURCE[0]}")/checks.sh"
fail_context=0  # the failure messages carry the error
pids=()
on_exit+=('kill -9 "${pids[@]}" 2>/dev/null')

source "$(dirname "${BASH_SOURCE[0]}")/servers.sh"
same_summary() {  # the reports without what names the backend or the host's speed
  python3 - "$1" "$2" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
for d in (a, b):
    d.pop("backend", None); d.pop("simulation", None)
sys.exit(0 if a == b else 1)
PY
}

start_server main --preset small --devices 2 || exit 1
remote=remote://127.0.0.1:$port
"$tpuemu" run "$root/examples/cnn.json" --preset small --backend "$remote" -q -o "$tmp/remote" 2>"$tmp/err" &&
  "$tpuemu" run "$root/examples/cnn.json" --preset small -q -o "$tmp/local" 2>>"$tmp/err" ||
  fail "run on remote and rtl: $(cat "$tmp/err")"
same_summary "$tmp/remote/summary.json" "$tmp/local/summary.json" && pass "cnn on remote: summary.json as on rtl" ||
  fail "cnn: remote and rtl summaries differ"
cmp -s "$tmp/remote/trace.json" "$tmp/local/trace.json" && pass "trace.json identical (timeline over the protocol)" ||
  fail "trace.json differs"
grep -q "\"backend\": \"$remote\"" "$tmp/remote/summary.json" && pass "summary names the remote backend" ||
  fail "summary lacks the backend"
diff <("$tpuemu" exec "$root/examples/programs/matmul-8x8.s" --preset small --backend "$remote" --json | grep -v '"program"') \
  <("$tpuemu" exec "$root/examples/programs/matmul-8x8.s" --preset small --json | grep -v '"program"') >/dev/null &&
  pass "exec on remote: same cycles and counters" || fail "exec on remote differs"
"$tpuemu" run "$root/examples/mlp.json" --preset default --backend "$remote" 2>"$tmp/err" >/dev/null
[[ $? -ne 0 && $(grep -c . "$tmp/err") -eq 1 ]] && grep -q "server's device is preset 'small'" "$tmp/err" &&
  pass "preset mismatch: one line" || fail "preset mismatch: $(cat "$tmp/err")"
kill -TERM "$server_pid"; wait "$server_pid"; rc=$?
[[ $rc -eq 0 ]] && grep -q '"event":"stopped"' "$tmp/main.log" && pass "SIGTERM: exit 0 after the stopped line" ||
  fail "SIGTERM: exit $rc: $(tail -2 "$tmp/main.log")"
sessions=$(grep -c '"event":"session"' "$tmp/main.log")
[[ $sessions -ge 3 ]] && pass "a log line per session ($sessions)" || fail "session lines: $sessions"

# The server killed in the middle of a run: the client says so within its timeout, exits non-zero,
# and leaves no output directory.
start_server victim --preset small || exit 1
"$tpuemu" run "$root/examples/ffn.json" --preset small --requests 4 --backend "remote://127.0.0.1:$port?timeout=5" \
  -q -o "$tmp/partial" 2>"$tmp/err" &
client=$!
pids+=("$client")
# in the middle of the run: after the session started and its first layers ran
for _ in $(seq 300); do grep -q '"event":"hello"' "$tmp/victim.log" && break; sleep 0.05; done
sleep 0.5
kill -9 "$server_pid"
start=$(date +%s)
wait "$client"; rc=$?
elapsed=$(($(date +%s) - start))
[[ $rc -ne 0 && $rc -ne 137 ]] && pass "client of a killed server exits $rc" || fail "client of a killed server exits $rc"
[[ $elapsed -le 6 ]] && pass "reported within its timeout (${elapsed} s)" || fail "took ${elapsed} s"
[[ $(grep -c . "$tmp/err") -eq 1 ]] && grep -q "remote://127.0.0.1:$port?timeout=5: .*(seq [0-9]*)" "$tmp/err" &&
  pass "one line naming the server and the request: $(cat "$tmp/err")" || fail "error: $(cat "$tmp/err")"
[[ ! -e "$tmp/partial" ]] && pass "no partial output" || fail "partial output left: $(ls "$tmp/partial")"

# SIGINT stops an idle server too.
start_server idle --preset small --backend fake || exit 1
kill -INT "$server_pid"; wait "$server_pid"; rc=$?
[[ $rc -eq 0 ]] && pass "SIGINT: exit 0" || fail "SIGINT: exit $rc"
# Bad options are refused before anything listens.
"$tpuemu" serve --listen nowhere --preset small 2>"$tmp/err"; rc=$?
[[ $rc -ne 0 && $(grep -c . "$tmp/err") -eq 1 ]] && grep -q "expected ADDRESS:PORT" "$tmp/err" &&
  pass "--listen nowhere: one line" || fail "--listen nowhere: $rc $(cat "$tmp/err")"
"$tpuemu" serve --listen 127.0.0.1:0 --preset small --backend remote://127.0.0.1:1 2>"$tmp/err"; rc=$?
[[ $rc -ne 0 ]] && grep -q "not an in-process backend" "$tmp/err" && pass "a remote backend cannot be served" ||
  fail "serve --backend remote: $rc $(cat "$tmp/err")"
finish
