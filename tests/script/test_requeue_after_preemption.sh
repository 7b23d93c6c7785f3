#!/usr/bin/env bash
# A training step that checkpointed and stopped (75) on a signal ddpctl did
# not send: Slurm's SIGTERM to the step, as a preemption sends it (the batch
# shell is not signalled). The job is requeued, and its words say so, not
# "at the time limit": on a partition the profile says is preemptible, a
# preemption; elsewhere, a SIGTERM from Slurm.
# A step that ended with another status (torchrun ends 1 on SIGTERM) is
# requeued only while Slurm shows the job preempted (its PreemptTime);
# otherwise it failed, and is not.
# shellcheck source=tests/script/lib.sh
. "$(dirname "$0")/lib.sh"

# The step plays a preempted trainer: SIGTERM reached it, it checkpointed and exited 75.
# shellcheck disable=SC2317  # called by the stub (lib.sh), redefined below
answer_srun() {
  [[ " $* " == *" --kill-on-bad-exit=1 "* ]] || return 0
  echo "step stopped by SIGTERM" >>"$STUB_LOG"
  exit 75
}
export -f answer_srun
for partition in scavenger cpu; do
  spec "on-$partition" <<EOF_SPEC
name: on-$partition
cluster: local
partition: $partition
nodes: 2
gpus_per_node: 0
procs_per_node: 1
time: "00:10:00"
output_dir: logs
requeue: {max_restarts: 2, grace: 20}
trainer: {model: smallcnn, data: synthetic}
EOF_SPEC
done
nodes=2

render on-scavenger.yaml
: >"$STUB_LOG"
run_job "$script"
expect_rc 0
expect_call '^step stopped by SIGTERM$'
expect_calls 1 '^scontrol requeue 4242$'
expect_job_err "ddpctl: requeueing job 4242 (restart 1 of 2): after preemption: Slurm's SIGTERM stopped the training step, which checkpointed (partition scavenger is preemptible)"

render on-cpu.yaml
: >"$STUB_LOG"
run_job "$script"
expect_rc 0
expect_calls 1 '^scontrol requeue 4242$'
expect_job_err "ddpctl: requeueing job 4242 (restart 1 of 2): after SIGTERM from Slurm to the training step, which checkpointed (not ddpctl's time-limit signal: a preemption, or a signal from outside)"

# A launcher's status on SIGTERM (torchrun: 1), while Slurm shows the job preempted.
# shellcheck disable=SC2317  # called by the stub (lib.sh)
answer_srun() {
  [[ " $* " == *" --kill-on-bad-exit=1 "* ]] || return 0
  echo "launcher ended 1 on SIGTERM" >>"$STUB_LOG"
  exit 1
}
preempt_time=2026-11-29T12:00:00
answer_scontrol() {
  if [ "${1:-} ${2:-} ${3:-}" = "show job -o" ]; then
    echo "JobId=4242 JobName=on-scavenger JobState=RUNNING Reason=None PreemptEligibleTime=2026-11-29T11:59:00 PreemptTime=$preempt_time SuspendTime=None"
  elif [ "${1:-} ${2:-}" = "show hostnames" ] && [[ ${3:-} =~ ^([a-z]+)\[([0-9]+)-([0-9]+)\]$ ]]; then
    for i in $(seq "${BASH_REMATCH[2]}" "${BASH_REMATCH[3]}"); do echo "${BASH_REMATCH[1]}$i"; done
  fi
}
export -f answer_srun answer_scontrol
export preempt_time
render on-scavenger.yaml
: >"$STUB_LOG"
run_job "$script"
expect_rc 0
expect_call '^launcher ended 1 on SIGTERM$'
expect_calls 1 '^scontrol requeue 4242$'
expect_job_err "ddpctl: requeueing job 4242 (restart 1 of 2): after preemption: Slurm preempted the job (its PreemptTime) and the training step ended with another status than 75 (a launcher such as torchrun ends so on SIGTERM); the next attempt resumes from the last checkpoint written (partition scavenger is preemptible)"
# Not preempted (no PreemptTime): the step failed, and the job is not requeued.
preempt_time=None
: >"$STUB_LOG"
run_job "$script"
expect_rc 1
expect_calls 0 '^scontrol requeue 4242$'
expect_job_err "ddpctl: error: the training step exited with status 1"
echo ok
