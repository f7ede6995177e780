#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The scripted pass of docs/cli.md "Outputs": every output-producing command (run, exec, hbm,
# replay, trace, plan, report, sweep) x {unwritable target, target is a directory, /dev/full,
# SIGINT at 10 points spread over the run and its write phase, and SIGINT twice}. After each: no
# partial output (either every output of the command exists, or nothing new does), no temporary
# or staging file, no input changed. Real timing: each command is timed once, then interrupted
# at 0, 10, ..., 90 % of the time after the process's start-up. Everything happens in a temporary directory.
set -u
tpuemu=$1
root=$2
source "$(dirname "${BASH_SOURCE[0]}")/checks.sh"
quiet_passes=1  # thousands of checks: the failures alone are printed
fail_context=0  # the failure messages carry the error
before_main=0

# The inputs every case starts from (a fresh copy per case).
base=$tmp/base
mkdir -p "$base"
cp "$root/examples/cnn.json" "$root/examples/mlp.json" "$root/examples/programs/matmul-8x8.s" "$base/"
cp "$root/examples/hbm/small.trace" "$base/requests.trace"
"$tpuemu" trace "$base/mlp.json" --batches 1,8,32 --requests 400 -o "$base/trace.csv" || exit 1
"$tpuemu" run --matmul 64x64x64 --preset small --backend fake -q -o "$base/rundir" || exit 1
cat >"$base/grid.json" <<'EOF'
{"model": "mlp.json", "axes": {"buffers": [1, 2, 3], "preset": ["small"], "batch": [8, 32], "backend": ["fake"]},
 "x": "buffers"}
EOF

# The process's start-up (the loader maps a large binary) before main() can note a signal: the
# 10 points are spread over the time after it, so that they fall in the run and its write phase.
start=$(date +%s%N)
"$tpuemu" --version >/dev/null
startup_ms=$(( ($(date +%s%N) - start) / 1000000 ))

# name | kind of -o (file or dir) | the command, OUT standing for the -o target
cases=(
  "run|dir|run cnn.json --preset small --backend fake --requests 4 -o OUT --report r.json --alloc-trace a.csv"
  "exec|file|exec matmul-8x8.s --preset small --backend fake -o OUT"
  "hbm|file|hbm --requests-file requests.trace -o OUT"
  "replay|file|replay trace.csv --capacity 1GiB --allocator all -o OUT"
  "trace|file|trace mlp.json --batches 1,8,32 --requests 400 -o OUT --json"
  "plan|file|plan trace.csv --space hbm --capacity 1GiB -o OUT"
  "report|file|report rundir -o OUT --json"
  "sweep|dir|sweep grid.json -o OUT"
)
# the file a dir output writes first, to put something in its way
first_in_dir() { [[ $1 == sweep ]] && echo sweep.csv || echo summary.json; }

# snapshot DIR: every path with its checksum (directories by name)
snapshot() { (cd "$1" && find . -mindepth 1 \( -type d -printf 'd %p\n' \) -o \( -type f -exec md5sum {} + \) | sort); }
paths() { (cd "$1" && find . -mindepth 1 -printf '%p\n' | sort); }
no_temporaries() {
  local found
  found=$(find "$1" \( -name '*.tmp*' -o -name '.*staging*' \) -print | head -3)
  [[ -z "$found" ]] && pass || fail "$2: left $found"
}
fresh() { rm -rf "$tmp/w"; cp -a "$base" "$tmp/w"; }
# expand OUT ARGS...: the command's words with OUT replaced
expand() { local out=$1; shift; local a r=(); for a in "$@"; do r+=("${a//OUT/$out}"); done; printf '%s\n' "${r[@]}"; }

