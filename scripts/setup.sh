#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs every Debian package tpuemu needs. Idempotent: installs only what is missing.
set -euo pipefail
packages=(
  build-essential cmake ninja-build git
  python3
  # the Python module (host/src/python, docs/python.md): pybind11 and the headers to build it,
  # numpy for its arrays, pytest for its suite, matplotlib for examples/python
  python3-dev python3-pybind11 python3-numpy python3-pytest python3-matplotlib
  verilator
  libsystemc-dev
  libboost-dev libboost-system-dev
  libfmt-dev libcli11-dev nlohmann-json3-dev
  libgtest-dev libgmock-dev googletest libbenchmark-dev
  protobuf-compiler libprotobuf-dev zlib1g-dev
  golang-go
  # sharded runs and sweeps across machines: mpirun and the MPI library (tpuemu_shard_mpi)
  openmpi-bin libopenmpi-dev
  # headless Chromium opens report.html (tests/cli/report_test.sh, scripts/screenshot-report.sh)
  chromium fonts-dejavu-core
  # scripts/fuzz.sh and its test (fuzz_short): clang, and its libFuzzer and sanitizer runtimes,
  # which clang only recommends (so --no-install-recommends would leave them out)
  clang libclang-rt-dev
  # the firmware for a RISC-V soft core (firmware/board, docs/fpga.md): the rv32 cross compiler,
  # its C library, and QEMU to run it (tests/cli/rv32_qemu_test.sh)
  gcc-riscv64-unknown-elf picolibc-riscv64-unknown-elf qemu-system-misc
  # place and route for iCE40 (scripts/fmax-mxu.sh); Yosys itself comes from npm, below
  nextpnr-ice40
  nodejs
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}" >&2
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# npm: Node.js's package manager comes with some nodejs builds (NodeSource's) and is a package of
# its own in Debian's; install it only when the command is missing, so neither conflicts.
if ! command -v npm >/dev/null; then
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get install -y -qq --no-install-recommends npm >/dev/null
fi
# Yosys as WebAssembly (npm @yowasp/yosys, pinned by scripts/synth/package-lock.json): Debian's
# Yosys 0.23 cannot parse the RTL's multi-dimensional packed ports (docs/fpga.md).
root=$(cd "$(dirname "$0")/.." && pwd)
synth=$root/scripts/synth
pinned=$(sed -nE 's/.*"@yowasp\/yosys": *"([^"]+)".*/\1/p' "$synth/package.json")
installed=$(sed -nE 's/^  "version": *"([^"]+)".*/\1/p' "$synth/node_modules/@yowasp/yosys/package.json" 2>/dev/null || true)
if [ "$installed" != "$pinned" ]; then
  echo "setup: installing npm packages of scripts/synth (@yowasp/yosys $pinned)" >&2
  (cd "$synth" && npm ci --no-audit --no-fund --silent)
fi
