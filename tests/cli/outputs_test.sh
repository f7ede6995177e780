#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Outputs that are lost or half-written (docs/cli.md, "Outputs"): an output naming an input is
# refused before anything runs; a command's outputs are published all together or not at all
# (a directory in the way, a read-only side file, stdout on /dev/full); Ctrl-C at any moment
# leaves everything or nothing and says which; two documents on stdout are a usage error.
# The fake backend and host code only; everything happens in a temporary directory.
set -u
tpuemu=$1
root=$2
source "$(dirname "${BASH_SOURCE[0]}")/checks.sh"
on_exit+=('exec 3>&- 2>/dev/null')
# same NAME FILE SUM: the file still has the checksum it had
same() { [[ $(md5sum <"$2") == "$3" ]] && pass "$1" || fail "$1: the file changed"; }
# leftovers NAME DIR: no temporary file or staging folder anywhere under DIR
leftovers() {
  local found
  found=$(find "$2" \( -name '*.tmp*' -o -name '.*staging*' \) -print | head -3)
  [[ -z "$found" ]] && pass "$1: no temporary left" || fail "$1: left $found"
}
small=(--preset small --backend fake)
mm=(--matmul 16x16x16 "${small[@]}")
w=$tmp/w
mkdir -p "$w"
cp "$root/examples/mlp.json" "$w/m.json"
cp "$root/examples/traces/mlp-serving.csv" "$w/t.csv"
cp "$root/examples/programs/matmul-8x8.s" "$w/p.s"
cp "$root/examples/hbm/small.trace" "$w/s"
printf 'id,lower,upper,size\na,0,2,64\nb,1,3,64\nc,2,4,128\n' >"$w/x.csv"
sum() { md5sum <"$1"; }

# ---- 4. an output that is an input: exit 2, the input untouched, nothing written
m=$(sum "$w/m.json")
check run_report_is_workload 2 "m.json: is the workload of this command" -- run "$w/m.json" "${small[@]}" --report "$w/m.json"
same "run --report m.json keeps m.json" "$w/m.json" "$m"
t=$(sum "$w/t.csv")
check replay_out_is_trace 2 "t.csv: is the trace of this command" -- replay "$w/t.csv" --capacity 1GiB -o "$w/t.csv"
same "replay -o t.csv keeps t.csv" "$w/t.csv" "$t"
check trace_out_is_workload 2 "m.json: is the workload" -- trace "$w/m.json" --batches 1,2 -o "$w/m.json"
same "trace -o m.json keeps m.json" "$w/m.json" "$m"
p=$(sum "$w/p.s")
check exec_out_is_program 2 "p.s: is the program" -- exec "$w/p.s" "${small[@]}" -o "$w/p.s"
same "exec -o p.s keeps p.s" "$w/p.s" "$p"
s=$(sum "$w/s")
check hbm_out_is_requests 2 "s: is the --requests-file" -- hbm --requests-file "$w/s" -o "$w/s"
same "hbm -o s keeps s" "$w/s" "$s"
# the same file under another name: a symbolic link, a hard link, a path through ..
ln -s m.json "$w/link.json"
ln "$w/m.json" "$w/hard.json"
check report_via_symlink 2 "link.json: is the workload" -- run "$w/m.json" "${small[@]}" --report "$w/link.json"
check report_via_hard_link 2 "hard.json: is the workload" -- run "$w/m.json" "${small[@]}" --report "$w/hard.json"
check report_via_dotdot 2 "is the workload" -- run "$w/m.json" "${small[@]}" --alloc-trace "$w/../w/m.json"
same "links: m.json kept" "$w/m.json" "$m"
# a directory output that would replace an input
mkdir -p "$w/o"
cp "$w/m.json" "$w/o/summary.json"
o=$(sum "$w/o/summary.json")
check run_dir_holds_input 2 "summary.json: is the workload" -- run "$w/o/summary.json" "${small[@]}" -o "$w/o"
same "run o/summary.json -o o keeps the input" "$w/o/summary.json" "$o"
[[ $(ls -A "$w/o") == summary.json ]] && pass "run -o o wrote nothing" || fail "run -o o wrote $(ls -A "$w/o")"
"$tpuemu" run "${mm[@]}" -q -o "$w/a" 2>"$tmp/err" || fail "run -o a: $(cat "$tmp/err")"
a=$(sum "$w/a/summary.json")
check report_out_is_artefact 2 "summary.json: is an input" -- report "$w/a" -o "$w/a/summary.json"
same "report a -o a/summary.json keeps it" "$w/a/summary.json" "$a"
check preset_file_is_output 2 "m.json: is the --preset file" -- run --matmul 16x16x16 --backend fake --preset "$w/m.json" --report "$w/m.json"
check two_outputs_one_file 2 "out.json: is named by both --report and --alloc-trace" -- \
  run "${mm[@]}" --report "$w/out.json" --alloc-trace "$w/out.json"
