#!/usr/bin/env bash
# In-job restarts used up: every training step fails; the agent allows a
# restart while --restarts-done < --in-job (verdict 0), then says 11 (fail).
# The script runs 1 + in_job steps, then ends with the step's status and its
# message, without a requeue. With verdict 10 instead it requeues the job
# without the nodes the agent names.
# shellcheck source=tests/script/lib.sh
. "$(dirname "$0")/lib.sh"

answer_srun() { [[ " $* " != *" --kill-on-bad-exit=1 "* ]] || exit 3; }
answer_ddpctl() {
  case "$1 ${2:-}" in
    "job step-ended")
      local restarts_done in_job
      restarts_done=$(sed -E 's/.*--restarts-done ([0-9]+).*/\1/' <<<"$*")
      in_job=$(sed -E 's/.*--in-job ([0-9]+).*/\1/' <<<"$*")
      if [ "$restarts_done" -lt "$in_job" ]; then printf 'nodes n1 n3\nspares \nwhy node n2 lost\n'; exit 0; fi
      echo "ddpctl: error: no in-job restart: restarts used up" >&2
      printf 'exclude n1\nwhy restarts used up\n'
      exit "$USED_UP_VERDICT"
      ;;
    "--version ") echo "ddpctl stub" ;;
  esac
}
export -f answer_srun answer_ddpctl

render configs/local-restart.yaml
USED_UP_VERDICT=11 run_job "$script"
expect_rc 3
expect_calls 3 '^srun --kill-on-bad-exit=1 '
expect_calls 2 '^srun --kill-on-bad-exit=1 --overlap --mem=0 '
expect_calls 3 '^ddpctl job step-ended '
expect_call '^ddpctl job step-ended .*--restarts-done 2 --in-job 2 '
expect_job_err "ddpctl: error: no in-job restart: restarts used up"
expect_job_err "ddpctl: error: the training step exited with status 3"
expect_no_call '^scontrol requeue'
expect_no_call '^ddpctl job requeue'

# Verdict 10: requeued (exit 0) without the node the agent names, through the agent.
: >"$STUB_LOG"
USED_UP_VERDICT=10 run_job "$script"
expect_rc 0
expect_calls 3 '^srun --kill-on-bad-exit=1 '
expect_call '^ddpctl job requeue --exclude n1$'
expect_job_err "ddpctl: requeueing job 4242 (restart 1 of 1): because restarts used up"
echo ok
