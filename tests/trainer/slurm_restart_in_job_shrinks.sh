#!/usr/bin/env bash
# restart: {in_job: 1, min_nodes: 1} with the bundled trainer and no spare:
# 2 nodes x 1 rank train with a global batch of 32 (batch_size 16, one
# micro-step each). After the first epoch's checkpoint, rank 1's worker is
# killed with SIGKILL; with no spare left, the step starts again inside the
# job on rank 0's node alone (shrunk to 1 of 2 nodes), ddp-train resumes the
# checkpoint at world size 1 with two micro-steps per step (the same global
# batch), and the job COMPLETES without leaving the queue. status and the
# batch log explain the shrink; report marks the row.
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
: "${DDP_TRAIN:?}"
write_spec job.yaml <<YAML
partition: cpu
nodes: 2
gpus_per_node: 0
procs_per_node: 1
cpus_per_task: 2
mem: 1G
restart: {in_job: 1, min_nodes: 1}
trainer:
  program: $DDP_TRAIN
  model: smallcnn
  data: synthetic
  epochs: 4
  batch_size: 16
  global_batch: 32
  workers: 0
  checkpoint_dir: $T/ck
  resume: true
  extra_args: [--synthetic-size, "1600", --no-val]
YAML
run submit job.yaml
expect_code 0
id=$(submitted_job_id)
progress=logs/${JOB_NAME}_${id}.progress.json
# Asked before the wait, so that only the search for rank 1 comes between
# seeing epoch 2 and the kill.
cluster=$(on_login scontrol show config | sed -n 's/^ClusterName *= *//p')
# Mid-training after the first epoch's checkpoint: epoch 2 has begun.
deadline=$((SECONDS + 180))
until grep -q '"phase": "training", "epoch": 2, "epochs": 4, "step": [1-9]' "$progress" 2>/dev/null; do
  [ "$SECONDS" -lt "$deadline" ] || fail "epoch 2 did not start within 180 s: $(cat "$progress" 2>&1)$(job_logs_of "$id")"
  sleep 0.2
done
# Rank 1's worker: the ddp-train process of this job (and this cluster:
# the other clusters count their job ids from 1 too) with RANK=1.
victim="" node=""
for pid in $(pgrep -x ddp-train || true); do
  env=$(tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null || true)
  if grep -qx "SLURM_JOB_ID=$id" <<<"$env" && grep -qx "SLURM_CLUSTER_NAME=$cluster" <<<"$env" &&
    grep -qx "RANK=1" <<<"$env"; then
    victim=$pid
    node=$(sed -n 's/^SLURMD_NODENAME=//p' <<<"$env")
  fi
done
[ -n "$victim" ] || fail "no ddp-train worker with RANK=1 of job $id on cluster $cluster"
node0=$(on_login scontrol show job -o "$id" | sed -n 's/.* BatchHost=\([^ ]*\).*/\1/p')
kill -KILL "$victim"
wait_for_sacct "$id" COMPLETED 240
echo "batch log: $(cat "logs/${JOB_NAME}_$id.err")"
grep -qE "ddpctl: restart 1 of 1 in the job: rank 1 on $node (was killed \(signal 9\)|exited with exit code [0-9]+); $node left out, no spare left: shrunk to 1 of 2 nodes \(restart.min_nodes 1\)$" \
  "logs/${JOB_NAME}_$id.err" || fail "the batch shell did not shrink the step$(job_logs_of "$id")"
grep -qE "world size 1 = 1 node\(s\) x 1" "logs/${JOB_NAME}_$id.out" ||
  fail "the restarted step's rendezvous is not for 1 rank: $(cat "logs/${JOB_NAME}_$id.out")"
rank0=logs/${JOB_NAME}_$id.restart0.0.out
# ddp-train's own words: the checkpoint of 2 ranks resumed by 1, the global batch kept.
# (At epoch 2's start, or later in it where the stop signal srun sent rank 0
# let it checkpoint first; at epoch 3 where epoch 2 ended before the kill
# landed, as it can on a loaded machine: an epoch takes seconds.)
grep -qE "^ddp-train: resumed from .* at epoch [23], sample [0-9]+ of 1600 \(written by 2 ranks, now 1\); global batch 32 -> 32$" "$rank0" ||
  fail "rank 0 did not resume the 2-rank checkpoint alone with the same global batch: $(cat "$rank0")"
# The shrunk step ran on rank 0's node, not the killed rank's.
[ "$(grep -c "ddpctl: training step 1 on $node0$" "logs/${JOB_NAME}_$id.err")" = 1 ] ||
  fail "the restarted step did not run on $node0 alone: $(grep 'training step' "logs/${JOB_NAME}_$id.err")"
on_login sacct -n -X -P --duplicates -j "$id" -o State >"$T/states"
grep -q REQUEUE "$T/states" && fail "job $id was requeued: $(cat "$T/states")"
run status "$JOB_NAME"
echo "status: $(cat "$T/out")"
expect_code 0
expect_out "COMPLETED"
expect_out "restart 1 of 1 in the job: rank 1 on $node"
expect_out "shrunk to 1 of 2 nodes (restart.min_nodes 1)"
run report "$JOB_NAME"
echo "report: $(cat "$T/out")"
expect_code 0
expect_out "2x1* "
expect_out "shrunk in the job to 1 of 2 nodes from restart 1 (restart.min_nodes)"
expect_out "in-job restarts ("
