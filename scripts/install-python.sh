#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs the built Python module (cmake --install's component "python") into the site-packages
# of the interpreter the build was configured with, so `python3 -c "import tpuemu"` works; called
# by scripts/demo.sh and scripts/test.sh after their build. Usage: install-python.sh [BUILD_DIR]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
$SUDO cmake --install "$build" --component python >/dev/null
