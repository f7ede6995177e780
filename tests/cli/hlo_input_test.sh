#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# HLO text however it comes in (docs/hlo.md, "Reading HLO text"): on standard input (a file or a
# pipe), through a FIFO or a process substitution, as a dump opening with a // comment or a UTF-8
# byte order mark - told from a JSON workload by content, by the reader's own sniffing, in
# `analyze`, `run`, `trace` and `trace --also`. Malformed layouts refused at their token with nothing
# written; `run` naming the tensor of size 0 at its line; the out-of-memory line with exact bytes
# when the rounded figures print equal. Host code only (label quick).
set -u
tpuemu=$1
root=$2
source "$(dirname "${BASH_SOURCE[0]}")/checks.sh"
data=$root/tests/data/hlo
mlp=$data/mlp3.hlo

# The analysis of a program read from elsewhere is the file's but for where it came from.
same_analysis() {
  python3 - "$tmp/ref.json" "$tmp/out" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
for j in (a, b):
    j["program"].pop("source")
assert a == b
PY
}
"$tpuemu" analyze "$mlp" --json >"$tmp/ref.json" || fail "reference analysis"

# ---- standard input, a pipe, a FIFO, a process substitution: sniffed by content
check stdin_file 0 "" -- analyze - --json <"$mlp"
same_analysis && pass "stdin (a file): the file's analysis" || fail "stdin (a file): analysis differs"
check stdin_pipe 0 "" -- analyze - --json < <(cat "$mlp")
same_analysis && pass "stdin (a pipe): the file's analysis" || fail "stdin (a pipe): analysis differs"
grep -q '"source": "standard input"' "$tmp/out" && pass "stdin named standard input" || fail "stdin source name"
mkfifo "$tmp/program"
(cat "$mlp" >"$tmp/program" &)
check fifo 0 "" -- analyze "$tmp/program" --json
same_analysis && pass "FIFO not named *.hlo: the file's analysis" || fail "FIFO: analysis differs"
check process_substitution 0 "" -- analyze <(cat "$mlp") --json
same_analysis && pass "process substitution: the file's analysis" || fail "process substitution: analysis differs"
check trace_stdin 0 "" -- trace - --steps 2 < <(cat "$mlp")
head -1 "$tmp/out" | grep -q '^time,event,id,size' && grep -q ',alloc,s1\.jit_mlp\.temp,' "$tmp/out" &&
  pass "trace - --steps 2: the program's steps" || fail "trace - --steps 2: $(head -3 "$tmp/out")"
check trace_also_stdin 0 "" -- trace "$data/io_alias.hlo" --steps 2 --also - < <(cat "$mlp")
grep -q ',alloc,s1\.jit_mlp\.temp,' "$tmp/out" && pass "--also - read from a pipe" || fail "--also -"
check trace_also_twice 2 "--also -: standard input is the program already" -- trace - --steps 2 --also - <"$mlp"
check trace_also_json 2 "--also: '.*mlp\\.json' is not HLO text" -- \
  trace "$mlp" --steps 2 --also "$root/examples/mlp.json"

# ---- what the reader skips before HloModule, the sniffing skips: a // line, a BOM, /* */
{ echo "// XLA dump of jit_mlp, after optimizations"; cat "$mlp"; } >"$tmp/module_0002.jit_mlp.txt"
check dump_line_comment 0 "" -- analyze "$tmp/module_0002.jit_mlp.txt" --json
same_analysis && pass "// comment first: analysed" || fail "// comment first: analysis differs"
{ printf '\xef\xbb\xbf'; cat "$mlp"; } >"$tmp/bom.txt"
check byte_order_mark 0 "" -- analyze "$tmp/bom.txt" --json
same_analysis && pass "UTF-8 BOM first: analysed" || fail "UTF-8 BOM first: analysis differs"
check byte_order_mark_stdin 0 "" -- trace - --steps 1 < <(printf '\xef\xbb\xbf/* c */ // d\n'; cat "$mlp")

# ---- JSON workloads keep coming in the same ways
check json_stdin 0 "" -- trace - --batches 1,8 < <(cat "$root/examples/mlp.json")
check json_stdin_bad 1 "^tpuemu: error: standard input:1:[0-9]+: syntax error" -- \
  trace - --batches 1 < <(echo 'not json')
python3 -c 'import sys; sys.stdout.write("[" + "0," * (9 << 20) + "0]\n")' >"$tmp/big.json"
check json_stdin_limit 1 "standard input: larger than the 16 MiB limit of a JSON file" -- \
  trace - --batches 1 < <(cat "$tmp/big.json")
