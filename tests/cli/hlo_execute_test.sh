#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `tpuemu run PROGRAM.hlo` (docs/hlo.md, "Executing on the device"): a JAX/XLA program of dense and
# convolution layers run through the model compiler, int8-quantised, bit-exact against the C++
# reference on the RTL core (small and default presets) and the fake backend; any other program
# refused at its first opcode the device has no form for, naming `tpuemu analyze`; options that mean
# nothing to a run refused.
set -u
tpuemu=$1
root=$2
source "$(dirname "${BASH_SOURCE[0]}")/checks.sh"
data=$root/tests/data/hlo

# ---- the 3-layer MLP (dot + broadcast bias + add + maximum with zero), bit-exact on the RTL core
for preset in small default; do
  check "mlp3_rtl_$preset" 0 "" -- run "$data/mlp3.hlo" --preset "$preset" --backend rtl
  grep -q "^result  *PASS bit-exact" "$tmp/out" && pass "mlp3 $preset: PASS" || fail "mlp3 $preset: no PASS"
  grep -q "^HLO program executed int8-quantised; original dtypes: f32$" "$tmp/out" &&
    pass "mlp3 $preset: says int8 and f32" || fail "mlp3 $preset: no quantisation line"
  [[ $(grep -c "^  layer [0-9] dot\.[123] (dense)" "$tmp/out") -eq 3 ]] && pass "mlp3 $preset: three dense layers" ||
    fail "mlp3 $preset: layers: $(grep layer "$tmp/out")"
done

# ---- the same run as the model file of the same layers: every figure of the report (layers, shapes,
# bias loads, buffers, cycles) equal. ReLU flags do not show in a report: unit_hlo_exec pins them.
cat >"$tmp/mlp3.json" <<'JSON'
{"name": "jit_mlp", "kind": "model", "batch": 8, "seed": 1, "input": {"name": "x", "features": 32},
 "layers": [{"name": "dot.1", "kind": "dense", "out": 64, "bias": true, "relu": true},
            {"name": "dot.2", "kind": "dense", "out": 64, "bias": true, "relu": true},
            {"name": "dot.3", "kind": "dense", "out": 16, "bias": true, "relu": true}]}
JSON
check mlp3_as_hlo 0 "" -- run "$data/mlp3.hlo" --preset small --backend rtl --json
cp "$tmp/out" "$tmp/hlo.json"
check mlp3_as_json 0 "" -- run "$tmp/mlp3.json" --preset small --backend rtl --json
python3 - "$tmp/hlo.json" "$tmp/out" <<'PY' && pass "mlp3: the HLO run reports as the model file's" || fail "mlp3: reports differ"
import json, sys
h, m = (json.load(open(f)) for f in sys.argv[1:])
h.pop("hlo"); h.pop("simulation"); m.pop("simulation")  # simulation: wall-clock figures
different = sorted(k for k in set(h) | set(m) if h.get(k) != m.get(k))
assert not different, different
PY

# ---- the fake backend, JSON: the run's report with the program's dtypes
check mlp3_fake_json 0 "" -- run "$data/mlp3.hlo" --backend fake --json --seed 7
python3 - "$tmp/out" <<'PY' && pass "mlp3 fake json" || fail "mlp3 fake json"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["result"]["bit_exact"] and j["result"]["checked_values"] > 0
assert j["hlo"] == {"executed": "int8", "original_dtypes": ["f32"]}
assert [(l["name"], l["kind"], l["in"], l["out"]) for l in j["layers"]] == [
    ("dot.1", "dense", [1, 1, 32], [1, 1, 64]), ("dot.2", "dense", [1, 1, 64], [1, 1, 64]),
    ("dot.3", "dense", [1, 1, 64], [1, 1, 16])]
assert j["batch"] == 8
PY

