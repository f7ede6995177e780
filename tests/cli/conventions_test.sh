#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# One CLI convention across subcommands (docs/cli.md): every subcommand's --help exits 0 and shows
# the shared options; an unknown option is a usage error (exit 2, one line); --version works.
set -u
tpuemu=$1
source "$(dirname "${BASH_SOURCE[0]}")/checks.sh"
fail_context=0  # the failure messages carry the error
subcommands=$("$tpuemu" --help | awk '/^Subcommands:/{s=1; next} s && NF {print $1}')
[[ $(wc -w <<<"$subcommands") -ge 7 ]] && pass "subcommands listed: $(echo $subcommands)" || fail "subcommands: $subcommands"
# the subcommands whose product is a file have -o/--out
with_out="run analyze exec hbm plan replay trace report sweep"
for sub in $subcommands; do
  help=$("$tpuemu" "$sub" --help 2>&1); rc=$?
  [[ $rc -eq 0 ]] || fail "$sub --help exits $rc"
  for opt in "--json" "-q,--quiet" "-h,--help"; do
    grep -q -- "$opt" <<<"$help" || fail "$sub --help lacks $opt"
  done
  if [[ " $with_out " == *" $sub "* ]]; then
    grep -q -- "-o,--out" <<<"$help" || fail "$sub --help lacks -o,--out"
  fi
  grep -q -- "--trace " <<<"$help" && fail "$sub still has an overloaded --trace option"
  "$tpuemu" "$sub" --no-such-option >/dev/null 2>"$tmp/err"; rc=$?
  [[ $rc -eq 2 && $(grep -c . "$tmp/err") -eq 1 ]] || fail "$sub --no-such-option: exit $rc"
  pass "$sub: --help, shared options, unknown option exit 2"
done
"$tpuemu" --version | grep -qE "^tpuemu [0-9]" && pass "--version" || fail "--version"
"$tpuemu" >/dev/null 2>&1; [[ $? -eq 2 ]] && pass "no subcommand: exit 2" || fail "no subcommand"
finish
