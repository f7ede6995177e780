#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# One check per defect found by hardening, each reproducing it and showing the fixed
# behaviour. Special files are a FIFO and a symbolic link in a temporary directory and /dev/null;
# nothing else of the system is touched.
set -u
tpuemu=$1
root=$2
source "$(dirname "${BASH_SOURCE[0]}")/checks.sh"
small=(--matmul 16x16x16 --preset small --backend fake)

# ---- 1. outputs never clobber special files
mkfifo "$tmp/fifo"
check fifo_without_reader 1 "fifo: cannot write: a FIFO with no reader" -- run "${small[@]}" --report "$tmp/fifo"
[[ -p "$tmp/fifo" ]] && pass "fifo stays a FIFO" || fail "fifo was replaced"
# A reader that is there before tpuemu opens the FIFO, with no race: this shell holds it open for
# reading and writing (fd 3); the report (~10 KB) fits in the pipe buffer and is read back after.
exec 3<>"$tmp/fifo"
"$tpuemu" run "${small[@]}" --report "$tmp/fifo" >/dev/null 2>"$tmp/err"
timeout 2 cat <&3 >"$tmp/from_fifo"
exec 3<&-
python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$tmp/from_fifo" && [[ -p "$tmp/fifo" ]] &&
  pass "fifo with a reader gets the JSON report" || fail "fifo with a reader"
echo old >"$tmp/target.json"
chmod 600 "$tmp/target.json"
ln -s target.json "$tmp/link.json"
"$tpuemu" run "${small[@]}" --report "$tmp/link.json" >/dev/null 2>"$tmp/err"
[[ -L "$tmp/link.json" && $(stat -c %a "$tmp/target.json") == 600 ]] && grep -q '"cycles"' "$tmp/target.json" &&
  pass "symlink followed, link and mode 600 kept" || fail "symlink or mode"
"$tpuemu" run "${small[@]}" --report /dev/null >/dev/null 2>"$tmp/err"
[[ -c /dev/null ]] && pass "/dev/null stays a character device" || fail "/dev/null replaced"
"$tpuemu" run "${small[@]}" -q --report /dev/stdout >"$tmp/stdout.json" 2>"$tmp/err"
python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$tmp/stdout.json" && [[ -f "$tmp/stdout.json" ]] &&
  pass "--report /dev/stdout writes to the redirected stdout" || fail "-o /dev/stdout"
echo keep >"$tmp/ro.json"; chmod 444 "$tmp/ro.json"
check read_only_refused 1 "ro.json: refusing to replace a read-only file" -- run "${small[@]}" --report "$tmp/ro.json"
[[ $(cat "$tmp/ro.json") == keep ]] && pass "read-only file untouched" || fail "read-only file changed"
check plan_stdin_needs_out 2 "not a regular file.*-o FILE" -- plan /dev/stdin --capacity 64KiB
[[ ! -e /dev/stdin.planned.csv ]] && pass "nothing written into /dev" || fail "/dev/stdin.planned.csv exists"

# ---- 2. inputs cannot exhaust memory (the process is limited to 1 GiB of address space)
python3 -c "print('['*100000+']'*100000)" >"$tmp/deep.json"
(ulimit -v 1048576; "$tpuemu" run "$tmp/deep.json" >"$tmp/out" 2>"$tmp/err"); rc=$?
[[ $rc -eq 1 ]] && grep -q "deep.json:1:65: nested deeper than 64 levels" "$tmp/err" && pass "deep JSON refused" || fail "deep JSON (exit $rc)"
(ulimit -v 1048576; "$tpuemu" replay /dev/zero --capacity 1MiB >"$tmp/out" 2>"$tmp/err"); rc=$?
[[ $rc -eq 1 ]] && grep -q "/dev/zero:1: line longer than the 64 KiB limit" "$tmp/err" && pass "/dev/zero as a trace refused" || fail "/dev/zero trace (exit $rc)"
(ulimit -v 1048576; "$tpuemu" exec /dev/zero --backend fake >"$tmp/out" 2>"$tmp/err"); rc=$?
[[ $rc -eq 1 ]] && grep -q "line longer than" "$tmp/err" && pass "/dev/zero as a program refused" || fail "/dev/zero program (exit $rc)"

# ---- 3. preset fields the compiled core fixes are never ignored: under --no-build (and an empty core
# cache) the run is refused naming the command that builds its core (docs/core-cache.md)
python3 - "$root/configs/presets/small.json" "$tmp/banks1.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1])); p["vmem_banks"] = 1; json.dump(p, open(sys.argv[2], "w"), indent=2)
PY
XDG_CACHE_HOME="$tmp/cache" check preset_vmem_banks_refused 1 \
  "preset small sets vmem_banks=1 but the core was built with 4, .*build it with \`tpuemu core build $tmp/banks1.json\`" -- \
  run --matmul 16x16x16 --preset "$tmp/banks1.json" --no-build

