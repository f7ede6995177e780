#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The hardware-in-the-loop regression (docs/hil.md): the conformance suite against the device at
# TPUEMU_BOARD=host:port (preset TPUEMU_BOARD_PRESET, default small). Without TPUEMU_BOARD the
# suite runs against a `tpuemu serve` process started here, the stand-in for a board, so the path
# a lab uses is exercised on every CI run.
set -u
tpuemu=$1
suite=$2
tmp=$(mktemp -d)
server=""
trap '[[ -n "$server" ]] && kill -9 "$server" 2>/dev/null; rm -rf "$tmp"' EXIT
if [[ -z "${TPUEMU_BOARD:-}" ]]; then
  "$tpuemu" serve --listen 127.0.0.1:0 --preset "${TPUEMU_BOARD_PRESET:-small}" --devices 2 --json 2>"$tmp/log" &
  server=$!
  for _ in $(seq 100); do
    port=$(sed -nE 's/.*"event":"listening".*"port":([0-9]+).*/\1/p' "$tmp/log")
    [[ -n "$port" ]] && break
    sleep 0.1
  done
  [[ -n "${port:-}" ]] || { echo "FAIL the stand-in server did not start: $(cat "$tmp/log")"; exit 1; }
  export TPUEMU_BOARD=127.0.0.1:$port
  echo "hil: no TPUEMU_BOARD set; a local tpuemu serve on $TPUEMU_BOARD stands in for the board"
fi
"$suite" --gtest_filter='Backends/Conformance.*/board'
