#!/usr/bin/env bash
# The recipe (docs/running.md "Your own program: checkpoint on SIGTERM, exit
# 75") inside an Apptainer image that has no Slurm commands, on 2 nodes of
# `scavenger`, preempted for real by a job of `urgent` (scripts/local-slurm).
# Slurm's SIGTERM reaches the ranks inside the container (they are the
# step's processes); each stops at its next step, rank 0 saves the step it
# reached, and the batch shell, outside the image, requeues the job "after
# preemption".
# Only where the nodes have its runtime (lib.sh's container check skips it elsewhere):
# slurm versions: 26.05
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
# shellcheck source=tests/slurm/preempt_lib.sh
source "$DDPCTL_SOURCE/tests/slurm/preempt_lib.sh"
sif=$(container_test_image apptainer)
recipe_program
write_spec job.yaml <<YAML
partition: scavenger
nodes: 2
gpus_per_node: 0
procs_per_node: 1
launch: per-gpu
requeue: {signal: USR1, grace: 20, max_restarts: 2}
env: {TOTAL_STEPS: "100000"}
command: [python3, program.py]
container:
  runtime: apptainer
  image: $sif
  options: [--no-privs]
YAML
run submit job.yaml --wait
expect_code 0
id=$(submitted_job_id)
await_match "^rank 0: starting at step 0$"
await_match "^rank 1: starting at step 0$"
preempt
await_match "^rank 0: checkpointed at step [0-9]+; stopping for the requeue$"
saved=$(echo "$found" | sed -E 's/.* at step ([0-9]+);.*/\1/')
await_match "^rank 1: checkpointed at step [0-9]+; stopping for the requeue$"
await_match "requeueing job $id \(restart 1 of 2\): after preemption"
echo "requeue: $found"
expect_saved_state "$saved"
on_login scancel "$urgent" "$id"
echo "in the container, the ranks checkpointed at step $saved; requeued after preemption"
