#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The hardware-in-the-loop regression (docs/hil.md): the conformance suite against the device at
# TPUEMU_BOARD=host:port (preset TPUEMU_BOARD_PRESET, default small). Without TPUEMU_BOARD the
# suite runs against a `tpuemu serve` process started here, the stand-in for a board, so the path
# a lab uses is exercised on every CI run.
set -u
tpuemu=$1
suite=$2
source "$(dirname "${BASH_SOURCE[0]}")/checks.sh"
pids=()
on_exit+=('for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done')
source "$(dirname "${BASH_SOURCE[0]}")/servers.sh"
if [[ -z "${TPUEMU_BOARD:-}" ]]; then
  start_server stand-in --preset "${TPUEMU_BOARD_PRESET:-small}" --devices 2 || exit 1
  export TPUEMU_BOARD=127.0.0.1:$port
  echo "hil: no TPUEMU_BOARD set; a local tpuemu serve on $TPUEMU_BOARD stands in for the board"
fi
"$suite" --gtest_filter='Backends/Conformance.*/board'
