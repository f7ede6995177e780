#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs every tpuemu benchmark (docs/benchmarks.md) with one command:
#   1. configures the default preset build dir (build/, `cmake --preset default`) if needed,
#   2. builds the benchmark targets (bench_sim, bench_tlm, bench_roofline, bench_hbm, bench_hbm_timing, bench_alloc,
#      bench_fragmentation, bench_planner, bench_artefacts, bench_remote, bench_shard, bench_hlo,
#      bench_stop) and what they need,
#   3. runs them and prints their results, ratios and summary tables, then bench/bench_python.py
#      (the Python module's call overhead and read_hbm bandwidth),
#   4. runs the fuzzers under ASan/UBSan, 100,000 iterations per target (scripts/fuzz.sh, its own
#      clang build in build-fuzz/; docs/fuzzing.md).
# Exits non-zero if a benchmark fails its bit-exact / completion check, a fuzzer has a finding,
# or anything else fails.
#
# Usage: scripts/bench.sh [extra Google Benchmark flags, e.g. --benchmark_filter=default]
# Environment:
#   TPUEMU_BENCH_BUILD_DIR  build dir to use instead of build/ (configured with the default preset)
#   TPUEMU_BENCH_MIN_TIME   --benchmark_min_time in seconds (default 0.2; bench_roofline runs
#                           each case exactly once whatever this says)
#   TPUEMU_BENCH_OUT        directory for the JSON results (default <build dir>/bench-results)
#   TPUEMU_BENCH_FUZZ_RUNS  iterations per fuzz target (default 100000)
# The first build verilates and compiles the cores (several minutes with tpu-v4-like); later
# runs take about a minute on 2 cores.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

build_dir=${TPUEMU_BENCH_BUILD_DIR:-build}
min_time=${TPUEMU_BENCH_MIN_TIME:-0.2}
out_dir=${TPUEMU_BENCH_OUT:-$build_dir/bench-results}
benches=(bench_sim bench_tlm bench_roofline bench_hbm bench_hbm_timing bench_alloc bench_fragmentation bench_planner bench_artefacts bench_remote bench_shard bench_hlo bench_stop)

log() { printf '\n==> %s\n' "$*" >&2; }

configure() {
  log "configuring $build_dir (cmake --preset default)"
  cmake --preset default -B "$build_dir" -DTPUEMU_BUILD_BENCH=ON "$@" >&2
}

if [[ ! -f "$build_dir/CMakeCache.txt" ]]; then
  configure
elif ! grep -q '^TPUEMU_BUILD_BENCH:BOOL=ON' "$build_dir/CMakeCache.txt"; then
  configure  # configured earlier with the benchmarks off
fi

log "building ${benches[*]} and the Python module in $build_dir"
cmake --build "$build_dir" --target "${benches[@]}" tpuemu tpuemu_python >&2

mkdir -p "$out_dir"
stamp=$(date -u +%Y%m%dT%H%M%SZ)
failed=()
for b in "${benches[@]}"; do
  log "running $b"
  args=(--benchmark_out="$out_dir/$b-$stamp.json" --benchmark_out_format=json
        --benchmark_min_time="$min_time")
  start=$SECONDS
  if ! "$build_dir/bench/$b" "${args[@]}" "$@"; then
    failed+=("$b")
  fi
  printf '%s: %d s\n' "$b" $((SECONDS - start)) >&2
done

log "running bench_python"
# The interpreter the module was built for (CMakeLists.txt: Debian's python3 unless chosen).
python=$(sed -n 's/^Python3_EXECUTABLE:[A-Z]*=//p' "$build_dir/CMakeCache.txt")
start=$SECONDS
if ! PYTHONPATH="$build_dir/python" "${python:-python3}" bench/bench_python.py --cli "$build_dir/tpuemu"; then
  failed+=("bench_python")
fi
printf 'bench_python: %d s\n' $((SECONDS - start)) >&2

fuzz_runs=${TPUEMU_BENCH_FUZZ_RUNS:-100000}
log "running the fuzzers (scripts/fuzz.sh $fuzz_runs)"
start=$SECONDS
if ! bash scripts/fuzz.sh "$fuzz_runs"; then
  failed+=("fuzz")
fi
printf 'fuzz: %d s\n' $((SECONDS - start)) >&2

log "JSON results in $out_dir/*-$stamp.json"
if ((${#failed[@]})); then
  printf '\nbench: FAILED: %s\n' "${failed[*]}" >&2
  exit 1
fi
printf '\nbench: all benchmarks passed their checks, the fuzzers found nothing\n' >&2
