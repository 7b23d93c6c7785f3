#!/usr/bin/env bash
# restart: {in_job: 2, spares: 1}: rank 1's node crashes mid-training (its
# slurmd and the job's processes die at once). With --no-kill the job keeps
# its allocation; once Slurm marks the node down the step ends, and the batch
# shell (on rank 0's node) starts it again on rank 0's node and the spare,
# from the checkpoint; the job COMPLETES without leaving the queue and
# status explains the restart. The job asks most of each node's memory
# (1800 of 2048 MiB, as `mem: 200G` on 256G nodes): the lingering step
# holds it on rank 0's node, and the restart's steps reserve none
# (--mem=0). The trainer's twin runs one without mem:.
# Not on 22.05, where the bundled trainer's twin runs the same Slurm steps
# (tests/trainer/slurm_restart_in_job_node_crash.sh; the trainer runs on
# 22.05's nodes only):
# slurm versions: 24.11 26.05
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
# shellcheck source=tests/slurm/restart_lib.sh
source "$DDPCTL_SOURCE/tests/slurm/restart_lib.sh"
write_step_program
write_spec job.yaml <<YAML
partition: cpu
nodes: 2
gpus_per_node: 0
procs_per_node: 1
mem: 1800M
restart: {in_job: 2, spares: 1}
command: [$T/program.sh]
YAML
submit_until_mid_training
batch_host=$(on_login scontrol show job -o "$id" | sed -n 's/.* BatchHost=\([^ ]*\).*/\1/p')
[ "$batch_host" = "$node0" ] ||
  fail "the batch shell runs on '$batch_host', not on rank 0's node $node0: crashing $node would not test a restart"
# The node comes back when the test ends, whatever happens.
at_exit "\"$LOCAL_SLURM\" node start $node"
"$LOCAL_SLURM" node crash "$node"
# Slurm notices after SlurmdTimeout (30 s on the local cluster).
wait_for_state "$JOB_NAME" COMPLETED 180
echo "batch log: $(cat "logs/${JOB_NAME}_$id.err")"
grep -qE "ddpctl: restart 1 of 2 in the job: node $node( \(Slurm: [^)]*\))? was lost; $node left out, spare [a-z0-9]+ taken" \
  "logs/${JOB_NAME}_$id.err" || fail "the batch shell did not restart the step for the lost node$(job_logs_of "$id")"
if [ ! -s pid.1.0 ] || [ ! -s pid.1.1 ]; then fail "the restarted step did not run both ranks: $(ls)$(job_logs_of "$id")"; fi
read -r _ new1 _ <pid.1.1
if [ "$new1" = "$node" ] || [ "$new1" = "$node0" ]; then fail "rank 1 ran again on $new1 (the crashed node was $node)"; fi
grep -qE "^restart 1 rank 1 .* from step ([3-9]|[1-9][0-9]+)$" "logs/${JOB_NAME}_$id.restart0.1.out" ||
  fail "the restarted step did not resume from the checkpoint: $(cat "logs/${JOB_NAME}_$id.restart0.1.out")"
# Never requeued: sacct has the allocation before it lost the node
# (RESIZING) and after it (COMPLETED), the same attempt.
on_login sacct -n -X -P --duplicates -j "$id" -o State >"$T/states"
grep -q REQUEUE "$T/states" && fail "job $id was requeued: $(cat "$T/states")"
[ "$(tail -n 1 "$T/states")" = COMPLETED ] || fail "sacct's last record of job $id is not COMPLETED: $(cat "$T/states")"
run status "$JOB_NAME"
echo "status: $(cat "$T/out")"
expect_code 0
expect_out "COMPLETED"
grep -q "attempt 2" "$T/out" && fail "status takes the node's removal for a second attempt: $(cat "$T/out")"
expect_out_re "restart 1 of 2 in the job: node $node( \(Slurm: [^)]*\))? was lost; $node left out, spare $new1 taken"
