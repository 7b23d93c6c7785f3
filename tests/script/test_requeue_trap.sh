#!/usr/bin/env bash
# The requeue trap (requeue:): Slurm signals the batch shell (SIGUSR1, grace
# before the time limit); the script passes the signal to the training step,
# which checkpoints and exits 75, and requeues the job with scontrol while
# requeue.max_restarts allows; once it is used up, the job ends with 75.
# Where the site sends that signal at preemption too (send_user_signal),
# Slurm shows the job's PreemptTime: the words say a preemption.
# shellcheck source=tests/script/lib.sh
. "$(dirname "$0")/lib.sh"

# The training step plays Slurm: it signals the batch shell (its parent),
# then waits for the signal to reach it and stops as the trainer does.
answer_srun() {
  [[ " $* " == *" --kill-on-bad-exit=1 "* ]] || return 0
  trap 'echo "step got USR1" >>"$STUB_LOG"; exit 75' USR1
  kill -USR1 "$PPID"
  while :; do sleep 0.05; done
}
export -f answer_srun
spec timed <<'EOF_SPEC'
name: timed
cluster: local
partition: cpu
nodes: 2
gpus_per_node: 0
procs_per_node: 1
time: "00:10:00"
output_dir: logs
requeue: {max_restarts: 2, grace: 60}
trainer: {model: smallcnn, data: synthetic}
EOF_SPEC
render timed.yaml
grep -q '^#SBATCH --signal=B:USR1@60$' "$script" || fail "the script does not ask for SIGUSR1 60 s before the limit"
nodes=2

run_job "$script" SLURM_RESTART_COUNT=1
expect_rc 0
expect_call '^step got USR1$'
expect_job_err "ddpctl: SIGUSR1: the time limit is near; asking the training step to checkpoint and stop"
expect_calls 1 '^scontrol requeue 4242$'
expect_job_err "ddpctl: requeueing job 4242 (restart 2 of 2)"

# An array task requeues itself, not the whole array.
: >"$STUB_LOG"
run_job "$script" SLURM_ARRAY_JOB_ID=4000 SLURM_ARRAY_TASK_ID=3
expect_rc 0
expect_calls 1 '^scontrol requeue 4000_3$'

# max_restarts used up: no requeue, the step's status.
: >"$STUB_LOG"
run_job "$script" SLURM_RESTART_COUNT=2
expect_rc 75
expect_call '^step got USR1$'
expect_no_call '^scontrol requeue'
expect_job_err "ddpctl: not requeueing job 4242: requeue.max_restarts (2) reached"

# The same signal at a preemption (send_user_signal): Slurm shows a PreemptTime.
# shellcheck disable=SC2317  # called by the stub (lib.sh)
answer_scontrol() {
  if [ "${1:-} ${2:-} ${3:-}" = "show job -o" ]; then
    echo "JobId=4242 JobState=RUNNING PreemptTime=2026-11-29T12:00:00 SuspendTime=None"
  elif [ "${1:-} ${2:-}" = "show hostnames" ] && [[ ${3:-} =~ ^([a-z]+)\[([0-9]+)-([0-9]+)\]$ ]]; then
    for i in $(seq "${BASH_REMATCH[2]}" "${BASH_REMATCH[3]}"); do echo "${BASH_REMATCH[1]}$i"; done
  fi
}
export -f answer_scontrol
: >"$STUB_LOG"
run_job "$script"
expect_rc 0
expect_call '^step got USR1$'
expect_job_err "ddpctl: SIGUSR1: the job is being preempted (PreemptTime=2026-11-29T12:00:00); asking the training step to checkpoint and stop"
expect_calls 1 '^scontrol requeue 4242$'
expect_job_err "ddpctl: requeueing job 4242 (restart 1 of 2): after preemption: Slurm sent SIGUSR1 (the site's send_user_signal), passed to the training step, which checkpointed"
echo ok
