#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Quick start (b): install what is missing, build everything, run the whole test suite.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bash scripts/setup.sh
# The ci preset adds the DIM-128 core, so the suite tests DIM 128 too.
cmake --preset ci >/dev/null
cmake --build --preset ci
# The Python module into the site-packages of Debian's python3 (docs/python.md).
bash scripts/install-python.sh
ctest --preset ci
