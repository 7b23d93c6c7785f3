#!/usr/bin/env bash
# DDP in a Charliecloud image (ch-run, unprivileged): the same 2 nodes x 2
# ranks job as Apptainer's, on the 22.05 cluster whose nodes are this host
# (Debian bookworm's charliecloud-runtime 0.31); the image is a folder on the
# shared file system. The ranks see ddpctl's variables and the spec's
# container env:, train, and the job completes.
# Only where the nodes have its runtime (lib.sh's container check skips it elsewhere):
# slurm versions: 22.05
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
image=$(container_test_image charliecloud)
cp "$DDPCTL_SOURCE/tests/trainer/torchrun_program.py" .
write_spec job.yaml <<YAML
partition: cpu
nodes: 2
gpus_per_node: 0
procs_per_node: 2
launch: per-gpu
cpus_per_task: 1
mem: 500M
command: [python3, torchrun_program.py, --epochs, "2", --steps, "5", --show-env, "RANK,MASTER_ADDR,USE_LIBUV"]
container:
  runtime: charliecloud
  image: $image
  env: {USE_LIBUV: "0"}
YAML
run submit job.yaml --wait
expect_code 0
id=$(submitted_job_id)
wait_for_sacct "$id" COMPLETED 180
for t in 0 1 2 3; do
  log="logs/${JOB_NAME}_$id.restart0.$t.out"
  grep -qE "^rank $t of 4 sees RANK=$t MASTER_ADDR=[0-9.]+ USE_LIBUV=0$" "$log" || fail "task $t: $(cat "$log")"
done
grep -q "^done$" "logs/${JOB_NAME}_$id.restart0.0.out" || fail "rank 0 did not finish: $(cat "logs/${JOB_NAME}_$id.restart0.0.out")"
run status "$JOB_NAME"
expect_out COMPLETED
expect_out "in charliecloud $image; python 3."
