#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Regenerates the allocation traces shipped in examples/traces from the project's own workloads
# (docs/allocation.md). The test suite runs this into a temporary directory and checks that the
# shipped files are exactly what the current code produces.
#
# Usage: scripts/gen-traces.sh TPUEMU_BINARY [OUT_DIR (default examples/traces)]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
tpuemu=$1
out=${2:-$root/examples/traces}
mkdir -p "$out"
# An MLP served to requests of batch 1..64, three in flight, interleaved layer by layer.
"$tpuemu" trace "$root/examples/mlp.json" --preset default --batches 1,8,32,4,64,16 --requests 24 --in-flight 3 \
  --out "$out/mlp-serving.csv"
# The same MLP under bursty traffic: large batches between runs of single requests, 4 in flight.
"$tpuemu" trace "$root/examples/mlp.json" --preset default --batches 64,1,1,1,48,2,1,96,1,1,3,64 --requests 36 \
  --in-flight 4 --out "$out/mlp-bursty.csv"
# An 8-layer CNN (im2col convolutions) served to requests of batch 1..32, three in flight.
"$tpuemu" trace "$root/examples/serving/cnn-8layer.json" --preset default --batches 1,8,32,4,16 --requests 20 --in-flight 3 \
  --out "$out/cnn-serving.csv"
