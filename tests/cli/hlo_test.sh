#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `tpuemu analyze PROGRAM.hlo` (docs/hlo.md): a JAX/XLA program's memory analysed without a
# device. The README's example, the JSON fields scripts read, the TPU compiler's out-of-memory
# report with every field, bad modules as one line with line:col, run options refused by analyze,
# the analysis' options refused by run naming analyze, and a JSON workload refused by analyze.
# Host code only (label quick).
set -u
tpuemu=$1
root=$2
source "$(dirname "${BASH_SOURCE[0]}")/checks.sh"
data=$root/tests/data/hlo
python3 - "$root/configs/presets/tpu-v4-like.json" "$tmp/bigvmem.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1])); p["name"] = "bigvmem"; p["vmem_rows"] = 131072
json.dump(p, open(sys.argv[2], "w"))
PY

# ---- the README's example: every schedule's peak, every policy, the usage split
check transformer 0 "" -- analyze "$data/transformer_block.hlo"
for word in "schedules" "text" "dfs" "list" "schedule used: .* (best" "xla" "planner" "bfc" "buddy" "tlsf" "program temporaries"; do
  grep -q -- "$word" "$tmp/out" && pass "report names $word" || fail "report lacks $word"
done

# ---- JSON: the fields the docs promise, each schedule's peaks, best <= text, heaps >= peak live
check transformer_json 0 "" -- analyze "$data/transformer_block.hlo" --json
python3 - "$tmp/out" <<'PY' && pass "json fields and bounds" || fail "json fields and bounds"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["program"]["entry_instructions"] > 50
assert j["memory"]["parameters_bytes"] > 0
assert j["schedule_requested"] == "best" and j["schedule"] in ("text", "dfs", "list")
peaks = {n: j["schedules"][n]["peak_live_bytes"] for n in ("text", "dfs", "list")}
for n in peaks: assert j["schedules"][n]["peak_live_bytes_unpadded"] <= peaks[n]
assert j["memory"]["peak_live_bytes"] == min(peaks.values()) <= peaks["text"]
assert j["memory"]["peak_live_bytes_unpadded"] <= j["memory"]["peak_live_bytes"]
pol = j["policies"]
for name in ("xla", "planner", "bfc", "first-fit", "best-fit", "buddy", "tlsf"):
    p = pol[name]
    assert p["heap_bytes"] >= j["memory"]["peak_live_bytes"], name
    assert 0 <= p["fragmentation"] <= 1 and p["padding_bytes"] >= 0, name
assert pol["planner"]["heap_bytes"] <= pol["xla"]["heap_bytes"] or pol["planner"]["timed_out"]
PY
check schedule_text 0 "" -- analyze "$data/transformer_block.hlo" --schedule text --allocator xla --json
python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); sys.exit(0 if j["schedule"]=="text" and list(j["policies"])==["xla"] else 1)' "$tmp/out" &&
  pass "--schedule text --allocator xla" || fail "--schedule text --allocator xla"
# Untiled sizes are dense: no padding at all.
check untiled 0 "" -- analyze "$data/transformer_block.hlo" --untiled --json
python3 -c 'import json,sys; m=json.load(open(sys.argv[1]))["memory"]; sys.exit(0 if m["peak_live_bytes"]==m["peak_live_bytes_unpadded"] else 1)' "$tmp/out" &&
  pass "--untiled: padded = unpadded" || fail "--untiled"

# ---- out of memory in the TPU compiler's terms: exit 1, the first line on stderr, the report whole
check oom 1 "transformer_block.hlo: Ran out of memory in memory space hbm\\. Used .* of 1\\.00 MiB hbm\\. Exceeded hbm capacity by" -- \
  analyze "$data/transformer_block.hlo" --hbm-capacity 1MiB
python3 - "$tmp/out" <<'PY' && pass "oom report has every field" || fail "oom report fields: $(head -20 "$tmp/out")"
import re, sys
t = open(sys.argv[1]).read()
for field in (r"Ran out of memory in memory space hbm\. Used \S+ \S+ of \S+ \S+ hbm\. Exceeded hbm capacity by",
              r"Total hbm usage >= ", r"\n\s+program\s+\S+", r"\n\s+arguments\s+\S+",
              r"Output size \S+ \S+; shares \S+ \S+ with arguments", r"Program hbm requirement",
              r"Unpadded \(", r"Padded \(", r"fragmentation", r"Largest program allocations in hbm:",
              r"\n  1\. Size: ", r"Operator: op_name=\"jit\(transformer_block\)/", r"source=model\.py:\d+",
              r"Shape: f32\[", r"Unpadded size: ", r"Extra memory due to padding: \S+ \S+ \(\d+\.\dx expansion\)",
              r"XLA label: ", r"Allocation type: (HLO temp|parameter|output|constant)"):
    assert re.search(field, t), field
PY
check oom_json 1 "Ran out of memory" -- analyze "$data/transformer_block.hlo" --hbm-capacity 1MiB --json
python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); o=j["out_of_memory"]; sys.exit(0 if o["exceeded_by_bytes"]==o["used_bytes"]-1048576 else 1)' "$tmp/out" &&
  pass "oom under --json: one JSON document" || fail "oom json"
check fits 0 "" -- analyze "$data/transformer_block.hlo" --hbm-capacity 1GiB
grep -q "fits in 1.00 GiB" "$tmp/out" && pass "fits" || fail "fits: $(tail -2 "$tmp/out")"

