#!/usr/bin/env bash
# What the script does when the job agent itself fails (its exit status is
# neither a verdict nor success): the job goes on, says so in its .err log
# and in <log base>.agent-error, and never mistakes the agent's failure for
# a node's or the step's.
# shellcheck source=tests/script/lib.sh
. "$(dirname "$0")/lib.sh"

# The training step; with WATCH_RC, it ends once the watchdog beside it has started.
answer_srun() {
  [[ " $* " == *" --kill-on-bad-exit=1 "* ]] || return 0
  [ -z "${WATCH_RC:-}" ] || until grep -q '^ddpctl job watch ' "$STUB_LOG"; do sleep 0.05; done
  exit "${STEP_RC:-0}"
}
answer_ddpctl() {
  case "$1 ${2:-}" in
    "--version ") [ -z "${VERSION_FAILS:-}" ] || { echo "error while loading shared libraries: libfmt.so.9" >&2; exit 127; } ;;
    "job step-ended") exit 2 ;;
    "job watch") exit "${WATCH_RC:-0}" ;;
  esac
}
export -f answer_srun answer_ddpctl
agent_error() { grep -qF -- "$1" "$T"/job/logs/*agent-error* 2>/dev/null || fail_job "no agent-error file in logs/ says: $1"; }

# The agent cannot run on the node: no node check, samples or watchdog; training goes on.
render configs/local-cpu.yaml
nodes=2
VERSION_FAILS=1 run_job "$script"
expect_rc 0
expect_calls 1 '^ddpctl '
expect_calls 1 '^srun --kill-on-bad-exit=1 '
expect_job_err "cannot run $T/bin/ddpctl (error while loading shared libraries: libfmt.so.9): no node check, usage samples or watchdog for this job"
grep -qF "libfmt.so.9" "$T"/job/logs/*monitor-off* 2>/dev/null || fail_job "no monitor-off file in logs/: $(ls "$T/job/logs")"

# The watchdog ends with an error of its own: noted; the step's status stands.
: >"$STUB_LOG"
WATCH_RC=3 run_job "$script"
expect_rc 0
expect_call '^ddpctl job watch '
expect_job_err "the watchdog ($T/bin/ddpctl job watch) ended with exit status 3"
agent_error "ended with exit status 3"

# `job step-ended` fails (2, not a verdict): no in-job restart, the step's status.
render configs/local-restart.yaml
nodes=3
: >"$STUB_LOG"
STEP_RC=1 run_job "$script"
expect_rc 1
expect_calls 1 '^srun --kill-on-bad-exit=1 '
expect_calls 1 '^ddpctl job step-ended '
expect_no_call '^(scontrol requeue|ddpctl job requeue)'
expect_job_err "job step-ended failed (exit status 2): no in-job restart"
agent_error "job step-ended failed (exit status 2)"

# With an agent that cannot run, a failed step is not restarted.
: >"$STUB_LOG"
VERSION_FAILS=1 STEP_RC=1 run_job "$script"
expect_rc 1
expect_calls 0 '^ddpctl job step-ended '
expect_job_err "ddpctl: no in-job restart: the job agent cannot run here (above)"
echo ok
