#!/usr/bin/env bash
# With in-job restarts (configs/local-restart.yaml), a step whose every
# task stopped with the trainer's requeue exit (75: Slurm signalled the
# step, as a preemption does) is not an in-job restart's: the agent says
# `stopped 1` with its requeue verdict (10), and the script leaves the
# restarts' loop for its own requeue, whose words are those of a job
# without restart: (Slurm's SIGTERM stopped the training step, which
# checkpointed), not "because the program checkpointed ...".
# shellcheck source=tests/script/lib.sh
. "$(dirname "$0")/lib.sh"

answer_srun() { [[ " $* " != *" --kill-on-bad-exit=1 "* ]] || exit 75; }
answer_ddpctl() {
  case "$1 ${2:-}" in
    "job step-ended")
      printf 'exclude \nstopped 1\nwhy the program checkpointed and stopped for a requeue (exit status 75); no in-job restart\n'
      exit 10
      ;;
    "--version ") echo "ddpctl stub" ;;
  esac
}
export -f answer_srun answer_ddpctl

render configs/local-restart.yaml
run_job "$script"
expect_rc 0
expect_calls 1 '^srun --kill-on-bad-exit=1 '
expect_calls 1 '^ddpctl job step-ended '
expect_calls 1 '^scontrol requeue 4242$'
expect_job_err "ddpctl: requeueing job 4242 (restart 1 of 1): after SIGTERM from Slurm to the training step, which checkpointed"
if grep -qF "because the program checkpointed" "$T/job.err"; then fail "the requeue gave the in-job restart's words"; fi
echo ok
