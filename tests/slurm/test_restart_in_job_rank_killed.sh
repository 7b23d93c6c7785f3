#!/usr/bin/env bash
# restart: {in_job: 2, spares: 1}: a 2-node job gets 3 nodes. Rank 1 is
# killed with SIGKILL mid-training; the batch shell starts the step again
# inside the allocation, on rank 0's node and the spare (the killed rank's
# node left out), with a new rendezvous; the program resumes from its
# checkpoint and the job COMPLETES without leaving the queue (one attempt in
# sacct, no requeue). Status says which restart it was, why, and what was
# left out and taken. The program keeps its checkpoint in the folder ddpctl
# hands it (DDPCTL_CHECKPOINT_DIR): the run's own, made at submit, the same
# for every step.
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
restart: {in_job: 2, spares: 1}
command: [$T/program.sh]
YAML
submit_until_mid_training
kill -KILL "$rank1_pid"
wait_for_sacct "$id" COMPLETED 120
echo "batch log: $(cat "logs/${JOB_NAME}_$id.err")"
grep -qF "ddpctl: restart 1 of 2 in the job: rank 1 on $node was killed (signal 9); $node left out, spare" "logs/${JOB_NAME}_$id.err" ||
  fail "the batch shell did not restart the step in the job$(job_logs_of "$id")"
# The restarted step: on rank 0's node and the spare, a new port, from the checkpoint.
if [ ! -s pid.1.0 ] || [ ! -s pid.1.1 ]; then fail "the restarted step did not run both ranks: $(ls)$(job_logs_of "$id")"; fi
read -r _ new0 _ <pid.1.0
read -r _ new1 _ <pid.1.1
[ "$new0" = "$node0" ] || fail "rank 0 moved from $node0 to $new0"
if [ "$new1" = "$node" ] || [ "$new1" = "$node0" ]; then fail "rank 1 ran again on $new1 (the killed rank's node was $node)"; fi
grep -h "^restart 1 rank 1" "logs/${JOB_NAME}_$id.restart0.1.out" >"$T/resumed" || fail "rank 1's log has no restart 1: $(cat "logs/${JOB_NAME}_$id.restart0.1.out")"
grep -qE "from step ([3-9]|[1-9][0-9]+)$" "$T/resumed" || fail "the restarted step did not resume from the checkpoint: $(cat "$T/resumed")"
port0=$(sed -n 's/^restart 0 rank 0 .*master [^:]*:\([0-9]*\) .*/\1/p' "logs/${JOB_NAME}_$id.restart0.0.out")
port1=$(sed -n 's/^restart 1 rank 0 .*master [^:]*:\([0-9]*\) .*/\1/p' "logs/${JOB_NAME}_$id.restart0.0.out")
if [ -z "$port0" ] || [ "$port0" = "$port1" ]; then fail "the restart did not make a new rendezvous (ports '$port0' and '$port1')"; fi
grep -q "rank 1 done" "logs/${JOB_NAME}_$id.restart0.1.out" || fail "rank 1 did not finish after the restart"
# The checkpoint folder: <output_dir>/<run id>/checkpoint, for both steps.
want="$(pwd -P)/logs/$(basename "$(only_run_dir)")/checkpoint"
[ "$(cat ckpt_dir.0)" = "$want" ] || fail "step 0's DDPCTL_CHECKPOINT_DIR is '$(cat ckpt_dir.0)', not the run's $want"
[ "$(cat ckpt_dir.1)" = "$want" ] || fail "the restarted step's DDPCTL_CHECKPOINT_DIR is '$(cat ckpt_dir.1)', not $want"
# One attempt: the job never left the queue.
expect_one_attempt "$id"
run status "$JOB_NAME"
echo "status: $(cat "$T/out")"
expect_code 0
expect_out "COMPLETED"
expect_out "restart 1 of 2 in the job: rank 1 on $node was killed (signal 9); $node left out, spare $new1 taken"
