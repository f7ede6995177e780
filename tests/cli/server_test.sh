#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `tpuemu serve --backend fake` as its own process on a loopback port (quick: no Verilated model
# runs; docs/remote.md): a preset modified in one field is refused naming the field, a fake server
# makes the client's report say its cycles are approximate, a connection that never speaks does
# not keep the next client from its device, a preset whose core this build lacks stops the server
# at start, and a server at its open-files limit refuses new connections cleanly, logging the
# episode once instead of spinning. Every command has a deadline and every server is killed at
# the end.
set -u
tpuemu=$1
root=$2
source "$(dirname "${BASH_SOURCE[0]}")/checks.sh"
pids=()
on_exit+=('exec 3<&- 2>/dev/null' 'for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done')
check_timeout=20
source "$(dirname "${BASH_SOURCE[0]}")/servers.sh"
# variant OUT KEY=VALUE...: configs/presets/small.json with these top-level or hbm.KEY fields set
variant() {
  python3 - "$root/configs/presets/small.json" "$@" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
out = sys.argv[2]
for kv in sys.argv[3:]:
    k, v = kv.split("=", 1)
    v = json.loads(v)
    if k.startswith("hbm."):
        p["hbm"][k[4:]] = v
    else:
        p[k] = v
json.dump(p, open(out, "w"), indent=2)
PY
}
small=(--matmul 16x16x16 -q)

# ---- the core is checked at start: exit 1 naming what is missing, nothing served
variant "$tmp/no-core.json" name='"no-such-core"'
XDG_CACHE_HOME="$tmp/cache" check missing_core_at_start 1 \
  "no Verilated core for preset 'no-such-core'.*tpuemu core build $tmp/no-core.json" -- \
  serve --listen 127.0.0.1:0 --preset "$tmp/no-core.json" --no-build
variant "$tmp/other-core.json" vmem_banks=8
XDG_CACHE_HOME="$tmp/cache" check core_field_at_start 1 "preset small sets vmem_banks=8 but the core was built with 4" -- \
  serve --listen 127.0.0.1:0 --preset "$tmp/other-core.json" --no-build
# the fake backend needs no compiled core: that server starts (and runs until its deadline)
timeout 2 "$tpuemu" serve --listen 127.0.0.1:0 --preset "$tmp/no-core.json" --backend fake --quiet 2>"$tmp/err"
rc=$?
[[ $rc -eq 124 ]] && pass "fake serves a preset without a core" || fail "fake serves a preset without a core: exit $rc"

start_server fake --preset small --backend fake --devices 1 --hello-timeout 1 --queue-timeout 20 || exit 1
remote=remote://127.0.0.1:$port

# ---- the preset is compared by its contents, not its name
latency=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["hbm"]["latency_cycles"])' "$root/configs/presets/small.json")
variant "$tmp/small-600.json" hbm.latency_cycles=$((latency + 540))
check modified_preset_refused 1 \
  "the server's device is preset 'small'; this command's preset 'small' differs from it first in hbm.latency_cycles: $((latency + 540)) here, $latency on the server" -- \
  run "${small[@]}" --preset "$tmp/small-600.json" --backend "$remote"
variant "$tmp/small-desc.json" description='"my copy"'
check description_counts_too 1 "differs from it first in description: \"my copy\" here" -- \
  run "${small[@]}" --preset "$tmp/small-desc.json" --backend "$remote"
check other_preset_refused 1 "the server's device is preset 'small'; this command's preset 'default' differs" -- \
  run "${small[@]}" --preset default --backend "$remote"
grep -q '"event":"refused"' "$tmp/fake.log" && pass "the server logs the refusal" || fail "no refused event in the log"

# ---- a fake server: the client's report says the cycles are approximate, in text and JSON
timeout 20 "$tpuemu" run --matmul 16x16x16 --preset small --backend "$remote" --report "$tmp/r.json" >"$tmp/report.txt" 2>"$tmp/err"
rc=$?
[[ $rc -eq 0 ]] && grep -q "approximate: the server simulates the device with its 'fake' backend" "$tmp/report.txt" &&
  pass "fake server: the text report says cycles are approximate" || fail "fake server note in the text (exit $rc)"
