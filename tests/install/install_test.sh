#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs the build into a temporary prefix, builds tests/install (the rtl_matmul example as a
# consumer of find_package(tpuemu) + tpuemu::systemc) against it and runs it: passes only when the
# installed example reports a bit-exact matmul. Any missing piece fails the test (never a skip).
# Usage: install_test.sh BUILD_DIR CONSUMER_SOURCE_DIR
set -euo pipefail
build=$1
consumer=$2
work=$(mktemp -d "${TMPDIR:-/tmp}/tpuemu-install.XXXXXX")
trap 'rm -rf "$work"' EXIT

fail() { echo "install_test: $*" >&2; exit 1; }

cmake --install "$build" --prefix "$work/prefix" --component systemc >"$work/install.log" 2>&1 ||
  { cat "$work/install.log" >&2; fail "cmake --install failed"; }
[[ -f $work/prefix/lib/cmake/tpuemu/tpuemuConfig.cmake ]] || fail "no tpuemuConfig.cmake in the install"

# A generator of the same kind as the build's (Ninja when present), a clean environment for the
# package search: only the temporary prefix.
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
cmake -S "$consumer" -B "$work/build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$work/prefix" -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF >"$work/configure.log" 2>&1 ||
  { cat "$work/configure.log" >&2; fail "configuring the consumer against the installed package failed"; }
cmake --build "$work/build" -j2 >"$work/build.log" 2>&1 ||
  { cat "$work/build.log" >&2; fail "building the consumer against the installed package failed"; }

out=$(SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1 "$work/build/rtl_matmul") || { echo "$out" >&2; fail "rtl_matmul failed"; }
echo "$out"
grep -q ": bit-exact " <<<"$out" || fail "rtl_matmul did not report a bit-exact result"
echo "install_test: ok"
