#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Verilator -Wall lint of the whole core for every preset's DIM.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
# The core's package is generated from the contract (spec/tpuemu.json).
gen=$(mktemp -d)
trap 'rm -rf "$gen"' EXIT
python3 spec/gen_spec.py spec/tpuemu.json --sv-core "$gen/tpu_pkg.sv"
# The core's sources are the manifest rtl/core.f (paths relative to rtl/: verilator -F).
sources=("$gen/tpu_pkg.sv" -F rtl/core.f)
# DIM 128 is linted by its own -Wall verilation at build time (2 minutes here would be redundant).
for dim in 8 16 32; do
  verilator --lint-only -Wall "${sources[@]}" --top-module tpu_top -GDim="$dim"
done
echo "lint: clean"
