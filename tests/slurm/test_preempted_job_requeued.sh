#!/usr/bin/env bash
# A job on preemptible capacity (docs/running.md "When the site takes the
# nodes back"), preempted for real: a job of `urgent` (PriorityTier 10) wants
# the nodes of this job of `scavenger` (tier 1, PreemptMode=REQUEUE, 30 s
# grace; scripts/local-slurm). Slurm's SIGTERM reaches the training step,
# whose program checkpoints and exits 75; the job is requeued, and status
# says it was "after preemption", not "at the time limit", by which job
# (the urgent one, from accounting) and after how long.
# What only Slurm can show: where its SIGTERM goes, that the job comes back
# requeued, and what accounting records of who took its nodes. The words themselves: tests/script/test_requeue_after_preemption.sh.
# slurm versions: 26.05
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
# shellcheck source=tests/slurm/preempt_lib.sh
source "$DDPCTL_SOURCE/tests/slurm/preempt_lib.sh"
cat >program.sh <<'SH'
#!/bin/bash
trap 'echo "got SIGTERM; checkpointed"; exit 75' TERM
echo "training"
while :; do sleep 1; done
SH
chmod +x program.sh
write_spec job.yaml <<YAML
partition: scavenger
nodes: 2
gpus_per_node: 0
procs_per_node: 1
requeue: {signal: USR1, grace: 20, max_restarts: 2}
command: [$T/program.sh]
YAML
run submit job.yaml --wait
expect_code 0
expect_err "shape 2x1 runs on preemptible capacity (partition scavenger, profile local): preempted by a job of urgent with SIGTERM, 30 s grace"
id=$(submitted_job_id)
await_line "logs/${JOB_NAME}_$id.restart0.0.out" "training"
await_line "logs/${JOB_NAME}_$id.restart0.1.out" "training"
preempt
await_line "logs/${JOB_NAME}_$id.err" "ddpctl: requeueing job $id (restart 1 of 2): after preemption: Slurm's SIGTERM stopped the training step, which checkpointed (partition scavenger is preemptible)"
# Every rank got Slurm's SIGTERM (the batch script did not pass it on: it was not signalled).
grep -q "got SIGTERM; checkpointed" "logs/${JOB_NAME}_$id.restart0.0.out" || fail "rank 0 did not get SIGTERM: $(cat logs/*)"
grep -q "got SIGTERM; checkpointed" "logs/${JOB_NAME}_$id.restart0.1.out" || fail "rank 1 did not get SIGTERM: $(cat logs/*)"
! grep -q "SIGUSR1" "logs/${JOB_NAME}_$id.err" || fail "the script took the preemption for its time-limit signal: $(cat "logs/${JOB_NAME}_$id.err")"
# The urgent job runs on the nodes; this one waits, requeued. status names
# the preemptor (from accounting, once slurmdbd has the records) and how
# long the attempt ran.
deadline=$((SECONDS + 60)) since=$SECONDS
while :; do
  run status "$JOB_NAME"
  grep -qE "attempt 2 of 3 \(requeued after preemption: Slurm's SIGTERM stopped the training step.*; preempted by job $urgent \(partition urgent\) after [0-9]+s" "$T/out" && break
  [ "$SECONDS" -lt "$deadline" ] || fail "status did not say the job was requeued after preemption by job $urgent: $(cat "$T/out" "$T/err")$(slurmctld_log_of "$id")"
  pause_since "$since"
done
echo "status: $(cat "$T/out")"