# ---- VMEM (S(1)) is its own heap, checked against the preset's VMEM: the overflow is named there
check vmem_oom 1 "vmem_overflow.hlo: Ran out of memory in memory space vmem\\. Used 8\\.00 MiB of 1\\.00 MiB vmem\\." -- \
  analyze "$data/oom/vmem_overflow.hlo"
grep -q "Largest program allocations in vmem:" "$tmp/out" && grep -q 'op_name="jit(f)/exp"' "$tmp/out" &&
  pass "vmem report lists its buffers" || fail "vmem report: $(tail -5 "$tmp/out")"
check vmem_json 1 "memory space vmem" -- analyze "$data/oom/vmem_overflow.hlo" --json
python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); o=j["out_of_memory"]; v=j["memory"]["vmem"]; sys.exit(0 if o["memory_space"]=="vmem" and v["buffers"]==2 and j["memory"]["buffers"]==2 and v["heap_bytes"]==8388608 else 1)' "$tmp/out" &&
  pass "vmem in the JSON, apart from HBM" || fail "vmem json"
check vmem_fits_larger_preset 0 "" -- analyze "$data/oom/vmem_overflow.hlo" --preset "$tmp/bigvmem.json"

# ---- a 10^12-element tensor is a valid program, out of memory at any real capacity
check huge 1 "Ran out of memory in memory space hbm" -- analyze "$data/huge_tensor.hlo" --hbm-capacity 16GiB --allocator xla

# ---- every test module is read and analysed by every policy: each heap holds the padded peak,
# the planner's is no larger than XLA's unless it says it timed out
for f in "$data"/*.hlo; do
  check "analyse $(basename "$f")" 0 "" -- analyze "$f" --json
  python3 - "$tmp/out" <<'PY' && pass "$(basename "$f"): heaps" || fail "$(basename "$f"): heaps"
import json, sys
j = json.load(open(sys.argv[1]))
peak, pol = j["memory"]["peak_live_bytes"], j["policies"]
assert all(p["heap_bytes"] >= peak for p in pol.values()), {n: p["heap_bytes"] for n, p in pol.items()}
assert pol["planner"]["heap_bytes"] <= pol["xla"]["heap_bytes"] or pol["planner"]["timed_out"]
PY
done

# ---- bad modules: one line with file:line:col, exit 1, no report
for f in "$data"/bad/*.hlo; do
  check "bad $(basename "$f")" 1 "$(basename "$f"):[0-9]+:[0-9]+: " -- analyze "$f"
  [[ ! -s "$tmp/out" ]] && pass "bad $(basename "$f"): nothing on stdout" || fail "bad $(basename "$f"): stdout has text"
done
check unknown_opcode_named 1 "unknown opcode" -- analyze "$data/bad/unknown_opcode.hlo"
# An XLA dump is *.txt: recognised by its first word.
cp "$data/mlp3.hlo" "$tmp/module_0001.jit_mlp.before_optimizations.txt"
check dump_txt 0 "" -- analyze "$tmp/module_0001.jit_mlp.before_optimizations.txt" --allocator xla

# ---- run's options are not analyze's; the analysis' options on run name analyze
check analyze_buffers 2 "--buffers" -- analyze "$data/mlp3.hlo" --buffers 2
check analyze_backend 2 "--backend" -- analyze "$data/mlp3.hlo" --backend fake
check analyze_execute 2 "--execute" -- analyze "$data/mlp3.hlo" --execute
check bad_schedule 2 "--schedule" -- analyze "$data/mlp3.hlo" --schedule random
check analyze_no_program 2 "program is required" -- analyze
check analyze_json_workload 2 "mlp\\.json: not HLO text .*analyze reads programs, \`tpuemu run .*mlp\\.json\` runs a workload" -- \
  analyze "$root/examples/mlp.json"
check analyze_json_stdin 2 "standard input: not HLO text" -- analyze - <"$root/examples/mlp.json"
check run_hlo_schedule 2 "--schedule: orders an HLO program's instructions for its memory analysis \\(\`tpuemu analyze .*mlp3\\.hlo\`\\)" -- \
  run "$data/mlp3.hlo" --backend fake --schedule dfs
for policy in xla planner; do
  check "run_hlo_$policy" 2 "--allocator $policy: places an HLO program's buffers for its memory analysis \\(\`tpuemu analyze .*mlp3\\.hlo\`\\)" -- \
    run "$data/mlp3.hlo" --backend fake --allocator "$policy"
done
check run_execute_gone 2 "--execute" -- run "$data/mlp3.hlo" --backend fake --execute
check workload_schedule 2 "--schedule: orders an HLO program's instructions for its memory analysis \\(\`tpuemu analyze PROGRAM\\.hlo\`\\)" -- \
  run --matmul 16x16x16 --preset small --backend fake --schedule dfs
check workload_xla 2 "--allocator xla: places an HLO program's buffers .*tpuemu analyze" -- \
  run --matmul 16x16x16 --preset small --backend fake --allocator xla
"$tpuemu" analyze --help >"$tmp/help" && grep -q "Analyse the memory of a JAX/XLA program" "$tmp/help" &&
  ! grep -q -- "--backend" "$tmp/help" && pass "analyze --help: the analysis' options only" || fail "analyze --help"
"$tpuemu" run --help >"$tmp/help" && ! grep -q -- "--schedule\\|--execute" "$tmp/help" &&
  pass "run --help: no analysis option" || fail "run --help shows --schedule or --execute"

finish
