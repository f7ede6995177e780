#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# RtlCore in a SystemC platform takes the Verilator harness's cycles: the rtl_matmul example (with
# the quantum of temporal decoupling at 1 and at 4096 cycles) against harness_cycles, the same
# program on the rtl backend's CoreSim with the same simple memory.
# Usage: rtl_core_cycles_test.sh RTL_MATMUL HARNESS_CYCLES
set -euo pipefail
example=$1
harness=$2
fail() { echo "rtl_core_cycles_test: $*" >&2; exit 1; }

expected=$("$harness") || fail "harness_cycles failed"
for quantum in 1 4096; do
  out=$(SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1 "$example" --simple-memory "$quantum") || { echo "$out" >&2; fail "rtl_matmul $quantum failed"; }
  grep -q ": bit-exact " <<<"$out" || fail "rtl_matmul $quantum: not bit-exact: $out"
  got=$(sed -n 's/.*(\([0-9]*\) cycles.*/\1/p' <<<"$out")
  [[ $got == "$expected" ]] || fail "quantum $quantum: RtlCore took $got cycles, the Verilator harness $expected"
  echo "quantum $quantum: $got cycles, as the harness"
done