python3 -c 'import json,sys; sys.exit(0 if "fake" in (json.load(open(sys.argv[1]))["run"]["cycles_approximate"] or "") else 1)' \
  "$tmp/r.json" 2>/dev/null && pass "fake server: run.cycles_approximate in the JSON report" || fail "fake server note in the JSON"

# ---- a connection that never speaks holds no device (the pool has one)
exec 3<>"/dev/tcp/127.0.0.1/$port"
sleep 0.2
start=$(date +%s%N)
timeout 10 "$tpuemu" run "${small[@]}" --preset small --backend "$remote" 2>"$tmp/err" >/dev/null
rc=$?
ms=$((($(date +%s%N) - start) / 1000000))
[[ $rc -eq 0 && $ms -lt 3000 ]] && pass "a silent connection does not block the next client ($ms ms)" ||
  fail "next client behind a silent connection: exit $rc after $ms ms"
# The server closes the silent one at its HELLO timeout (1 s): reading it ends (EOF), no deadline hit.
timeout 5 cat <&3 >/dev/null
rc=$?
exec 3<&-
[[ $rc -eq 0 ]] && grep -q '"end":"no valid HELLO within 1 s of connecting"' "$tmp/fake.log" &&
  pass "the silent connection is closed at the HELLO timeout" || fail "silent connection: cat exit $rc"

kill -TERM "$server_pid"; wait "$server_pid"; rc=$?
[[ $rc -eq 0 ]] && pass "SIGTERM: exit 0" || fail "SIGTERM: exit $rc"

# ---- at the open-files limit (ulimit -n 40) with 80 idle connections: no accept loop spinning
# the log full, a client answered within seconds (served, or refused in one line), and served once
# the idle connections are gone.
serve_fd_limit=40 start_server fdlimit --preset small --backend fake --devices 1 --hello-timeout 2
python3 - "$port" <<'PY' &
import socket, sys, time
held = [socket.create_connection(("127.0.0.1", int(sys.argv[1]))) for _ in range(80)]
time.sleep(4)
PY
idle_pid=$!
pids+=("$idle_pid")
sleep 0.5
start=$(date +%s%N)
timeout 20 "$tpuemu" run "${small[@]}" --preset small --backend "remote://127.0.0.1:$port" 2>"$tmp/err" >/dev/null
rc=$?
ms=$((($(date +%s%N) - start) / 1000000))
if [[ $rc -eq 0 && $ms -lt 10000 ]]; then
  pass "at the open-files limit: a client is served ($ms ms)"
elif [[ $rc -eq 1 && $(grep -c . "$tmp/err") -eq 1 && $ms -lt 10000 ]] && grep -q "out of file descriptors" "$tmp/err"; then
  pass "at the open-files limit: a client is refused in one line ($ms ms)"
else
  fail "at the open-files limit: exit $rc after $ms ms"
fi
wait "$idle_pid"
sleep 2.5  # the server closes what it accepted at the HELLO timeout
timeout 20 "$tpuemu" run "${small[@]}" --preset small --backend "remote://127.0.0.1:$port" 2>"$tmp/err" >/dev/null
rc=$?
[[ $rc -eq 0 ]] && pass "after the idle connections: a client is served" || fail "after the idle connections: exit $rc"
kill -TERM "$server_pid"; wait "$server_pid"
lines=$(wc -l <"$tmp/fdlimit.log")
episodes=$(grep -c '"error":"Too many open files"' "$tmp/fdlimit.log")
[[ $lines -lt 400 && $episodes -ge 1 && $episodes -le 4 ]] &&
  pass "the log stays small: $lines lines, $episodes episode(s) of accept failures" ||
  fail "the log: $lines lines, $episodes accept failures logged"
grep -q '"event":"accepting"' "$tmp/fdlimit.log" && pass "the log says when accepting works again" ||
  fail "no accepting event in the log"

finish
