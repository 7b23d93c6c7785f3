#!/usr/bin/env bash
# DDP in an Apptainer image (docs/containers.md): 2 nodes x 2 ranks, one task
# per rank, each running the image's Python and torch (Debian forky's). The ranks rendezvous and train, the job completes; ddpctl's
# variables and the spec's env: reach every rank though the options include
# --cleanenv; status names the image, and the environment record holds the
# image's Python and torch, asked inside it. Runs on the 26.05 cluster, whose
# nodes have Apptainer (scripts/container-images).
# Only where the nodes have its runtime (lib.sh's container check skips it elsewhere):
# slurm versions: 26.05
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
sif=$(container_test_image apptainer)
cp "$DDPCTL_SOURCE/tests/trainer/torchrun_program.py" .
write_spec job.yaml <<YAML
partition: cpu
nodes: 2
gpus_per_node: 0
procs_per_node: 2
launch: per-gpu
cpus_per_task: 1
mem: 500M
env: {TEST_MARK: from-the-spec}
command: [python3, torchrun_program.py, --epochs, "2", --steps, "5",
          --show-env, "RANK,WORLD_SIZE,MASTER_ADDR,TEST_MARK,APPTAINER_NAME,USE_LIBUV"]
container:
  runtime: apptainer
  image: $sif
  # The local cluster's jobs run as root in a sandbox that lacks a
  # capability Apptainer asks root for: --no-privs. --cleanenv drops the
  # host's variables; ddpctl's must reach the ranks all the same.
  options: [--no-privs, --cleanenv]
  # Debian's torch is built without libuv.
  env: {USE_LIBUV: "0"}
YAML
run submit job.yaml --wait
expect_code 0
id=$(submitted_job_id)
wait_for_sacct "$id" COMPLETED 180
for t in 0 1 2 3; do
  log="logs/${JOB_NAME}_$id.restart0.$t.out"
  grep -qE "^rank $t of 4 sees RANK=$t WORLD_SIZE=4 MASTER_ADDR=[0-9.]+ TEST_MARK=from-the-spec APPTAINER_NAME=torch.sif USE_LIBUV=0$" "$log" ||
    fail "task $t did not see ddpctl's variables inside the image: $(cat "$log")"
done
grep -q "^Epoch \[2/2\]" "logs/${JOB_NAME}_$id.restart0.0.out" || fail "rank 0 did not train: $(cat "logs/${JOB_NAME}_$id.restart0.0.out")"
grep -q "^done$" "logs/${JOB_NAME}_$id.restart0.0.out" || fail "rank 0 did not finish: $(cat "logs/${JOB_NAME}_$id.restart0.0.out")"
# The image's Python is not the node's: the record asked inside the image.
env_json="logs/${JOB_NAME}_$id.restart0.environment.json"
[ -s "$env_json" ] || fail "no environment record: $(ls logs)"
# (The 26.05 nodes have forky's python3-torch too, the same build as the
# image's (scripts/local-slurm's node packages): the version shows the record
# holds the image's torch, not that it was asked inside; the ranks'
# APPTAINER_NAME above shows where they ran.)
image_torch=$(on_login srun -p cpu -N1 -n1 apptainer exec --no-privs "$sif" python3 -c 'import torch; print(torch.__version__)' 2>/dev/null || true)
[ -n "$image_torch" ] || fail "cannot ask the image for its torch"
run status "$JOB_NAME"
expect_code 0
expect_out COMPLETED
expect_out "in apptainer $sif; python 3."
expect_out ", torch $image_torch"
run status "$JOB_NAME" --json
expect_out '"runtime": "apptainer"'
expect_out "\"image\": \"$sif\""
