#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Options and fields that were silently ignored, messages that misled, exit codes that differed
# between siblings (docs/cli.md, "Inputs"): one check per reproduction, on the fake backend only.
set -u
tpuemu=$1
root=$2
source "$(dirname "${BASH_SOURCE[0]}")/checks.sh"
exec </dev/null  # no check reads the terminal
small=(--matmul 16x16x16 --preset small --backend fake)
trace="$root/examples/traces/mlp-serving.csv"
cd "$tmp" || exit 1

# ---- options that were ignored: now usage errors (exit 2), or input errors naming the line
check mesh_needs_devices 2 "^tpuemu: error: --mesh: applies to a run across devices: give --devices N" -- run "${small[@]}" --mesh 2x2
check jobs_needs_devices 2 "--jobs: applies to a run across devices" -- run "${small[@]}" --jobs 2
check no_overlap_needs_devices 2 "--no-overlap: applies to a run across devices" -- run "${small[@]}" --no-overlap
check shard_needs_devices 2 "--shard: applies to a run across devices" -- run "${small[@]}" --shard batch
check no_overlap_needs_fsdp 2 "--no-overlap: applies to --shard fsdp .*not --shard batch" -- run "${small[@]}" --devices 2 --shard batch --no-overlap
check profile_at_needs_out 2 "--profile-at: chooses the moment of memory.pb.gz, an artefact of -o DIR" -- run "${small[@]}" --profile-at 5
check profile_at_after_the_run 2 "--profile-at 99999999: after the end of the run \\(its last allocation event is at cycle [0-9]+\\)" -- \
  run "${small[@]}" --profile-at 99999999 -o "$tmp/late"
[[ ! -e "$tmp/late" ]] && pass "no empty profile written" || fail "an output directory was made for an empty profile"
check profile_at_end_of_the_run 0 "" -- run "${small[@]}" --profile-at end -o "$tmp/end" -q
check replay_allocator_twice 2 "--allocator: 'bfc' is given twice" -- replay "$trace" --capacity 1MiB --allocator bfc,bfc
check replay_allocator_empty_item 2 "--allocator: 'bfc,,tlsf': item 2 is empty" -- replay "$trace" --capacity 1MiB --allocator bfc,,tlsf
check replay_allocator_list 0 "" -- replay "$trace" --capacity 1MiB --allocator bfc,tlsf -q
check trace_batches_empty_item 2 "--batches: '1,,2': item 2 is empty" -- trace "$root/examples/mlp.json" --batches 1,,2
check trace_batches_repeat 0 "" -- trace "$root/examples/mlp.json" --batches 1,8,1 -q
check plan_space_empty 2 "--space: an empty value is not a value" -- plan "$trace" --space "" --capacity 1MiB -o "$tmp/p.csv"
check report_file_empty 2 "--report: an empty value is not a value" -- run "${small[@]}" --report ""
printf 'time,event,id,size\n0,alloc,a,128\n1,free,a,64\n' >free.csv
check free_size_differs 1 "^tpuemu: error: free.csv:3:10: free of 'a' with size 64, but it was allocated with size 128 on line 2$" -- \
  replay free.csv --capacity 1MiB
check matmul_empty 2 "--matmul: '' is not MxKxN" -- run --matmul "" --preset small --backend fake

# ---- messages that misled
echo '{"kind": "bogus"}' >kind.json
check kind_lists_model 1 "kind.json:1:2: /kind: unknown workload kind 'bogus' \\(expected one of \"matmul\", \"mlp\", \"model\"\\)" -- run kind.json --backend fake
check trace_kind_lists_cnn 1 "unknown workload kind 'bogus' for trace \\(expected one of \"matmul\", \"mlp\", \"cnn\"\\)" -- trace kind.json --batches 1
check unknown_subcommand 2 "^tpuemu: error: unknown subcommand 'frobnicate' \\(the subcommands: run, analyze, exec" -- frobnicate
cat >both.json <<'JSON'
{"kind": "model", "input": {"features": 16, "channels": 3},
 "layers": [{"kind": "dense", "out": 16}]}
JSON
check features_and_channels 1 "both.json:1:[0-9]+: /input/channels: give either \"features\" .* not both" -- run both.json --preset small --backend fake
cat >noname.json <<'JSON'
{"kind": "model", "input": {"features": 16},
 "layers": [{"name": "", "kind": "dense", "out": 16}]}
JSON
check empty_layer_name 1 "noname.json:2:[0-9]+: /layers/0/name: .*a layer's name must not be empty" -- run noname.json --preset small --backend fake
cat >preset.json <<'JSON'
{"kind": "model",
 "preset": "nosuch",
 "input": {"features": 16},
 "layers": [{"kind": "dense", "out": 16}]}
