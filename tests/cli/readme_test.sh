#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs every `./build/tpuemu ...` command of the README exactly as written (continuation lines
# joined, the trailing comment dropped by the shell), those under a launcher too (`mpirun ...
# ./build/tpuemu ...`), and checks that each exits 0. They run in a
# scratch directory whose `build` and `examples` are links to the build tree and the source's
# examples, so the outputs they name (series.csv, my.csv, plan.csv, mlp-run/) land there, not in the source.
# The quick-start commands (bash scripts/...) are what CI itself runs and are not repeated here.
set -u
source_dir=$1
build_dir=$2
source "$(dirname "${BASH_SOURCE[0]}")/checks.sh"
ln -s "$build_dir" "$tmp/build"
ln -s "$source_dir/examples" "$tmp/examples"
cd "$tmp" || exit 1

commands=$(python3 - "$source_dir/README.md" <<'PY'
import sys
text = open(sys.argv[1]).read()
out, in_block, pending = [], False, ""
for line in text.splitlines():
    if line.startswith("```"):
        in_block = not in_block
        continue
    if not in_block:
        continue
    launched = " ./build/tpuemu " in line and line.split(" ", 1)[0] in ("mpirun", "mpiexec")
    if pending or line.startswith("./build/tpuemu") or launched:
        pending += line.rstrip("\\").rstrip() + " " if line.endswith("\\") else line
        if not line.endswith("\\"):
            out.append(pending)
            pending = ""
print("\n".join(out))
PY
)
count=0
while IFS= read -r cmd; do
  [[ -z "$cmd" ]] && continue
  count=$((count + 1))
  if bash -c "$cmd" </dev/null >"$tmp/out" 2>"$tmp/err"; then  # mpirun would read the list
    pass "$cmd"
  else
    fail "(exit $?) $cmd"
  fi
done <<<"$commands"
grep -q '^mpirun .*\./build/tpuemu' <<<"$commands" || fail "no mpirun command found in the README"
rm -f "$tmp/err"  # the checks below are not about the last command's stderr
[[ $count -ge 10 ]] || fail "only $count README commands found"
for f in series.csv my.csv plan.csv mlp-run/memory.pb.gz mlp-run/trace.json; do
  [[ -s "$tmp/$f" ]] || fail "$f was not written"
done
finish "$count README commands"
