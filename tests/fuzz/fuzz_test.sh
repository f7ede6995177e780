#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The short fuzz run of the test suite (docs/fuzzing.md): builds the libFuzzer targets with clang and
# ASan/UBSan in BUILD_DIR and runs each for RUNS iterations from the committed corpus
# (scripts/fuzz.sh). Fails on any finding, on a missing clang or libFuzzer runtime (no setup run
# here: scripts/setup.sh installs them), if a target did not run, if a second run generates other
# inputs, or if a crash went unnoticed.
# Usage: fuzz_test.sh SOURCE_DIR BUILD_DIR RUNS
set -uo pipefail
src=$1 build=$2 runs=$3
fail() { echo "FAIL: $*" >&2; exit 1; }

out=$(TPUEMU_FUZZ_SETUP=0 TPUEMU_FUZZ_BUILD_DIR="$build" bash "$src/scripts/fuzz.sh" "$runs" 2>&1)
rc=$?
echo "$out"
((rc == 0)) || fail "scripts/fuzz.sh $runs exited $rc"
for target in json preset timing model cnn trace plan hbm asm hlo layout manifest frame session; do
  grep -qE "^fuzz: $target: $runs runs in [0-9]+ s, no finding$" <<<"$out" ||
    fail "no '$runs runs ... no finding' line for target $target"
done

# Reproducible: a second run finds exactly the same inputs (seconds, the build is done).
first=$(cd "$build/corpus" && find . -type f | sort)
again=$(TPUEMU_FUZZ_SETUP=0 TPUEMU_FUZZ_BUILD_DIR="$build" bash "$src/scripts/fuzz.sh" "$runs" 2>&1) ||
  fail "the second run of scripts/fuzz.sh $runs failed: $(tail -1 <<<"$again")"
[[ "$(cd "$build/corpus" && find . -type f | sort)" == "$first" ]] ||
  fail "a second run with the same seed generated other inputs (not reproducible)"

# The harness must turn a crash into a failure: an unknown target aborts on the first input.
if TPUEMU_FUZZ_TARGET=no-such-target "$build/tests/fuzz_inputs" -runs=10 -seed=1 \
    -artifact_prefix="$build/findings/selftest-" "$src/tests/fuzz/corpus/json" >"$build/logs/selftest.log" 2>&1; then
  fail "fuzz_inputs with an unknown target exited 0 (a crash would go unnoticed)"
fi
grep -q "deadly signal" "$build/logs/selftest.log" || fail "the self-test's abort was not reported as a crash"
echo "PASS: $runs runs of each of the 14 fuzz targets, no finding, reproducible"
