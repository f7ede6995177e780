#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Quick start (a): install what is missing, build, run the default demo workload on the RTL.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bash scripts/setup.sh
cmake --preset default >/dev/null
cmake --build --preset default --target tpuemu tpuemu_python
# The Python module into the site-packages of Debian's python3 (docs/python.md).
bash scripts/install-python.sh
./build/tpuemu run examples/mlp.json "$@"
