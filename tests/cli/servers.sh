# SPDX-License-Identifier: Apache-2.0
# `start_server`, shared by the scripts that start `tpuemu serve` (sourced after `tpuemu`, `tmp`,
# the array `pids` of processes killed on exit, and `fail` are defined).
# start_server NAME ARGS...: a server on a free port of 127.0.0.1; sets port and server_pid, logs
# JSON lines to $tmp/NAME.log. With serve_fd_limit=N (serve_fd_limit=40 start_server ...) the
# server runs under `ulimit -n N`.
start_server() {
  local name=$1; shift
  if [[ -n "${serve_fd_limit:-}" ]]; then
    (ulimit -n "$serve_fd_limit" && exec "$tpuemu" serve --listen 127.0.0.1:0 --json "$@") 2>"$tmp/$name.log" &
  else
    "$tpuemu" serve --listen 127.0.0.1:0 --json "$@" 2>"$tmp/$name.log" &
  fi
  server_pid=$!
  pids+=("$server_pid")
  port=""
  for _ in $(seq 100); do
    port=$(python3 -c 'import json,sys
for l in open(sys.argv[1]):
    e = json.loads(l)
    if e.get("event") == "listening": print(e["port"])' "$tmp/$name.log" 2>/dev/null)
    [[ -n "$port" ]] && return 0
    sleep 0.1
  done
  fail "$name: the server did not start: $(cat "$tmp/$name.log")"
  return 1
}