# ---- convolutions (bias, ReLU, stride 2), a residual add and a flattening dense layer
cat >"$tmp/cnn.hlo" <<'HLO'
HloModule jit_cnn
ENTRY main {
  img = bf16[2,8,8,4]{3,2,1,0} parameter(0)
  k1 = f32[3,3,4,4] parameter(1)
  b1 = f32[4] parameter(2)
  k2 = f32[1,1,4,8] parameter(3)
  w = f32[128,10] parameter(4)
  zero = f32[] constant(0)
  c1 = f32[2,8,8,4] convolution(img, k1), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
  bb = f32[2,8,8,4] broadcast(b1), dimensions={3}
  a1 = f32[2,8,8,4] add(c1, bb)
  z = f32[2,8,8,4] broadcast(zero), dimensions={}
  r1 = f32[2,8,8,4] maximum(a1, z)
  res = f32[2,8,8,4] add(r1, img)
  c2 = f32[2,4,4,8] convolution(res, k2), window={size=1x1 stride=2x2}, dim_labels=b01f_01io->b01f
  flat = f32[2,128] reshape(c2)
  ROOT d = f32[2,10] dot(flat, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
HLO
for backend in fake rtl; do
  check "cnn_$backend" 0 "" -- run "$tmp/cnn.hlo" --preset small --backend "$backend"
  grep -q "^result  *PASS bit-exact" "$tmp/out" && grep -q "original dtypes: bf16, f32$" "$tmp/out" &&
    grep -q "layer 2 c2 (conv2d): 8x8x4 -> 4x4x8" "$tmp/out" && pass "cnn $backend: PASS, conv layers" ||
    fail "cnn $backend: $(grep -E 'result|layer' "$tmp/out")"
done

# ---- programs the device cannot run: the first unsupported opcode at its line, nothing on stdout
check exponential_refused 1 "exponential\\.hlo:9:8: opcode 'exponential' is not supported on the device \\(supported: dot, convolution.*\\); \`tpuemu analyze .*/exponential\\.hlo\` analyses its memory$" -- \
  run "$data/exponential.hlo" --backend fake
[[ ! -s "$tmp/out" ]] && pass "exponential: nothing on stdout" || fail "exponential: stdout has text"
check transformer_refused 1 "transformer_block\\.hlo:[0-9]+:[0-9]+: opcode '[a-z-]+' is not supported on the device .*\`tpuemu analyze .*transformer_block\\.hlo\` analyses its memory$" -- \
  run "$data/transformer_block.hlo" --backend fake
sed 's/maximum(%add.1, %zeros.1)/maximum(%add.1, %x)/' "$data/mlp3.hlo" >"$tmp/max.hlo"
check maximum_not_relu 1 "max\\.hlo:18:[0-9]+: maximum runs on the device only as a ReLU" -- \
  run "$tmp/max.hlo" --backend fake

# ---- options: the run's apply, the analysis's and the program's own shapes do not
check execute_flag_gone 2 "--execute" -- run "$data/mlp3.hlo" --execute --backend fake
check execute_schedule 2 "--schedule: orders an HLO program's instructions for its memory analysis \\(\`tpuemu analyze .*mlp3\\.hlo\`\\); run executes" -- \
  run "$data/mlp3.hlo" --backend fake --schedule dfs
check execute_allocator_xla 2 "--allocator xla: places an HLO program's buffers for its memory analysis \\(\`tpuemu analyze" -- \
  run "$data/mlp3.hlo" --backend fake --allocator xla
check execute_batch 2 "--batch: an HLO program's shapes fix its batch" -- run "$data/mlp3.hlo" --backend fake --batch 4
check execute_devices 2 "--devices: an HLO program runs on one device" -- \
  run "$data/mlp3.hlo" --backend fake --devices 2 --shard batch
check execute_run_options 0 "" -- run "$data/mlp3.hlo" --backend fake --buffers 1 --allocator tlsf --requests 2 \
  --untiled -o "$tmp/art"
grep -q "HBM placed by the tlsf allocator" "$tmp/out" && [[ -f "$tmp/art/summary.json" ]] &&
  python3 -c 'import json,sys; sys.exit(0 if json.load(open(sys.argv[1]))["hlo"]["executed"]=="int8" else 1)' "$tmp/art/summary.json" &&
  pass "run options and -o DIR apply" || fail "run options: $(head -3 "$tmp/out")"

finish
