#!/usr/bin/env bash
# The recipe (docs/running.md "Your own program: checkpoint on SIGTERM, exit
# 75") launched by torchrun on 2 nodes, preempted for real by a job of
# `urgent` on `scavenger`'s nodes (scripts/local-slurm). Slurm's SIGTERM
# reaches torchrun's agents and their workers; each worker stops at its
# next step, rank 0 saves the step it reached. torchrun itself ends with its
# own status on SIGTERM, not 75, so the script asks Slurm: the job shows a
# PreemptTime, and it is requeued "after preemption" all the same.
# Skips where the nodes' Python has no torch. torch 2.14 here; the recipe
# without torchrun is test_preempted_recipe_program (24.11).
# slurm versions: 26.05
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
# shellcheck source=tests/slurm/preempt_lib.sh
source "$DDPCTL_SOURCE/tests/slurm/preempt_lib.sh"
# shellcheck source=tests/slurm/culprit_lib.sh
source "$DDPCTL_SOURCE/tests/slurm/culprit_lib.sh"
need_node_torch
need_node_torchrun
recipe_program
write_spec job.yaml <<YAML
partition: scavenger
nodes: 2
gpus_per_node: 0
procs_per_node: 1
requeue: {signal: USR1, grace: 20, max_restarts: 2}
command: >-
  /usr/bin/python3 -m torch.distributed.run --nnodes="\$NNODES" --node_rank="\$NODE_RANK"
  --nproc_per_node="\$NPROC_PER_NODE" --master_addr="\$MASTER_ADDR" --master_port="\$MASTER_PORT"
  --redirects 2 --tee 2 --monitor_interval 1 $T/program.py
# Debian builds torch without libuv (culprit_lib.sh).
env: {USE_LIBUV: "0", PYTHONPATH: "$LIBUV_OFF", TOTAL_STEPS: "100000"}
YAML
run submit job.yaml --wait
expect_code 0
id=$(submitted_job_id)
await_match "rank 0: starting at step 0$"
await_match "rank 1: starting at step 0$"
preempt
await_match "rank 0: checkpointed at step [0-9]+; stopping for the requeue$"
saved=$(echo "$found" | sed -E 's/.* at step ([0-9]+);.*/\1/')
await_match "requeueing job $id \(restart 1 of 2\): after preemption"
echo "requeue: $found"
expect_saved_state "$saved"
deadline=$((SECONDS + 60)) since=$SECONDS
while :; do
  run status "$JOB_NAME"
  grep -qF "attempt 2 of 3 (requeued after preemption: " "$T/out" && break
  [ "$SECONDS" -lt "$deadline" ] || fail "status does not say the job was requeued after preemption: $(cat "$T/out" "$T/err")"
  pause_since "$since"
done
echo "status: $(cat "$T/out")"
on_login scancel "$urgent" "$id"
echo "torchrun's ranks checkpointed at step $saved; requeued after preemption"
