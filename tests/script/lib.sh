#!/usr/bin/env bash
# Sourced by every script test (docs/testing.md "Script tests"): renders a job
# script with the ddpctl under test and runs it with bash as a batch job would,
# with stubs first on PATH for srun, scontrol, scancel, sbatch, squeue, ip and
# the job agent (ddpctl). Each stub logs its argv to $STUB_LOG; a test makes
# one answer differently by exporting a function answer_<name> (tests/script/stub).
# shellcheck source=tests/cli/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../cli/lib.sh"

export STUB_LOG=$T/calls
mkdir -p "$T/bin" "$T/job/logs"
: >"$STUB_LOG"
for ddpctl_stub in srun scontrol scancel sbatch squeue ip ddpctl; do
  ln -s "$DDPCTL_SOURCE/tests/script/stub" "$T/bin/$ddpctl_stub"
done
export PATH=$T/bin:$PATH
# The scripts call the stub agent (paths.cpp: agent_program) and name the trainer `ddp-train`.
export DDPCTL_PROGRAM=$T/bin/ddpctl DDPCTL_TRAINER=ddp-train
cp -r "$DDPCTL_SOURCE/configs" "$T/job/configs"

# render SPEC [gen options]: renders SPEC (relative to $T/job) and sets $script.
render() {
  rm -rf "$T/gen"
  (cd "$T/job" && "$DDPCTL" gen "$@" -o "$T/gen" >"$T/gen.out") || fail "ddpctl gen $* failed"
  script=$(find "$T/gen" -maxdepth 1 -name '*.sbatch' | sed -n 1p)
  [ -n "$script" ] || fail "ddpctl gen $* wrote no script: $(ls "$T/gen")"
}

# spec NAME <<EOF: writes $T/job/NAME.yaml, a spec on the local cluster profile.
spec() { cat >"$T/job/$1.yaml"; }

# run_job SCRIPT [VAR=VALUE...] [-- ARGS...]: runs SCRIPT (with ARGS) as Slurm starts a batch job on
# $nodes nodes (3 unless set: n1, n2, n3), with its variables and the submit
# folder as working directory, at most 60 s; sets $rc. Output in $T/job.out
# and $T/job.err.
run_job() {
  local s=$1
  shift
  set +e
  (
    cd "$T/job" || exit 1
    local n=${nodes:-3}
    export SLURM_JOB_ID=4242 SLURM_JOB_NAME=job SLURM_JOB_NODELIST="n[1-$n]" SLURM_NNODES=$n SLURM_JOB_NUM_NODES=$n
    export SLURM_SUBMIT_DIR=$T/job SLURM_JOB_PARTITION=cpu SLURM_CLUSTER_NAME=local SLURMD_NODENAME=n1
    while [ $# -gt 0 ] && [ "$1" != -- ]; do export "${1?}" && shift; done
    exec timeout 60 bash "$s" "${@:2}"
  ) >"$T/job.out" 2>"$T/job.err"
  rc=$?
  set -e
  [ "$rc" -ne 124 ] || fail_job "the job script ran over 60 s"
}

# fail_job WHY: fails, showing the calls the script made and what it printed.
fail_job() {
  fail "$1"$'\n'"--- calls ($STUB_LOG):"$'\n'"$(cat "$STUB_LOG")"$'\n'"--- job stdout:"$'\n'"$(cat "$T/job.out" 2>/dev/null)"$'\n'"--- job stderr:"$'\n'"$(cat "$T/job.err" 2>/dev/null)"
}
expect_rc() { [ "$rc" -eq "$1" ] || fail_job "the job script exited with $rc, expected $1"; }
# expect_call ERE / expect_no_call ERE: a logged call (`name arg...`) matches ERE / none does.
expect_call() { grep -qE -- "$1" "$STUB_LOG" || fail_job "no call matches: $1"; }
expect_no_call() { ! grep -qE -- "$1" "$STUB_LOG" || fail_job "a call matches, and should not: $1"; }
# expect_calls N ERE: exactly N calls match ERE.
expect_calls() {
  local n
  n=$(grep -cE -- "$2" "$STUB_LOG" || true)
  [ "$n" -eq "$1" ] || fail_job "$n call(s) match $2, expected $1"
}
expect_job_err() { grep -qF -- "$1" "$T/job.err" || fail_job "the job's stderr lacks: $1"; }
expect_job_out() { grep -qF -- "$1" "$T/job.out" || fail_job "the job's stdout lacks: $1"; }

# submit COMMAND [ARGS...]: `ddpctl COMMAND ARGS` (submit, sweep, race) from
# the submit folder against the stubs, into $T/runs; sets $scripts, the job
# scripts in the order sbatch got them (job ids 7001, 7002, ...), and
# $script_args, the arguments sbatch passed each (space-separated).
submit() {
  (cd "$T/job" && "$DDPCTL" "$@" --no-preflight --runs "$T/runs" >"$T/submit.out" 2>"$T/submit.err") ||
    fail "ddpctl $* failed:"$'\n'"$(cat "$T/submit.out" "$T/submit.err")"$'\n'"calls:"$'\n'"$(cat "$STUB_LOG")"
  mapfile -t scripts < <(sed -nE 's/^sbatch --parsable .* ([^ ]+\.sbatch)( .*)?$/\1/p' "$STUB_LOG")
  # shellcheck disable=SC2034  # the tests read it
  mapfile -t script_args < <(sed -nE 's/^sbatch --parsable .* ([^ ]+\.sbatch) ?(.*)$/\2/p' "$STUB_LOG")
  [ "${#scripts[@]}" -gt 0 ] || fail "ddpctl $* submitted nothing:"$'\n'"$(cat "$T/submit.out" "$T/submit.err")"
}
