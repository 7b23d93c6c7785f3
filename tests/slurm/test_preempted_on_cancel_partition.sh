#!/usr/bin/env bash
# A partition whose preemption cancels its jobs (PreemptMode=CANCEL: the
# local clusters' `spot`, 30 s grace; scripts/local-slurm), preempted for
# real by a job of `urgent`:
#   1. without `requeue:`, preflight refuses the shape, naming requeue:;
#      submitted anyway (--no-preflight), the job is preempted and ends
#      PREEMPTED, and status says by which job, after how long, that the run
#      ended there, and what `requeue:` would have done;
#   2. with `requeue:`, the job requeues itself within the grace, before
#      Slurm's cancel: it waits to start again, "requeued after preemption".
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
partition: spot
nodes: 2
gpus_per_node: 0
procs_per_node: 1
command: [$T/program.sh]
YAML
run submit job.yaml
expect_code 1
expect_err "partition: shape 2x1: partition spot is preemptible and a preemption cancels its jobs (PreemptMode=CANCEL in profile local): the run would end there, not resume. With \`requeue:\`"
run submit job.yaml --no-preflight --wait
expect_code 0
id=$(submitted_job_id)
await_line "logs/${JOB_NAME}_$id.restart0.0.out" "training"
preempt
wait_for_state "$JOB_NAME" PREEMPTED 120
# The preemptor comes from accounting, once slurmdbd has the records.
deadline=$((SECONDS + 60)) since=$SECONDS
while :; do
  run status "$JOB_NAME"
  grep -qE "; preempted by job $urgent \\(partition urgent\\) after [0-9]+s and cancelled, not requeued: the run ended there\\. With \`requeue:\` in the spec ddpctl requeues the job itself within the partition's grace" "$T/out" && break
  [ "$SECONDS" -lt "$deadline" ] || fail "status does not say the job was preempted by job $urgent and cancelled: $(cat "$T/out" "$T/err")"
  pause_since "$since"
done
echo "status: $(cat "$T/out")"
on_login scancel "$urgent"
wait_for_sacct "$urgent" CANCELLED 60

# 2. With requeue: the script's own requeue comes within the grace.
write_spec requeued.yaml <<YAML
partition: spot
nodes: 2
gpus_per_node: 0
procs_per_node: 1
requeue: {signal: USR1, grace: 20, max_restarts: 2}
command: [$T/program.sh]
YAML
run submit requeued.yaml --wait
expect_code 0
id=$(submitted_job_id)
await_line "logs/${JOB_NAME}_$id.restart0.0.out" "training"
preempt
await_line "logs/${JOB_NAME}_$id.err" "ddpctl: requeueing job $id (restart 1 of 2): after preemption"
deadline=$((SECONDS + 60)) since=$SECONDS
until [ "$(on_login squeue -h -j "$id" -o %T)" = PENDING ]; do
  [ "$SECONDS" -lt "$deadline" ] || fail "job $id with requeue: is not waiting to start again: $(on_login squeue -h -t all -j "$id" -o '%T %r' 2>&1)$(slurmctld_log_of "$id")"
  pause_since "$since"
done
echo "with requeue: job $id requeued itself within spot's grace and waits: $(on_login squeue -h -j "$id" -o '%T %r')"
