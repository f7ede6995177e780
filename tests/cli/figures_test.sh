#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# No silently wrong figure and no misleading diagnosis: preset fields the chosen memory model does
# not simulate are refused, the report's percentages use the memory that ran (and say why when
# above 100 %), HBM trace cycles that could wrap a count are refused, and an out-of-memory names
# the request as asked and the size the policy needed.
#   figures_test.sh TPUEMU ROOT quick   the fake backend and host code only (label quick)
#   figures_test.sh TPUEMU ROOT rtl     the same figures from the Verilated cores (label rtl)
set -u
tpuemu=$1
root=$2
mode=${3:-quick}
source "$(dirname "${BASH_SOURCE[0]}")/checks.sh"
# variant BASE OUT KEY VALUE: a copy of preset BASE with hbm.KEY set (named after OUT)
variant() {
  python3 - "$root/configs/presets/$1.json" "$tmp/$2.json" "$3" "$4" <<'EOF'
import json, sys
p = json.load(open(sys.argv[1]))
p["name"] = sys.argv[2].rsplit("/", 1)[-1][:-5]
value = sys.argv[4]
p["hbm"][sys.argv[3]] = int(value) if value.isdigit() else value
json.dump(p, open(sys.argv[2], "w"), indent=2)
EOF
}
# percentages NAME: every "% of the bound reached" and "% of the core's memory-port peak" in
# $tmp/out is at most 100, and the JSON report $tmp/report.json agrees
percentages() {
  local name=$1
  if ! python3 - "$tmp/out" "$tmp/report.json" <<'EOF'; then fail "$name: a percentage above 100"; return; fi
import json, re, sys
text = open(sys.argv[1]).read()
found = re.findall(r"([0-9.]+)% of the (?:bound reached|core's memory-port peak)", text)
assert len(found) == 2, found
assert all(float(v) <= 100.0 for v in found), found
r = json.load(open(sys.argv[2]))
assert 0 < r["roofline"]["fraction"] <= 1.0 and r["roofline"]["above_bound"] == "", r["roofline"]
assert 0 < r["hbm"]["peak_fraction"] <= 1.0 and r["hbm"]["above_peak"] == "", r["hbm"]
assert r["hbm"]["port_peak_bytes_per_cycle"] > 0
EOF
  pass "$name"
}

