# SPDX-License-Identifier: Apache-2.0
# What the CLI test scripts share (sourced after they set `tpuemu`): a temporary directory $tmp
# removed on exit, pass/fail counting, and `check`, the assertion on one command's exit code and
# one-line error. A script adds its own clean-up (servers to kill, descriptors to close) to
# `on_exit`; `fail_context` is how many lines of the last stderr a failure shows.
tmp=$(mktemp -d)
failures=0
on_exit=()
fail_context=3
checks_cleanup() {
  local command
  for command in "${on_exit[@]}"; do eval "$command"; done
  rm -rf "$tmp"
}
trap checks_cleanup EXIT
pass() { echo "ok   $1"; }
fail() { echo "FAIL $1"; [[ -f "$tmp/err" ]] && head -"$fail_context" "$tmp/err"; failures=$((failures + 1)); }
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
# The closing line, and the script's status.
finish() {
  echo "$failures failures"
  [[ $failures -eq 0 ]]
}