[[ ! -e "$w/out.json" ]] && pass "two outputs: nothing written" || fail "two outputs: out.json written"
# plan promises in place for a plan CSV (docs/allocation.md); an allocation trace stays protected
check plan_in_place 0 "" -- plan "$w/x.csv" --capacity 1KiB -o "$w/x.csv"
head -1 "$w/x.csv" | grep -q offset && pass "plan x.csv -o x.csv: planned in place" || fail "plan in place: $(head -1 "$w/x.csv")"
check plan_space_trace 2 "t.csv: is the allocation trace" -- plan "$w/t.csv" --space hbm --capacity 1GiB -o "$w/t.csv"
same "plan --space -o t.csv keeps the trace" "$w/t.csv" "$t"
leftovers "outputs naming inputs" "$w"

# ---- 5. run -o DIR: all or nothing
mkdir -p "$tmp/d1/trace.json"
check dir_trace_is_directory 1 "trace.json: is a directory" -- run "${mm[@]}" -o "$tmp/d1" --report "$tmp/d1.json"
[[ $(ls -A "$tmp/d1") == trace.json && ! -e "$tmp/d1.json" ]] && pass "trace.json a directory: nothing written" ||
  fail "trace.json a directory: left $(ls -A "$tmp/d1") $(ls "$tmp"/d1.json 2>/dev/null)"
echo keep >"$tmp/ro.csv"; chmod 444 "$tmp/ro.csv"
check alloc_trace_read_only 1 "ro.csv: refusing to replace a read-only file" -- \
  run "${mm[@]}" -o "$tmp/d2" --report "$tmp/d2.json" --alloc-trace "$tmp/ro.csv"
[[ ! -e "$tmp/d2" && ! -e "$tmp/d2.json" && $(cat "$tmp/ro.csv") == keep ]] && pass "read-only --alloc-trace: nothing written" ||
  fail "read-only --alloc-trace: outputs left"
check alloc_trace_no_folder 1 "cannot create: No such file or directory" -- \
  run "${mm[@]}" -o "$tmp/d3/deep" --alloc-trace "$tmp/none/a.csv"
[[ ! -e "$tmp/d3" ]] && pass "--alloc-trace in a missing folder: -o DIR and its parent not made" || fail "d3 left"
"$tpuemu" run "${mm[@]}" -o "$tmp/d4" --report "$tmp/d4.json" >/dev/full 2>"$tmp/err"; rc=$?
[[ $rc -eq 1 && ! -e "$tmp/d4" && ! -e "$tmp/d4.json" ]] && grep -q "standard output: write failed: No space left on device" "$tmp/err" &&
  pass "stdout on /dev/full: exit 1, nothing written" || fail "stdout on /dev/full: exit $rc, $(ls "$tmp" | grep d4)"
# an existing directory keeps its old files on a failure
mkdir -p "$tmp/d5/report.html"
echo old >"$tmp/d5/summary.json"
check existing_dir_kept 1 "report.html: is a directory" -- run "${mm[@]}" -o "$tmp/d5"
[[ $(cat "$tmp/d5/summary.json") == old ]] && pass "existing DIR: summary.json still old" || fail "existing DIR: summary.json replaced"
check out_is_a_file 1 "exists and is not a directory" -- run "${mm[@]}" -o "$tmp/ro.csv"
"$tpuemu" run "${mm[@]}" -q -o "$tmp/d6" --report "$tmp/d6.json" --alloc-trace "$tmp/d6.csv" 2>"$tmp/err"
[[ -f "$tmp/d6/report.html" && -f "$tmp/d6.json" && -f "$tmp/d6.csv" ]] && pass "success: every output" || fail "success: $(cat "$tmp/err")"
leftovers "all-or-nothing run -o" "$tmp"

# ---- 6. signals. A reader that never reads holds the write phase still: tpuemu has staged its
# files and blocks writing stdout to a full FIFO (the shell keeps it open on fd 3 and fills it).
mkfifo "$tmp/fifo"
exec 3<>"$tmp/fifo"
fill_fifo() { python3 -c 'import os,fcntl,sys
fd=3; fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) | os.O_NONBLOCK)
for chunk in (4096, 1):
    try:
        while True: os.write(fd, b"x" * chunk)
    except BlockingIOError: pass'; }
drain_fifo() { python3 -c 'import os,fcntl
fd=3; fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) | os.O_NONBLOCK)
try:
    while os.read(fd, 65536): pass