for c in "${cases[@]}"; do
  IFS='|' read -r name kind cmd <<<"$c"
  read -ra args <<<"$cmd"
  # The reference: a run that succeeds, its time and every path it adds.
  fresh
  before=$(snapshot "$tmp/w")
  mapfile -t a < <(expand out "${args[@]}")
  start=$(date +%s%N)
  (cd "$tmp/w" && "$tpuemu" "${a[@]}" >"$tmp/stdout" 2>"$tmp/err") || { fail "$name: the reference run failed: $(cat "$tmp/err")"; continue; }
  took_ms=$(( ($(date +%s%N) - start) / 1000000 ))
  prints=$([[ -s "$tmp/stdout" ]] && echo 1 || echo 0)
  full=$(paths "$tmp/w")
  echo "$name: ${took_ms} ms, $(comm -13 <(echo "$before" | sed 's/^[^ ]* *//' | sort) <(echo "$full") | wc -l) new paths"
  empty=$(paths "$base")

  # ---- the target cannot be written / is a directory: exit 1, nothing new, nothing changed
  for failure in unwritable directory; do
    fresh
    if [[ $kind == file ]]; then
      if [[ $failure == unwritable ]]; then echo keep >"$tmp/w/out"; chmod 444 "$tmp/w/out"; else mkdir "$tmp/w/out"; fi
    else
      mkdir -p "$tmp/w/out"
      if [[ $failure == unwritable ]]; then echo keep >"$tmp/w/out/$(first_in_dir "$name")"; chmod 444 "$tmp/w/out/$(first_in_dir "$name")"
      else mkdir "$tmp/w/out/$(first_in_dir "$name")"; fi
    fi
    before=$(snapshot "$tmp/w")
    (cd "$tmp/w" && "$tpuemu" "${a[@]}" >"$tmp/stdout" 2>"$tmp/err"); rc=$?
    [[ $rc -eq 1 && $(grep -c . "$tmp/err") -eq 1 ]] && pass || fail "$name $failure: exit $rc, $(cat "$tmp/err")"
    [[ $(snapshot "$tmp/w") == "$before" ]] && pass || fail "$name $failure: the directory changed"
    no_temporaries "$tmp/w" "$name $failure"
  done
  # ---- stdout on /dev/full, and -o /dev/full for a file output
  fresh
  before=$(snapshot "$tmp/w")
  (cd "$tmp/w" && "$tpuemu" "${a[@]}" >/dev/full 2>"$tmp/err"); rc=$?
  if [[ $prints -eq 1 ]]; then  # the command prints something: the full disk is an error
    [[ $rc -eq 1 ]] && grep -q "write failed: No space left on device" "$tmp/err" && pass || fail "$name stdout /dev/full: exit $rc, $(cat "$tmp/err")"
    [[ $(snapshot "$tmp/w") == "$before" ]] && pass || fail "$name stdout /dev/full: outputs written"
  fi
  no_temporaries "$tmp/w" "$name stdout /dev/full"
  if [[ $kind == file ]]; then
    mapfile -t f < <(expand /dev/full "${args[@]}")
    (cd "$tmp/w" && "$tpuemu" "${f[@]}" >"$tmp/out.txt" 2>"$tmp/err"); rc=$?
    [[ $rc -eq 1 ]] && grep -q "/dev/full: write failed: No space left on device" "$tmp/err" && pass || fail "$name -o /dev/full: exit $rc, $(cat "$tmp/err")"
    # nothing printed, or (--json) the error object only
    [[ ! -s "$tmp/out.txt" ]] || { grep -q '"error"' "$tmp/out.txt" && ! grep -q '"bytes"\|"events"' "$tmp/out.txt"; } && pass ||
      fail "$name -o /dev/full: printed although the output failed"
    [[ $(snapshot "$tmp/w") == "$before" ]] && pass || fail "$name -o /dev/full: the directory changed"
  fi

  # ---- SIGINT at 10 points of the run (once, or twice in quick succession)
  for twice in 0 1; do
    for k in 0 1 2 3 4 5 6 7 8 9; do
      fresh
      before=$(snapshot "$tmp/w")
      delay=$(awk -v t="$took_ms" -v s="$startup_ms" -v k="$k" 'BEGIN { printf "%.3f", (s + (t - s) * k / 10) / 1000 }')
      (cd "$tmp/w" && exec "$tpuemu" "${a[@]}" >"$tmp/stdout" 2>"$tmp/err") &
      pid=$!
      sleep "$delay"
      kill -INT "$pid" 2>/dev/null
      [[ $twice -eq 1 ]] && { sleep 0.01; kill -INT "$pid" 2>/dev/null; }
      wait "$pid"; rc=$?
      where="$name SIGINT$([[ $twice -eq 1 ]] && echo ' twice') at $((k * 10)) % (exit $rc)"
      now=$(paths "$tmp/w")
      if [[ $rc -eq 0 ]]; then
        [[ $now == "$full" ]] && pass || fail "$where: exit 0 without every output"
      elif [[ $rc -eq 130 && ! -s "$tmp/err" ]]; then
        # killed by the default action before main() installed its handler (the loader's few
        # milliseconds): nothing can have been written
        [[ $(snapshot "$tmp/w") == "$before" ]] && { pass; before_main=$((before_main + 1)); } ||
          fail "$where: killed silently, and the directory changed"
      elif [[ $rc -eq 130 ]]; then
        [[ $(grep -c . "$tmp/err") -eq 1 ]] && pass || fail "$where: not one line: $(cat "$tmp/err")"
        if grep -q "every output" "$tmp/err"; then
          [[ $now == "$full" ]] && pass || fail "$where: says every output, but: $(comm -3 <(echo "$full") <(echo "$now") | head -3)"
        elif grep -q "nothing was written" "$tmp/err"; then
          [[ $(snapshot "$tmp/w") == "$before" ]] && pass || fail "$where: says nothing, but: $(comm -3 <(echo "$empty") <(echo "$now") | head -3)"
        else
          fail "$where: the line says neither: $(cat "$tmp/err")"
        fi
      else
        fail "$where: $(cat "$tmp/err")"
      fi
      no_temporaries "$tmp/w" "$where"
      # inputs never change, whatever happened
      for input in cnn.json mlp.json matmul-8x8.s requests.trace trace.csv grid.json rundir/summary.json; do
        cmp -s "$base/$input" "$tmp/w/$input" || fail "$where: input $input changed"
      done
    done
  done
done

finish "$passes checks ($before_main signals before main)"
