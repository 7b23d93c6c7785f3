#!/usr/bin/env bash
# Sourced by every CLI test: a fresh temporary folder, the binary under test,
# and assertions on what the user sees. A failing test keeps its folder.
set -euo pipefail
: "${DDPCTL:?set DDPCTL to the ddpctl binary}"
: "${DDPCTL_SOURCE:?set DDPCTL_SOURCE to the source tree}"
T=$(mktemp -d "${TMPDIR:-/tmp}/ddpctl-test.XXXXXX")
# Debian's python3 (scripts/setup installs it), not a Python version
# manager's shim that the machine puts first on PATH: pyenv's costs half a
# second of CPU per call, the tests call python3 hundreds of times, and the
# jobs they submit inherit this PATH.
PATH=$(tr ':' '\n' <<<"$PATH" | grep -v -e '/\.pyenv/' -e '/\.asdf/shims$' | paste -sd: -)
keep_on_failure() {
  local rc=$?
  if [ "$rc" -ne 0 ]; then
    echo "kept $T" >&2
  elif ! rm -rf "$T" 2>/dev/null; then
    # Something wrote into it while it was removed: a process outlived the test.
    echo "FAIL: $T could not be removed, something still writes there:"$'\n'"$(find "$T" -newermt '-10 seconds' 2>&1)" >&2
    return 1
  fi
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

# fake_slurm_on_path: Slurm's commands first on PATH are the fake queue
# (tests/cli/fake_slurm), its folder $FAKE_SLURM.
fake_slurm_on_path() {
  export FAKE_SLURM=$T/fake-slurm
  mkdir -p "$FAKE_SLURM/bin"
  local c
  for c in sbatch squeue sacct scontrol sinfo sacctmgr scancel srun; do
    ln -sf "$DDPCTL_SOURCE/tests/cli/fake_slurm" "$FAKE_SLURM/bin/$c"
  done
  export PATH=$FAKE_SLURM/bin:$PATH
}
