#!/usr/bin/env bash
# In-job restart (restart: {in_job: 2, spares: 1}): the first training step
# fails, the agent names a lost node (verdict 0 with the new nodes), and the
# script starts the step again on the spare, overlapping the old step, with
# --mem=0, a new rendezvous and the step-started record; the job succeeds.
# shellcheck source=tests/script/lib.sh
. "$(dirname "$0")/lib.sh"

# The training step (srun's -K1 step) fails the first time only.
answer_srun() {
  [[ " $* " == *" --kill-on-bad-exit=1 "* ]] || return 0
  [ "$(times_called '^srun --kill-on-bad-exit=1 ')" -gt 1 ] || exit 1
}
answer_ddpctl() {
  case "$1 ${2:-}" in
    "job step-ended") printf 'nodes n1 n3\nspares \nwhy node n2 lost\n' ;;
    "--version ") echo "ddpctl stub" ;;
  esac
}
export -f answer_srun answer_ddpctl

render configs/local-restart.yaml
run_job "$script"
expect_rc 0
expect_calls 2 '^srun --kill-on-bad-exit=1 '
expect_call '^srun --kill-on-bad-exit=1 --mem=0 --nodes=2 --ntasks=2 .*--nodelist=n1,n2 '
expect_call '^ddpctl job step-ended .*--nodes n1 n2 --spares n3 --restarts-done 0 --in-job 2 .*--rc 1( |$)'
expect_call '^srun --kill-on-bad-exit=1 --overlap --mem=0 --nodes=2 --ntasks=2 .*--nodelist=n1,n3 '
expect_call '^ddpctl job step-started .*--restart 1$'
# The node check runs before each step, on that step's nodes.
expect_call '^srun --mem=0 .*--nodelist=n1,n2 .*ddpctl job check '
expect_call '^srun --overlap --mem=0 .*--nodelist=n1,n3 .*ddpctl job check '
# A new rendezvous for the restart: a port of its own.
[ "$(grep -c '^ddpctl: master 10.0.0.1:' "$T/job.out")" -eq 2 ] || fail_job "expected two rendezvous lines"
expect_job_err "ddpctl: training step 1 on n1 n3"
expect_no_call '^scontrol requeue'
echo ok
