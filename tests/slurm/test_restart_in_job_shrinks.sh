#!/usr/bin/env bash
# restart: {in_job: 1, min_nodes: 1} with no spare, a program of one's own:
# a 2-node job's rank 1 is killed with SIGKILL mid-training; with no spare
# left, the step starts again inside the job on rank 0's node alone (shrunk
# to 1 of 2 nodes) with WORLD_SIZE and NNODES 1, resumes from its checkpoint
# in DDPCTL_CHECKPOINT_DIR, and the job COMPLETES without leaving the queue.
# The batch log and status say it shrank; report marks the row. (The
# bundled trainer's shrink, with its global batch kept, is
# tests/trainer/slurm_restart_in_job_shrinks.sh.)
# Not on 22.05, where the bundled trainer's twin runs the same Slurm steps
# (tests/trainer/slurm_restart_in_job_shrinks.sh; the trainer runs on
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
restart: {in_job: 1, min_nodes: 1}
command: [bash, -c, 'echo "restart \$DDPCTL_RESTART rank \$NODE_RANK: WORLD_SIZE=\$WORLD_SIZE NNODES=\$NNODES"; exec "\$1"', program, $T/program.sh]
YAML
submit_until_mid_training
kill -KILL "$rank1_pid"
wait_for_sacct "$id" COMPLETED 120
echo "batch log: $(cat "logs/${JOB_NAME}_$id.err")"
grep -qF "ddpctl: restart 1 of 1 in the job: rank 1 on $node was killed (signal 9); $node left out, no spare left: shrunk to 1 of 2 nodes (restart.min_nodes 1)" \
  "logs/${JOB_NAME}_$id.err" || fail "the batch shell did not shrink the step$(job_logs_of "$id")"
grep -qx "restart 0 rank 0: WORLD_SIZE=2 NNODES=2" "logs/${JOB_NAME}_$id.restart0.0.out" ||
  fail "step 0 did not run at world size 2: $(cat "logs/${JOB_NAME}_$id.restart0.0.out")"
grep -qx "restart 1 rank 0: WORLD_SIZE=1 NNODES=1" "logs/${JOB_NAME}_$id.restart0.0.out" ||
  fail "the shrunk step did not run at world size 1: $(cat "logs/${JOB_NAME}_$id.restart0.0.out")"
[ -s pid.1.0 ] || fail "the shrunk step did not run rank 0: $(ls)"
[ ! -e pid.1.1 ] || fail "the shrunk step ran a rank 1: $(cat pid.1.1)"
read -r _ new0 _ <pid.1.0
[ "$new0" = "$node0" ] || fail "the shrunk step ran on $new0, not on rank 0's node $node0"
grep -qE "^restart 1 rank 0 of job $id on $node0 .* from step ([3-9]|[1-9][0-9]+)$" "logs/${JOB_NAME}_$id.restart0.0.out" ||
  fail "the shrunk step did not resume from the checkpoint: $(cat "logs/${JOB_NAME}_$id.restart0.0.out")"
expect_one_attempt "$id"
run status "$JOB_NAME"
echo "status: $(cat "$T/out")"
expect_code 0
expect_out "COMPLETED"
expect_out "restart 1 of 1 in the job: rank 1 on $node was killed (signal 9); $node left out, no spare left: shrunk to 1 of 2 nodes (restart.min_nodes 1)"
run report "$JOB_NAME"
echo "report: $(cat "$T/out")"
expect_code 0
expect_out "2x1* "
expect_out "shrunk in the job to 1 of 2 nodes from restart 1 (restart.min_nodes)"
