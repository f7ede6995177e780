#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Model files on the command line (docs/workloads.md): every bad input is one line on stderr
# naming the file, the layer and the field, exit 1, and nothing in --out; a good model writes its
# artefacts.
set -u
tpuemu=$1
root=$2
source "$(dirname "${BASH_SOURCE[0]}")/checks.sh"
bad=$root/tests/data/models-bad
# bad NAME FILE PATTERN...: exit 1, one line on stderr matching every pattern, --out left empty
bad() {
  local name=$1 file=$2
  shift 2
  rm -rf "$tmp/out"
  "$tpuemu" run "$bad/$file" --preset small --backend fake --out "$tmp/out" >"$tmp/stdout" 2>"$tmp/err"
  local got=$?
  if [[ $got -ne 1 ]]; then fail "$name: exit $got, expected 1"; return; fi
  if [[ $(grep -c . "$tmp/err") -ne 1 ]]; then fail "$name: not one line on stderr"; return; fi
  for p in "$file" "$@"; do
    if ! grep -qF -e "$p" "$tmp/err"; then fail "$name: stderr lacks '$p'"; return; fi
  done
  if [[ -e "$tmp/out" && -n "$(ls -A "$tmp/out")" ]]; then fail "$name: files left in --out"; return; fi
  pass "$name"
}
bad shapes_do_not_chain shapes.json "/layers/1/in" "layer 'down'" "takes 64 features" "gives 128"
bad unknown_layer_kind kind.json "/layers/0/kind" "layer 'pool'" "unknown layer kind 'maxpool'"
bad missing_field missing.json "/layers/0" "layer 'conv'" "out_channels"
bad cycle cycle.json "/layers/0/inputs" "layer 'a'" "cycle" "a <- b <- a"
bad kernel_larger_than_padded_input kernel.json "/layers/0/kernel" "layer 'wide'" "kernel 7x7 is larger than its padded input 6x6"

# out of HBM: one line naming the buffer and the policy, exit 1, nothing in --out
rm -rf "$tmp/out"
"$tpuemu" run "$root/examples/cnn.json" --preset small --backend fake --hbm-capacity 64KiB --out "$tmp/out" >"$tmp/stdout" 2>"$tmp/err"
got=$?
if [[ $got -eq 1 && $(grep -c . "$tmp/err") -eq 1 ]] && grep -q "out of HBM memory (bfc" "$tmp/err" &&
   [[ ! -e "$tmp/out" || -z "$(ls -A "$tmp/out")" ]]; then
  pass "hbm_capacity_too_small"
else
  fail "hbm_capacity_too_small (exit $got)"
fi

# info lists the layer kinds, timing sets and allocators
"$tpuemu" info --json >"$tmp/info.json" 2>"$tmp/err" &&
  python3 - "$tmp/info.json" <<'PY' && pass "info_lists_kinds_timing_sets_allocators" || fail "info_lists_kinds_timing_sets_allocators"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["layer_kinds"] == ["dense", "conv2d", "add", "ffn"], j["layer_kinds"]
assert {"bfc", "best-fit", "first-fit", "buddy", "tlsf"} <= set(j["allocators"])
assert "hbm2-2000" in [t["name"] for t in j["hbm_timing_sets"]]
PY

echo "$failures failure(s)"
[[ $failures -eq 0 ]]