JSON
check workload_preset_place 1 "^tpuemu: error: preset.json:2:[0-9]+: /preset: unknown preset \"nosuch\"" -- run preset.json --backend fake
printf 'nop.dma\n# a comment\ndma hbm=3 local=0 len=1 count=1 path=hbm2vmem\nend\n' >p.s
check program_check_line 1 "^tpuemu: error: p.s:3: instruction 1 \\(dma\\): hbm address 0x3 is not aligned" -- exec p.s --preset small --backend fake
# A write that fails names the user's file, not its temporary (SIGXFSZ ignored: write gets EFBIG).
(trap '' XFSZ; ulimit -f 1; "$tpuemu" run "${small[@]}" --report "$tmp/big.json" >/dev/null 2>"$tmp/err"); rc=$?
[[ $rc -eq 1 ]] && grep -qE "^tpuemu: error: $tmp/big.json: write failed" "$tmp/err" && ! grep -q "tmp[0-9a-f]\{4\}\|staging" "$tmp/err" &&
  pass "a failed write names the user's path" || fail "failed write (exit $rc): $(cat "$tmp/err")"
# every malformed option value is exit 2, like its siblings
check matmul_too_large 2 "--matmul: .*more than 2\\^31 elements" -- run --matmul 100000x100000x100000 --preset small --backend fake
check hbm_capacity_1 2 "--hbm-capacity 1: must be a multiple of 8 bytes" -- run "${small[@]}" --hbm-capacity 1
check granularity_3 2 "--granularity: 3 is not a power of two" -- replay "$trace" --capacity 1MiB --granularity 3
check mesh_2y2 2 "--mesh: '2y2' is not N or AxB" -- run "${small[@]}" --devices 4 --shard batch --mesh 2y2
check run_allocator_bogus 2 "--allocator: 'bogus' is not one of bfc, first-fit, best-fit, buddy, tlsf, xla, planner, all" -- run "${small[@]}" --allocator bogus
check replay_allocator_bogus 2 "--allocator: 'bogus' is not one of" -- replay "$trace" --capacity 1MiB --allocator bogus
check devices_needs_shard 2 "--devices 2: give --shard batch, tensor or fsdp" -- run "${small[@]}" --devices 2
check shard_bogus 2 "--shard: unknown shard mode 'bogus'" -- run "${small[@]}" --devices 2 --shard bogus

# ---- a FIFO input, a clock, names, the report's limit
mkfifo fifo
start=$SECONDS
check fifo_without_writer 1 "fifo: no process opened the FIFO for writing within 5 s" -- run fifo --preset small --backend fake
(( SECONDS - start < 30 )) && pass "the FIFO wait ends" || fail "the FIFO wait took $((SECONDS - start)) s"
# The writer opens the FIFO inside `timeout`, so that it cannot wait forever for a reader either.
timeout 20 sh -c 'cat "$1" >fifo' sh "$root/examples/mlp.json" &
check fifo_with_writer 0 "" -- run fifo --preset small --backend fake -q
wait
python3 - "$root/configs/presets/small.json" clock.json <<'PY'
import json, sys
p = json.load(open(sys.argv[1])); p["clock_ghz"] = 1e-300; json.dump(p, open(sys.argv[2], "w"))
PY
check clock_ghz_range 1 "clock.json:[0-9:]+ /clock_ghz: must be in \\[0.001, 100\\], got 1e-300" -- run "${small[@]/small/$tmp/clock.json}"
printf '{"kind": "model", "input": {"features": 16}, "layers": [{"name": "a\\u001b[2Jb\\nc", "kind": "dense", "out": 16, "input": "zz"}]}' >esc.json
check control_characters_escaped 1 "layer 'a\\\\x1b\\[2Jb\\\\nc': unknown input 'zz'" -- run esc.json --preset small --backend fake
! grep -q $'\x1b' "$tmp/err" && pass "no escape character reaches stderr" || fail "a raw escape character on stderr"
printf '{"kind": "model", "name": "w\\u001b[31m", "input": {"features": 16}, "layers": [{"name": "l\\u001b[2J", "kind": "dense", "out": 16}]}' >esc2.json
"$tpuemu" run esc2.json --preset small --backend fake >"$tmp/out" 2>"$tmp/err"
grep -qF 'l\x1b[2J' "$tmp/out" && ! grep -q $'\x1b' "$tmp/out" && pass "names escaped in the report on stdout" ||
  fail "report on stdout: $(head -c 300 "$tmp/out" | od -c | head -3)"
"$tpuemu" run "${small[@]}" -q -o art 2>"$tmp/err" || fail "run -o art"
python3 - art/summary.json <<'PY'
import json, sys
s = json.load(open(sys.argv[1])); s["padding"] = ["x" * 1000] * 17500; json.dump(s, open(sys.argv[1], "w"), indent=1)
PY
check report_json_limit 1 "art/summary.json: larger than the 16 MiB limit of a JSON file" -- report art -o page.html
[[ ! -e page.html ]] && pass "no page from an oversized summary" || fail "page.html written"

finish
