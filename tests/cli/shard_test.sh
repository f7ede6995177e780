#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Sharded runs on the command line (docs/sharding.md): 4 MPI ranks on loopback give the same
# cycles and results as one process (serially and on threads); a world size that does not split
# the devices, and every other bad request, is one line on stderr, exit 1 and nothing in --out;
# -o DIR holds one memory map per device. mpirun comes from scripts/setup.sh (openmpi-bin): its
# absence fails this test.
set -u
tpuemu=$1
root=$2
source "$(dirname "${BASH_SOURCE[0]}")/checks.sh"
fail_context=5
mlp=$root/examples/mlp.json
if ! command -v mpirun >/dev/null; then
  echo "FAIL mpirun not found (scripts/setup.sh installs openmpi-bin)"
  exit 1
fi
mpi() { mpirun --allow-run-as-root --oversubscribe "$@"; }

# the figures that must not depend on how the devices were simulated
figures() {
  python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
for k in ("wall_seconds", "jobs", "ranks"): j.pop(k)
print(json.dumps(j, sort_keys=True))' "$1"
}

# tensor on the Verilated cores, batch and fsdp on the tlm model (small's cycles either way, in a
# fraction of the time): how the devices are spread over threads and ranks is what varies here.
for mode in batch tensor fsdp; do
  backend=tlm
  [[ $mode == tensor ]] && backend=rtl
  "$tpuemu" run "$mlp" --preset small --backend $backend --devices 4 --shard "$mode" --jobs 1 --json >"$tmp/serial.json" 2>"$tmp/err" &&
  "$tpuemu" run "$mlp" --preset small --backend $backend --devices 4 --shard "$mode" --jobs 2 --json >"$tmp/threads.json" 2>"$tmp/err" &&
  mpi -np 4 "$tpuemu" run "$mlp" --preset small --backend $backend --devices 4 --shard "$mode" --json >"$tmp/mpi4.json" 2>"$tmp/err" &&
  mpi -np 2 "$tpuemu" run "$mlp" --preset small --backend $backend --devices 4 --shard "$mode" --json >"$tmp/mpi2.json" 2>"$tmp/err"
  if [[ $? -ne 0 ]]; then fail "$mode: a run failed"; continue; fi
  ranks=$(python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(j["ranks"], j["bit_exact"], len(j["per_device"]))' "$tmp/mpi4.json")
  if [[ "$ranks" != "4 True 4" ]]; then fail "$mode: 4 ranks report '$ranks'"; continue; fi
  s=$(figures "$tmp/serial.json")
  if [[ "$s" == "$(figures "$tmp/threads.json")" && "$s" == "$(figures "$tmp/mpi4.json")" && "$s" == "$(figures "$tmp/mpi2.json")" ]]; then
    pass "$mode ($backend): serial, 2 threads, 4 and 2 MPI ranks agree on every cycle and byte"
  else
    fail "$mode: the runs differ"
    diff <(figures "$tmp/serial.json" | tr ',' '\n') <(figures "$tmp/mpi4.json" | tr ',' '\n') | head -5
  fi
done

# remote devices: 4 sessions on one `tpuemu serve` with a pool of 4 give the in-process figures
"$tpuemu" serve --listen 127.0.0.1:0 --json --preset small --devices 4 2>"$tmp/serve.log" &
server_pid=$!
port=""
for _ in $(seq 100); do
  port=$(python3 -c 'import json,sys
for l in open(sys.argv[1]):
    e = json.loads(l)
    if e.get("event") == "listening": print(e["port"])' "$tmp/serve.log" 2>/dev/null)
  [[ -n "$port" ]] && break
  sleep 0.1
done
if [[ -z "$port" ]]; then
  fail "remote: the server did not start"
elif "$tpuemu" run "$mlp" --preset small --devices 4 --shard tensor --json >"$tmp/local.json" 2>"$tmp/err" &&
     "$tpuemu" run "$mlp" --preset small --devices 4 --shard tensor --backend "remote://127.0.0.1:$port" --json >"$tmp/remote.json" 2>"$tmp/err"; then
  l=$(figures "$tmp/local.json" | sed 's/"backend": "[^"]*", //'); r=$(figures "$tmp/remote.json" | sed 's/"backend": "[^"]*", //')
  [[ "$l" == "$r" ]] && pass "remote: 4 devices on a server agree with in-process ones" || fail "remote: the figures differ"
else
  fail "remote: a run failed"
fi
kill "$server_pid" 2>/dev/null; wait "$server_pid" 2>/dev/null

# bad NAME CMD...: exit 1, one line on stderr matching $expect, nothing in --out
bad() {
  local name=$1 expect=$2
  shift 2
  rm -rf "$tmp/out"
  "$@" --out "$tmp/out" >"$tmp/stdout" 2>"$tmp/err"
  local got=$? want=${BAD_EXIT:-1}
  if [[ $got -ne $want ]]; then fail "$name: exit $got, expected $want"; return; fi
  if [[ $(grep -c "tpuemu: error" "$tmp/err") -ne 1 ]]; then fail "$name: not one error line"; return; fi
  if ! grep -qF -e "$expect" "$tmp/err"; then fail "$name: stderr lacks '$expect'"; return; fi
  if [[ -e "$tmp/out" ]]; then fail "$name: --out was created"; return; fi
  pass "$name"
}
run=("$tpuemu" run "$mlp" --preset small --backend fake)
bad more_devices_than_the_batch "a batch of 4 does not split into 8 equal parts" "${run[@]}" --batch 4 --devices 8 --shard batch
bad more_devices_than_columns "layer 'layer 0' has 256 output channels, which do not split into 3 equal parts" \
  "${run[@]}" --devices 3 --shard tensor
bad mesh_not_n "--mesh 2x3 has 6 devices, --devices is 4" "${run[@]}" --devices 4 --shard batch --mesh 2x3
bad torus_on_a_ring "a 2-D torus needs an interconnect with topology torus2d" "${run[@]}" --devices 4 --shard batch --mesh 2x2
# A malformed or missing --shard is a usage error (exit 2), found before anything runs.
BAD_EXIT=2 bad unknown_mode "unknown shard mode 'pipeline' (batch, tensor, fsdp)" "${run[@]}" --devices 2 --shard pipeline
BAD_EXIT=2 bad devices_without_mode "--devices 2: give --shard batch, tensor or fsdp" "${run[@]}" --devices 2
bad world_size "mpirun -np 3: the ranks must split --devices 4 into equal groups" \
  mpi -np 3 "$tpuemu" run "$mlp" --preset small --backend fake --devices 4 --shard fsdp

# -o DIR: device 0's artefacts with every device's HBM memory map
rm -rf "$tmp/out"
if "$tpuemu" run "$mlp" --preset small --devices 4 --shard fsdp -q -o "$tmp/out" 2>"$tmp/err" &&
   python3 - "$tmp/out/summary.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
spaces = [s["space"] for s in j["memory_map"]["spaces"]]
assert spaces == ["hbm device %d" % d for d in range(4)], spaces
assert j["sharded"]["devices"] == 4 and j["sharded"]["bit_exact"]
for s in j["memory_map"]["spaces"]:
    names = {b["name"] for b in s["buffers"]}
    assert "layer 0 weights shard" in names and "layer 0 weights" in names, names
PY
then
  if [[ $(grep -o 'data-space="hbm device [0-9]"' "$tmp/out/report.html" | sort -u | wc -l) -eq 4 ]]; then
    pass "report.html has one memory map per device"
  else
    fail "report.html lacks the per-device memory maps"
  fi
else
  fail "-o DIR of a sharded run"
fi

if ((failures)); then
  echo "$failures failure(s)"
  exit 1
fi
echo "all passed"
