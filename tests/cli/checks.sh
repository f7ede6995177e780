# SPDX-License-Identifier: Apache-2.0
# What the CLI test scripts share (sourced after they set `tpuemu`): a temporary directory $tmp
# removed on exit, pass/fail counting, and `check`, the assertion on one command's exit code and
# one-line error. A script adds its own clean-up (servers to kill, descriptors to close) to
# `on_exit`; `fail_context` is how many lines of the last stderr a failure shows (0 for scripts
# whose failure messages carry the error themselves). With `quiet_passes=1`, a pass is only
# counted (in `passes`), for scripts of thousands of checks that print their failures alone.
tmp=$(mktemp -d)
failures=0
passes=0
quiet_passes=0
on_exit=()
fail_context=3
checks_cleanup() {
  local command
  for command in "${on_exit[@]}"; do eval "$command"; done
  rm -rf "$tmp"
}
trap checks_cleanup EXIT
pass() { passes=$((passes + 1)); ((quiet_passes)) || echo "ok   $1"; }
fail() {
  echo "FAIL $1"
  [[ $fail_context -gt 0 && -f "$tmp/err" ]] && head -"$fail_context" "$tmp/err"
  failures=$((failures + 1))
}
# check NAME EXPECTED_EXIT STDERR_PATTERN -- ARGS...: tpuemu ARGS ends within check_timeout
# seconds with that exit code and, on failure, one line on stderr matching the pattern.
check_timeout=600
check() {
  local name=$1 code=$2 pattern=$3
  shift 4
  timeout "$check_timeout" "$tpuemu" "$@" >"$tmp/out" 2>"$tmp/err"
  local got=$?
  if [[ $got -ne $code ]]; then fail "$name: exit $got, expected $code"; return; fi
  if [[ $code -ne 0 && $(grep -c . "$tmp/err") -ne 1 ]]; then fail "$name: not one line on stderr"; return; fi
  if [[ -n "$pattern" ]] && ! grep -qE -e "$pattern" "$tmp/err"; then fail "$name: stderr does not match /$pattern/"; return; fi
  pass "$name"
}
# finish [SUMMARY]: the closing line ("SUMMARY, N failures"), and the script's status.
finish() {
  echo "${1:+$1, }$failures failures"
  [[ $failures -eq 0 ]]
}