check json_line_limit 1 "standard input:1: line longer than the 1 MiB limit of a JSON file" -- \
  trace - --batches 1 < <(head -c 1200000 "$tmp/big.json")

# ---- malformed layouts: one line at the token, exit 1, no -o directory, no --report
bad_layout() {  # NAME SHAPE COLUMN CAUSE
  printf 'HloModule m\nENTRY e {\n  ROOT p = %s parameter(0)\n}\n' "$2" >"$tmp/$1.hlo"
  check "layout $1" 1 "^tpuemu: error: .*/$1\\.hlo:3:$3: $4" -- \
    analyze "$tmp/$1.hlo" -o "$tmp/$1.out" --report "$tmp/$1.report.json"
  [[ ! -e "$tmp/$1.out" && ! -e "$tmp/$1.report.json" && ! -s "$tmp/out" ]] &&
    pass "layout $1: nothing written" || fail "layout $1: output left"
}
bad_layout dimension_twice 'f32[4,4]{0,0}' 23 "malformed layout: dimension 0 appears twice in minor_to_major"
bad_layout negative_tile 'f32[8,128]{1,0:T(-5,128)}' 29 "malformed layout: tile dimension -5 is not positive"
bad_layout zero_tile 'f32[8,128]{1,0:T(0,0)}' 29 "malformed layout: tile dimension 0 is not positive"
bad_layout overflowing_tile 'f32[8,128]{1,0:T(4611686018427387904,128)}' 27 \
  "malformed layout: shape f32\\[8,128\\]\\{1,0:T\\(4611686018427387904,128\\)\\}: its tiled size overflows 64 bits"
bad_layout negative_space 'f32[2]{0:S(-1)}' 23 "malformed layout: memory space S\\(-1\\) is not in 0\\.\\.255"
bad_layout huge_space 'f32[2]{0:S(99999999999)}' 23 \
  "malformed layout: memory space S\\(99999999999\\) is not in 0\\.\\.255"
bad_layout element_size 'f32[2]{0:E(129)}' 23 "malformed layout: element size E\\(129\\) is not in 0\\.\\.128 bits"
check layout_stdin 1 "^tpuemu: error: standard input:3:23: malformed layout: dimension 0 appears twice" -- \
  analyze - < <(cat "$tmp/dimension_twice.hlo")
check layout_trace 1 "dimension_twice\\.hlo:3:23: malformed layout" -- \
  trace "$tmp/dimension_twice.hlo" --steps 2 -o "$tmp/trace.csv"
[[ ! -e "$tmp/trace.csv" ]] && pass "trace of a bad layout: no trace written" || fail "trace.csv left"

# ---- run: a tensor of size 0 named at its instruction, never as a --batch nobody gave
cat >"$tmp/empty.hlo" <<'HLO'
HloModule m
ENTRY e {
  x = f32[0,32] parameter(0)
  w = f32[32,4] parameter(1)
  ROOT d = f32[0,4] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
HLO
empty_cause="'x' of shape \\[0,32\\]: dimension 0 is 0; a tensor on the device holds 1\\.\\.1048576 values"
check execute_empty 1 "^tpuemu: error: .*/empty\\.hlo:3:3: $empty_cause.*; \`tpuemu analyze .*/empty\\.hlo\` analyses its memory" -- \
  run "$tmp/empty.hlo" --backend fake -o "$tmp/empty.out"
[[ ! -e "$tmp/empty.out" ]] && pass "execute_empty: nothing written" || fail "execute_empty: output left"
grep -q -- "--batch" "$tmp/err" && fail "execute_empty names --batch" || pass "execute_empty does not name --batch"

# ---- out of memory by a byte: the rounded figures print equal, the exact ones tell them apart
printf 'HloModule m\nENTRY e {\n  ROOT p = u8[4097] parameter(0)\n}\n' >"$tmp/oom.hlo"
"$tpuemu" analyze "$tmp/oom.hlo" --untiled --hbm-capacity 1 --json >"$tmp/oom.json" 2>/dev/null
used=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["out_of_memory"]["used_bytes"])' \
  "$tmp/oom.json")
by_one="Used 8\\.00 KiB \\($used B\\) of 8\\.00 KiB \\($((used - 1)) B\\) hbm\\. Exceeded hbm capacity by 1 B\\."
check oom_by_one_byte 1 "$by_one" -- \
  analyze "$tmp/oom.hlo" --untiled --hbm-capacity $((used - 1))
check oom_apart 1 "Used 8\\.00 KiB of 4\\.00 KiB hbm\\." -- analyze "$tmp/oom.hlo" --untiled --hbm-capacity 4096

finish