if [[ $mode == quick ]]; then
  backend=(--backend fake)
  # ---- every preset field is simulated or refused (file:line:col, the field and why)
  variant default bpc bytes_per_cycle 1
  check hbm_refuses_bytes_per_cycle 1 "bpc.json:[0-9]+:[0-9]+: /hbm/bytes_per_cycle: is not simulated with hbm.model \"hbm\": the latency and the bandwidth come from the timing set" -- run --matmul 64x64x64 --preset "$tmp/bpc.json" "${backend[@]}"
  variant default lat latency_cycles 1000000
  check hbm_refuses_latency_cycles 1 "lat.json:[0-9]+:[0-9]+: /hbm/latency_cycles: is not simulated with hbm.model \"hbm\"" -- run --matmul 64x64x64 --preset "$tmp/lat.json" "${backend[@]}"
  variant tpu-v4-like v4bpc bytes_per_cycle 128
  check hbm_refuses_on_every_hbm_preset 1 "v4bpc.json:[0-9]+:[0-9]+: /hbm/bytes_per_cycle: is not simulated" -- info --preset "$tmp/v4bpc.json"
  variant small ts timing_set hbm2-2000
  check simple_refuses_timing_set 1 "ts.json:[0-9]+:[0-9]+: /hbm/timing_set: is not simulated with hbm.model \"simple\": only the \"hbm\" model has them" -- run --matmul 16x16x16 --preset "$tmp/ts.json" "${backend[@]}"
  variant small pp page_policy closed
  check simple_refuses_page_policy 1 "pp.json:[0-9]+:[0-9]+: /hbm/page_policy: is not simulated with hbm.model \"simple\"" -- run --matmul 16x16x16 --preset "$tmp/pp.json" "${backend[@]}"
  for p in default small tpu-v4-like; do
    check "shipped_${p}_loads" 0 "" -- info --preset "$p"
  done
  grep -q "port       one 128 B beat per cycle" "$tmp/out" && pass "info names the port's peak" || fail "info: port line"

  # ---- a fraction above 100 % says why (the fake backend does not model the memory's bandwidth)
  variant small slow bytes_per_cycle 1
  "$tpuemu" run --matmul 64x64x64 --preset "$tmp/slow.json" "${backend[@]}" >"$tmp/out" 2>"$tmp/err"
  grep -qE "% of the bound reached \(above 100% because the fake backend's cycles are approximate" "$tmp/out" &&
    grep -qE "% of the core's memory-port peak \(above 100% because the fake backend" "$tmp/out" &&
    pass "above 100% is explained" || fail "above 100% without a reason"

  # ---- HBM trace cycles that could wrap a count are refused with their line (before any RTL)
  echo "0x40 READ 18446744073709551615" >"$tmp/max.trace"
  check hbm_cycle_2_64_refused 1 "^tpuemu: error: -:1: cycle 18446744073709551615 is beyond the last the replay can count, 281474976710655 \(2\^48 - 1\)" -- hbm --requests-file - <"$tmp/max.trace"
  printf '0x0 READ 0\n0x40 READ 281474976710656\n' >"$tmp/over.trace"
  check hbm_cycle_limit_plus_one_refused 1 "over.trace:2: cycle 281474976710656 is beyond" -- hbm --requests-file "$tmp/over.trace"

  # ---- out of memory: the request as asked, the size the policy needed and why
  mlp=("$root/examples/mlp.json" --preset small --hbm-capacity 412160 "${backend[@]}")
  check oom_bfc_names_the_unsplit_chunk 1 "'input' asks for 32.0 KiB \(alignment 8\) at time 1; .* it would not fit even without fragmentation; live buffers hold 402 KiB for 354 KiB asked \(bfc hands a free chunk out whole unless it is at least twice the request or the rest is at least 128 MiB\); largest live buffers: 'program' 194 KiB at 0x[0-9a-f]+ \(146 KiB asked\)" -- run "${mlp[@]}"
  check oom_buddy_names_the_power_of_two 1 "'program' asks for 146 KiB \(alignment 32\); buddy needs 256 KiB \(the request rounded up to a power of two: buddy blocks are powers of two aligned to their size\) at time 1; free 194 KiB .* it would not fit even without fragmentation" -- run "${mlp[@]}" --allocator buddy
  printf 'time,event,id,size\n0,alloc,a,5000\n1,alloc,c,5000\n2,alloc,b,5000\n' >"$tmp/g.csv"
  check oom_granularity_named 1 "g.csv:4: .*'b' asks for 4.88 KiB \(alignment 1\); first-fit needs 8.00 KiB \(the request rounded up to the granularity 4.00 KiB\) .* it would not fit even without fragmentation; live buffers hold 16.0 KiB for 9.77 KiB asked" -- replay "$tmp/g.csv" --capacity 16KiB --granularity 4096 --allocator first-fit
else
  backend=(--backend rtl)
  # ---- HBM trace at the last cycle the replay counts: sane figures
  echo "0x40 READ 281474976710655" >"$tmp/last.trace"
  "$tpuemu" hbm --requests-file "$tmp/last.trace" >"$tmp/out" 2>"$tmp/err"
  if python3 - "$tmp/out" <<'EOF'; then pass "hbm at cycle 2^48 - 1: sane figures"; else fail "hbm at cycle 2^48 - 1"; fi
import re, sys
text = open(sys.argv[1]).read()
idle, cycles = map(int, re.search(r"idle +(\d+) of the (\d+) cycles", text).groups())
refresh = float(re.search(r"refresh .*\(([0-9.]+)% of channel time\)", text).group(1))
assert 281474976710655 < cycles < 281474976710655 + 100000, cycles
assert idle <= cycles and refresh < 100.0, (idle, cycles, refresh)
EOF
fi

# ---- the report's percentages use the memory that ran: at most 100 % on the shipped presets
for p in default small; do
  for w in "$root/examples/mlp.json" "--matmul 64x64x64"; do
    # shellcheck disable=SC2086  # the workload is one or two words
    "$tpuemu" run $w --preset "$p" "${backend[@]}" --report "$tmp/report.json" >"$tmp/out" 2>"$tmp/err"
    percentages "percentages_${p}_${mode}_$(basename -- "${w// /_}")"
  done
done

finish