# ---- 4. a timing set the RTL cannot run is refused on load, never an abort
python3 - "$root/configs/hbm/hbm2-2000.json" "$tmp/refresh.json" "$tmp/faw.json" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))
r = dict(t, name="r"); r["timing"] = dict(t["timing"], tRFC=1, tREFI=2); json.dump(r, open(sys.argv[2], "w"))
f = dict(t, name="f"); f["timing"] = dict(t["timing"], tFAW=65536); json.dump(f, open(sys.argv[3], "w"))
PY
check timing_refresh_refused 1 "/timing/tREFI: 2 <= tRFC \\+ tRC \\+ tWR \\+ CWL" -- hbm --pattern stream --requests 100 --timing-set "$tmp/refresh.json"
[[ ! -s "$tmp/out" ]] && pass "nothing on stdout" || fail "stdout has text"
check timing_16_bits 1 "/timing/tFAW: must be in \\[1, 65535\\], got 65536" -- hbm --pattern stream --requests 100 --timing-set "$tmp/faw.json"

# ---- 5. trace replay fast-forwards idle time; counts are bounded
printf '0x0 READ 1000000000000\n' >"$tmp/far.trace"
check far_request_finishes 0 "" -- hbm --requests-file "$tmp/far.trace"
grep -q "fast-forwarded" "$tmp/out" && pass "idle time fast-forwarded" || fail "no fast-forward line"
check requests_overflow 2 "--requests: 18446744073709551616 is larger than" -- hbm --pattern stream --requests 18446744073709551616

# ---- 6. write errors on stdout are errors (stdout closed: EBADF)
for args in "info" "run --matmul 16x16x16 --preset small --backend fake" "run --matmul 16x16x16 --preset small --backend fake --json" \
            "hbm --pattern stream --requests 100" "replay $root/examples/traces/mlp-serving.csv --capacity 1GiB --json" \
            "trace $root/examples/mlp.json --batches 1,8"; do
  # shellcheck disable=SC2086
  "$tpuemu" $args >&- 2>"$tmp/err"; rc=$?
  [[ $rc -eq 1 ]] && grep -q "standard output: write failed: Bad file descriptor" "$tmp/err" &&
    pass "closed stdout is an error: $args" || fail "closed stdout: $args (exit $rc)"
done

# ---- 7. --json survives non-UTF-8 names; errors under --json are JSON on stdout
cp "$root/examples/mlp.json" "$tmp/$(printf 'm\xff.json')"
"$tpuemu" run "$tmp/$(printf 'm\xff.json')" --preset small --backend fake --json >"$tmp/out" 2>"$tmp/err"
python3 -c 'import json,sys; json.load(open(sys.argv[1], encoding="utf-8"))' "$tmp/out" && pass "non-UTF-8 file name under --json" || fail "non-UTF-8 --json"
"$tpuemu" run --matmul axbxc --json >"$tmp/out" 2>"$tmp/err"
python3 -c 'import json,sys; e=json.load(open(sys.argv[1]))["error"]; sys.exit(0 if e["exit_code"]==2 and "axbxc" in e["message"] else 1)' "$tmp/out" &&
  pass "usage error under --json is a JSON object" || fail "error under --json"
grep -q "json.exception" "$tmp/out" "$tmp/err" && fail "library exception text leaked" || pass "no library exception text"

# ---- 8. planner: --timeout must be a finite number; 0 is greedy only
check plan_timeout_nan 2 "--timeout: 'nan' is not a finite number" -- plan "$root/examples/plan/buffers.csv" --capacity 64KiB --timeout nan -o "$tmp/p.csv"
check plan_timeout_zero 0 "" -- plan "$root/examples/plan/buffers.csv" --capacity 64KiB --timeout 0 -o "$tmp/p.csv"

