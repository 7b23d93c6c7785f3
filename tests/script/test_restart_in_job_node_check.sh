#!/usr/bin/env bash
# With in-job restarts, the node check runs before every step: when it fails
# on a node (verdict 11) no step runs on those nodes; the agent is told
# (--check-failed) and names the spare in the failed node's place, where the
# check passes and training runs. A failed check that is not restarted ends
# the job with the node check's message.
# shellcheck source=tests/script/lib.sh
. "$(dirname "$0")/lib.sh"

answer_ddpctl() {
  case "$1 ${2:-}" in
    "--version ") echo "ddpctl stub" ;;
    # The check fails while n2 is among the nodes.
    "job checked") [[ " $* " != *" n2"* ]] || exit 11 ;;
    "job step-ended")
      [ -z "${NO_RESTART:-}" ] || { echo "why no spare left"; exit 11; }
      printf 'nodes n1 n3\nspares \nwhy node check failed on n2\n'
      ;;
  esac
}
export -f answer_ddpctl
render configs/local-restart.yaml

run_job "$script"
expect_rc 0
expect_call '^ddpctl job checked .*--nodes n1 n2 --max-restarts 0$'
expect_call '^ddpctl job step-ended .*--nodes n1 n2 --spares n3 .*--check-failed$'
expect_call '^ddpctl job checked .*--nodes n1 n3 --max-restarts 0$'
expect_calls 1 '^srun --kill-on-bad-exit=1 '
expect_call '^srun --kill-on-bad-exit=1 --overlap --mem=0 .*--nodelist=n1,n3 '

: >"$STUB_LOG"
NO_RESTART=1 run_job "$script"
expect_rc 1
expect_calls 0 '^srun --kill-on-bad-exit=1 '
expect_job_err "ddpctl: error: the node check failed (above); no training step runs on these nodes"
echo ok
