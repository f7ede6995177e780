#!/usr/bin/env bash
# Fuzzes the input readers under ASan/UBSan with libFuzzer (tests/fuzz/fuzz_inputs.cpp) and the
# firmware's frame decoder (firmware/fuzz/fuzz_frame.cpp): RUNS iterations each (default 100000),
# seeded from the shipped examples and test data. A finding stops with the crashing input saved
# in build-fuzz/findings/. Usage: bash scripts/fuzz.sh [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --fuzz
runs=${1:-100000}
san="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined -g -O1"
cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang \
  -DCMAKE_CXX_COMPILER=clang++ -DTPUEMU_BUILD_FUZZ=ON -DCMAKE_CXX_FLAGS="$san" -DCMAKE_C_FLAGS="$san" >/dev/null
ninja -C build-fuzz fuzz_inputs fuzz_firmware_frame
mkdir -p build-fuzz/findings
seeds() {  # target -> a fresh corpus directory with the shipped inputs of that kind
  local dir=build-fuzz/corpus/$1
  rm -rf "$dir"; mkdir -p "$dir"
  case $1 in
    json|preset) cp --backup=numbered configs/presets/*.json examples/*.json tests/data/*.json "$dir/" ;;
    timing) cp configs/hbm/*.json "$dir/" ;;
    trace) cp --backup=numbered examples/traces/*.csv tests/data/*.csv examples/plan/*.csv "$dir/" ;;
    asm) cp examples/programs/*.s tests/data/*.s "$dir/" ;;
  esac
  echo "$dir"
}
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
for target in json preset timing trace asm; do
  echo "fuzz: $target, $runs runs"
  TPUEMU_FUZZ_TARGET=$target build-fuzz/tests/fuzz_inputs -runs="$runs" -max_len=65536 \
    -artifact_prefix=build-fuzz/findings/$target- "$(seeds "$target")" 2>&1 | tail -2
done
echo "fuzz: firmware frames, $runs runs"
build-fuzz/firmware/fuzz_firmware_frame -runs="$runs" -artifact_prefix=build-fuzz/findings/frame- 2>&1 | tail -2
echo "fuzz: no finding in $runs runs of each target"
