#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Fuzzes the input readers (tests/fuzz/fuzz_inputs.cpp) and the firmware's frame decoder and
# command processor (firmware/fuzz/fuzz_frame.cpp) with libFuzzer under ASan/UBSan: RUNS
# iterations per target (default 100000, the benchmark's run; the test suite runs 2000), seeded
# from the committed corpus tests/fuzz/corpus/<target>/, reproducibly (-seed=1 and more, below).
# Prints one line per target; exits 1 if any target had a finding (the input is saved in
# <build>/findings/, the log in <build>/logs/). docs/fuzzing.md.
#
# Usage: bash scripts/fuzz.sh [RUNS]
# Environment:
#   TPUEMU_FUZZ_BUILD_DIR  clang build dir (default build-fuzz)
#   TPUEMU_FUZZ_SETUP=0    do not run scripts/setup.sh (the test: a missing clang must fail it)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
runs=${1:-100000}
build=${TPUEMU_FUZZ_BUILD_DIR:-build-fuzz}
[[ "${TPUEMU_FUZZ_SETUP:-1}" == 0 ]] || bash scripts/setup.sh
mkdir -p "$build/logs" "$build/findings"

# Clang and its libFuzzer/sanitizer runtimes (libclang-rt-dev), checked before CMake so that a
# missing one is one line and not a page of configure output.
probe="$build/logs/probe"
if ! command -v clang++ >/dev/null; then
  echo "fuzz: clang++ not found (bash scripts/setup.sh installs clang)" >&2
  exit 1
fi
if ! echo 'extern "C" int LLVMFuzzerTestOneInput(const char*, unsigned long) { return 0; }' |
    clang++ -x c++ -fsanitize=fuzzer,address,undefined - -o "$probe" 2>"$probe.log"; then
  echo "fuzz: clang++ cannot link -fsanitize=fuzzer,address,undefined (libclang-rt-dev; $probe.log)" >&2
  exit 1
fi

san="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined -g -O1"
if ! { cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang \
         -DCMAKE_CXX_COMPILER=clang++ -DTPUEMU_BUILD_FUZZ=ON -DTPUEMU_BUILD_BENCH=OFF \
         -DCMAKE_CXX_FLAGS="$san" -DCMAKE_C_FLAGS="$san" &&
       cmake --build "$build" -j "$(nproc)" --target fuzz_inputs fuzz_firmware_frame fuzz_session; } \
     >"$build/logs/build.log" 2>&1; then
  tail -n 20 "$build/logs/build.log" >&2
  echo "fuzz: building the fuzzers failed ($build/logs/build.log)" >&2
  exit 1
fi

export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
# Reproducible runs need more than -seed: libFuzzer's comparison tracing feeds the values the code
# compares into its mutations, pointers among them, so the address layout must be fixed too
# (setarch -R, where the container permits it), and -reload=0 stops the once-a-second re-read of
# the working corpus, which depends on timing.
fixed_layout=()
if setarch -R true 2>/dev/null; then
  fixed_layout=(setarch -R)
else
  echo "fuzz: setarch -R is not permitted here, so runs may differ with the address layout" >&2
fi
failed=()
# target -> libFuzzer on a fresh working corpus (new inputs go there, not into the source tree)
# followed by the committed seeds. -timeout: an input running 10 s is a hang, so a finding.
fuzz() {
  local target=$1; shift
  local work="$build/corpus/$target" log="$build/logs/$target.log" start=$SECONDS
  rm -rf "$work"; mkdir -p "$work"
  if "${fixed_layout[@]}" "$@" -runs="$runs" -seed=1 -reload=0 -timeout=10 \
      -artifact_prefix="$build/findings/$target-" "$work" "tests/fuzz/corpus/$target" >"$log" 2>&1; then
    local done_runs; done_runs=$(grep -oE '^Done [0-9]+ runs' "$log" | tail -1 | tr -dc 0-9)
    echo "fuzz: $target: ${done_runs:-?} runs in $((SECONDS - start)) s, no finding"
  else
    local rc=$?
    echo "fuzz: $target: FINDING after $((SECONDS - start)) s: $(grep -m1 -E 'ERROR|runtime error|deadly signal' "$log" || echo "exit status $rc") ($log)"
    failed+=("$target")
  fi
}
input_targets=(json preset timing model cnn trace plan hbm asm hlo layout manifest)
for target in "${input_targets[@]}"; do
  TPUEMU_FUZZ_TARGET=$target fuzz "$target" "$build/tests/fuzz_inputs" -max_len=65536
done
fuzz frame "$build/firmware/fuzz_firmware_frame"
fuzz session "$build/tests/fuzz_session" -max_len=65536
if ((${#failed[@]})); then
  echo "fuzz: findings in ${failed[*]} (inputs in $build/findings/)" >&2
  exit 1
fi
echo "fuzz: no finding in $runs runs of each of the $((${#input_targets[@]} + 2)) targets"  # + frame, session