# ---- 9. unsigned options refuse negatives and overflow; options that cannot act are refused
check max_cycles_negative 2 "--max-cycles: '-5' is not a non-negative integer" -- run "${small[@]}" --max-cycles -5
check seed_negative 2 "--seed: '-1' is not a non-negative integer" -- run "${small[@]}" --seed -1
check seed_overflow 2 "--seed: 99999999999999999999 is larger than" -- run "${small[@]}" --seed 99999999999999999999
check batches_negative 2 "--batches: '-1' is not a non-negative integer" -- trace "$root/examples/mlp.json" --batches -1
check board_shim_on_simple 2 "--board-shim: is the HBM side of the board top; preset small" -- run --matmul 16x16x16 --preset small --board-shim 10
check board_shim_on_tlm 1 "the board top's DRAM shim is RTL" -- run --matmul 16x16x16 --preset default --backend tlm --board-shim 10
check backpressure_on_hbm 2 "--backpressure: applies to the simple memory model" -- run --matmul 16x16x16 --preset default --backpressure 10
check requantize_with_file 2 "requantize" -- run "$root/examples/mlp.json" --requantize
check read_ratio_with_file 2 "read-ratio" -- hbm --requests-file "$root/examples/hbm/small.trace" --read-ratio 0.5
check replay_unknown_space 2 "has no space 'foo'" -- replay "$root/examples/traces/mlp-serving.csv" --capacity foo=1KiB
check replay_duplicate_space 2 "space 'hbm' is given twice" -- replay "$root/examples/traces/mlp-serving.csv" --capacity hbm=1GiB --capacity hbm=2GiB
check replay_empty_space 2 "'=5' names no space" -- replay "$root/examples/traces/mlp-serving.csv" --capacity =5

# ---- 10. usage errors exit 2, data errors 1
check matmul_malformed 2 "axbxc" -- run --matmul axbxc
check replay_capacity_abc 2 "capacity" -- replay "$root/examples/traces/mlp-serving.csv" --capacity abc
check plan_capacity_abc 2 "capacity" -- plan "$root/examples/plan/buffers.csv" --capacity abc
check hbm_neither 2 "either --requests-file FILE or --pattern" -- hbm
check hbm_both 2 "excludes" -- hbm --requests-file "$root/examples/hbm/small.trace" --pattern stream
check hbm_probe_window 2 "--probe excludes --window" -- hbm --probe --window 300
check hbm_probe_pattern 2 "excludes" -- hbm --probe --pattern stream
"$tpuemu" hbm --probe >"$tmp/out" 2>"$tmp/err" && grep -qE "^conflict +48 +48 +44 +4$" "$tmp/out" && pass "hbm_probe" || fail "hbm_probe: $(cat "$tmp/out" "$tmp/err")"
check hbm_map_short 2 "--map: .*fewer than five fields" -- hbm --pattern stream --requests 100 --map ro-ba-bg-ch
check hbm_map_twice 2 "--map: .*twice" -- hbm --pattern stream --requests 100 --map ro-ro-bg-ch-co
# Any order of the five fields runs (a custom order of the controller), and the report names it.
"$tpuemu" hbm --pattern stream --requests 512 --map co-ro-ba-bg-ch --json >"$tmp/out" 2>"$tmp/err" &&
  grep -q '"address_map": "co-ro-ba-bg-ch"' "$tmp/out" && pass "hbm_map_custom" || fail "hbm_map_custom: $(cat "$tmp/err")"

# ---- 11. info lists every valid preset even when one is broken
mkdir "$tmp/presets"; cp "$root/configs/presets/small.json" "$tmp/presets/"; echo '{' >"$tmp/presets/broken.json"
TPUEMU_CONFIG_DIR="$tmp/presets" "$tpuemu" info >"$tmp/out" 2>"$tmp/err"; rc=$?
[[ $rc -eq 1 ]] && grep -q "^small " "$tmp/out" && grep -q "^default " "$tmp/out" && grep -q "^broken .*invalid" "$tmp/out" &&
  pass "info lists the valid presets and names the broken one" || fail "info with a broken preset (exit $rc)"
"$tpuemu" info --json >"$tmp/out" 2>"$tmp/err"
python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); sys.exit(0 if j["presets"] and j["backends"] else 1)' "$tmp/out" && pass "info --json" || fail "info --json"

# ---- 12. newcomer friction
"$tpuemu" --version >"$tmp/out" 2>&1 && grep -qE "^tpuemu [0-9]+\.[0-9]+\.[0-9]+" "$tmp/out" && pass "--version" || fail "--version"
"$tpuemu" run --help >"$tmp/out" 2>&1 && grep -q "TEXT=rtl" "$tmp/out" && grep -q "=4000000000" "$tmp/out" && pass "--help shows defaults" || fail "--help defaults"
check range_message_short 2 "--read-ratio: 7 is not in \\[0, 1\\]" -- hbm --pattern stream --read-ratio 7
[[ $(wc -c <"$tmp/err") -lt 200 ]] && pass "range error is short" || fail "range error is long"
"$tpuemu" run - --preset small --backend fake <"$root/examples/mlp.json" >"$tmp/out" 2>"$tmp/err" && grep -q "PASS" "$tmp/out" && pass "- reads the workload from stdin" || fail "stdin workload"

finish