except BlockingIOError: pass'; }
# wait_staged DIR: until the staging folder of DIR holds the five artefacts (the write phase has
# begun); then a moment for the command to reach its blocked write on stdout
wait_staged() {
  for _ in $(seq 200); do
    [[ $(find "$(dirname "$1")" -path "*/.$(basename "$1").staging-*/*" -type f 2>/dev/null | wc -l) -eq 5 ]] && { sleep 0.5; return 0; }
    sleep 0.05
  done
  return 1
}
fill_fifo
"$tpuemu" run "${mm[@]}" -o "$tmp/s1" --report "$tmp/s1.json" >"$tmp/fifo" 2>"$tmp/s1.err" &
pid=$!
wait_staged "$tmp/s1" && pass "write phase reached (staged, stdout blocked)" || fail "no staging folder seen"
kill -INT "$pid"; sleep 0.3
kill -0 "$pid" 2>/dev/null && pass "one Ctrl-C in the write phase: still publishing" || fail "one Ctrl-C ended the write phase"
drain_fifo; wait "$pid"; rc=$?; drain_fifo
[[ $rc -eq 130 && -f "$tmp/s1/report.html" && -f "$tmp/s1.json" && $(grep -c . "$tmp/s1.err") -eq 1 ]] &&
  grep -q "interrupted while the outputs were published; every output was written" "$tmp/s1.err" &&
  pass "one Ctrl-C in the write phase: exit 130, everything written, '$(cat "$tmp/s1.err")'" ||
  fail "one Ctrl-C in the write phase: exit $rc, $(cat "$tmp/s1.err")"
fill_fifo
"$tpuemu" run "${mm[@]}" -o "$tmp/s2" --report "$tmp/s2.json" >"$tmp/fifo" 2>"$tmp/s2.err" &
pid=$!
wait_staged "$tmp/s2" || fail "no staging folder seen (2)"
kill -INT "$pid"; sleep 0.2; kill -INT "$pid"
wait "$pid"; rc=$?; drain_fifo
[[ $rc -eq 130 && ! -e "$tmp/s2" && ! -e "$tmp/s2.json" && $(grep -c . "$tmp/s2.err") -eq 1 ]] &&
  grep -q "interrupted again: stopped at once; nothing was written" "$tmp/s2.err" &&
  pass "two Ctrl-C in the write phase: killed, nothing written, '$(cat "$tmp/s2.err")'" ||
  fail "two Ctrl-C in the write phase: exit $rc, $(cat "$tmp/s2.err")"
# SIGTERM while the run itself runs (long enough on the fake backend): a clean stop, nothing written
"$tpuemu" run "$root/examples/cnn.json" "${small[@]}" --requests 8 -q -o "$tmp/s3" --report "$tmp/s3.json" 2>"$tmp/s3.err" &
pid=$!
sleep 0.5; kill -TERM "$pid"; wait "$pid"; rc=$?
[[ $rc -eq 130 && ! -e "$tmp/s3" && ! -e "$tmp/s3.json" && $(grep -c . "$tmp/s3.err") -eq 1 ]] &&
  grep -q "nothing was written" "$tmp/s3.err" && pass "SIGTERM during the run: exit 130, nothing written" ||
  fail "SIGTERM during the run: exit $rc, $(cat "$tmp/s3.err")"
exec 3>&-
leftovers "signals" "$tmp"

# ---- 7. stdout carries one document
check run_out_dash 2 "-o -: run writes a directory" -- run "${mm[@]}" -o -
[[ ! -e ./- && ! -e "$tmp/-" ]] && pass "run -o -: no directory named -" || fail "run -o - made a directory"
check run_json_report_dash 2 "--report -: - is standard output" -- run "${mm[@]}" --json --report -
check replay_json_dash 2 "-o -: - is standard output" -- replay "$w/t.csv" --capacity 1GiB --json -o -
check plan_json_dash 2 "-o -: - is standard output" -- plan "$w/x.csv" --capacity 1KiB --json -o -
check hbm_json_dash 2 "-o -: - is standard output" -- hbm --requests-file "$w/s" --json -o -
check exec_json_dash 2 "-o -: - is standard output" -- exec "$w/p.s" "${small[@]}" --json -o -
check report_json_dash 2 "-o -: - is standard output" -- report "$w/a" --json -o -
grep -q '"error"' "$tmp/out" && [[ $(python3 -c 'import json,sys; json.load(open(sys.argv[1])); print(1)' "$tmp/out") == 1 ]] &&
  pass "--json usage error: stdout is one JSON document" || fail "--json usage error stdout: $(head -c 200 "$tmp/out")"
check run_report_dash_ok 0 "" -- run "${mm[@]}" --report -
[[ $(head -c 1 "$tmp/out") == "{" ]] && grep -q "cycles" "$tmp/out" && pass "--report - without --json: the report, then the text" ||
  fail "--report - without --json"

finish
