#!/usr/bin/env bash
# restart: {in_job: 1, spares: 1} with the program in an Apptainer image
# (--cleanenv): rank 1 is killed with SIGKILL mid-training; the batch shell,
# outside the image, restarts the step inside the allocation on rank 0's node
# and the spare, each rank in the image again, with DDPCTL_RESTART, the new
# MASTER_PORT and DDPCTL_CHECKPOINT_DIR reaching it; it resumes from the
# checkpoint there and the job COMPLETES without leaving the queue. Runs on
# the 26.05 cluster, whose nodes have Apptainer (scripts/container-images).
# slurm versions: 26.05
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
# shellcheck source=tests/slurm/restart_lib.sh
source "$DDPCTL_SOURCE/tests/slurm/restart_lib.sh"
sif=$(container_test_image apptainer)
write_step_program
write_spec job.yaml <<YAML
partition: cpu
nodes: 2
gpus_per_node: 0
procs_per_node: 1
mem: 300M
restart: {in_job: 1, spares: 1}
command: [bash, -c, 'echo "rank \$NODE_RANK in \${APPTAINER_NAME:-no container}"; exec "\$1"', program, $T/program.sh]
container:
  runtime: apptainer
  image: $sif
  options: [--no-privs, --cleanenv]
YAML
submit_until_mid_training
kill -KILL "$rank1_pid"
wait_for_sacct "$id" COMPLETED 120
grep -qF "ddpctl: restart 1 of 1 in the job: rank 1 on $node was killed (signal 9); $node left out, spare" "logs/${JOB_NAME}_$id.err" ||
  fail "the batch shell did not restart the step in the job$(job_logs_of "$id")"
if [ ! -s pid.1.0 ] || [ ! -s pid.1.1 ]; then fail "the restarted step did not run both ranks: $(ls)$(job_logs_of "$id")"; fi
read -r _ new1 _ <pid.1.1
if [ "$new1" = "$node" ] || [ "$new1" = "$node0" ]; then fail "rank 1 ran again on $new1 (the killed rank's node was $node)"; fi
for t in 0 1; do
  log="logs/${JOB_NAME}_$id.restart0.$t.out"
  # Both steps' ranks ran in the image.
  [ "$(grep -c "^rank $t in torch.sif$" "$log")" = 2 ] || fail "task $t did not run in the image in both steps: $(cat "$log")"
done
grep -qE "^restart 1 rank 1 of job $id on $new1 master [0-9.]+:[0-9]+ from step ([3-9]|[1-9][0-9]+)$" "logs/${JOB_NAME}_$id.restart0.1.out" ||
  fail "the restarted step did not resume from the checkpoint in the image: $(cat "logs/${JOB_NAME}_$id.restart0.1.out")"
port0=$(sed -n 's/^restart 0 rank 0 .*master [^:]*:\([0-9]*\) .*/\1/p' "logs/${JOB_NAME}_$id.restart0.0.out")
port1=$(sed -n 's/^restart 1 rank 0 .*master [^:]*:\([0-9]*\) .*/\1/p' "logs/${JOB_NAME}_$id.restart0.0.out")
if [ -z "$port0" ] || [ "$port0" = "$port1" ]; then fail "the restart's new MASTER_PORT did not reach the image (ports '$port0' and '$port1')"; fi
[ "$(cat ckpt_dir.1)" = "$(cat ckpt_dir.0)" ] || fail "the steps had different checkpoint folders: $(cat ckpt_dir.0) and $(cat ckpt_dir.1)"
expect_one_attempt "$id"
run status "$JOB_NAME"
echo "status: $(cat "$T/out")"
expect_code 0
expect_out "COMPLETED"
expect_out "restart 1 of 1 in the job: rank 1 on $node was killed (signal 9); $node left out, spare $new1 taken"
