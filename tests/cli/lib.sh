#!/usr/bin/env bash
# Sourced by every CLI test: a fresh temporary folder, the binary under test,
# and assertions on what the user sees. A failing test keeps its folder.
set -euo pipefail
: "${DDPCTL:?set DDPCTL to the ddpctl binary}"
: "${DDPCTL_SOURCE:?set DDPCTL_SOURCE to the source tree}"
T=$(mktemp -d "${TMPDIR:-/tmp}/ddpctl-test.XXXXXX")
keep_on_failure() {
  local rc=$?
  if [ "$rc" -eq 0 ]; then rm -rf "$T"; else echo "kept $T" >&2; fi
}
trap keep_on_failure EXIT
cd "$T"
export HOME="$T/home" DDPCTL_CLUSTERS=

fail() { echo "FAIL: $*" >&2; exit 1; }

# run CMD...: runs ddpctl, capturing stdout, stderr and the exit code.
run() {
  set +e
  "$DDPCTL" "$@" >"$T/out" 2>"$T/err"
  code=$?
  set -e
}
expect_code() { [ "$code" -eq "$1" ] || fail "exit code $code, expected $1; stderr: $(cat "$T/err")"; }
expect_err() { grep -qF -- "$1" "$T/err" || fail "stderr lacks: $1"$'\n'"stderr was:"$'\n'"$(cat "$T/err")"; }
expect_out() { grep -qF -- "$1" "$T/out" || fail "stdout lacks: $1"$'\n'"stdout was:"$'\n'"$(cat "$T/out")"; }
# expect_out_re ERE: a line of stdout matches the extended regular expression.
expect_out_re() { grep -qE -- "$1" "$T/out" || fail "stdout has no line matching: $1"$'\n'"stdout was:"$'\n'"$(cat "$T/out")"; }
