#!/usr/bin/env bash
# The issue's first case with the bundled trainer: a 2-node CPU job with
# restart: {in_job: 1, spares: 1} whose rank 1's node crashes mid-training
# (`local-slurm node crash`: its slurmd and processes die at once) after the
# first epoch's checkpoint. Rank 0 fails at once (its peer is gone) and srun
# starts ending the step, whose part on the lost node never answers: Slurm
# keeps that step completing. Once Slurm marks the node down, the batch
# shell starts the step again on rank 0's node and the spare, overlapping
# the lingering step; ddp-train resumes the checkpoint and the job COMPLETES
# without leaving the queue. status says which restart it was and where
# the watchdog first saw it train again (epoch 2, or later where a short
# epoch ended within the first monitor interval) and which checkpoint ddp-train
# resumed; report counts the time lost from the last progress before the
# crash (what Slurm took to notice the node is lost too).
# No mem:, as `ddpctl init` writes a spec: the job has DefMemPerCPU, and
# the restart's steps, beside the lingering one that holds that memory,
# once failed ("Memory required by task is not available"); they reserve
# none now (--mem=0). tests/slurm/test_restart_in_job_node_crash.sh asks
# most of a node.
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
: "${DDP_TRAIN:?}"
write_spec job.yaml <<YAML
partition: cpu
nodes: 2
gpus_per_node: 0
procs_per_node: 1
cpus_per_task: 1
restart: {in_job: 1, spares: 1}
# The watchdog looks every second: the restarted step (its epochs 2 to 5,
# seconds each) is seen training before it ends, however fast this machine.
monitor: {interval: 1s}
trainer:
  program: $DDP_TRAIN
  model: smallcnn
  data: synthetic
  epochs: 5
  batch_size: 16
  workers: 0
  checkpoint_dir: $T/ck
  resume: true
  extra_args: [--synthetic-size, "1600", --no-val]
YAML
run submit job.yaml
expect_code 0
id=$(submitted_job_id)
progress=logs/${JOB_NAME}_${id}.progress.json
deadline=$((SECONDS + 180))
# Training: the job's nodes are asked now, so that only the crash comes
# between seeing epoch 2 and the node's end.
until grep -q '"phase": "training"' "$progress" 2>/dev/null; do
  [ "$SECONDS" -lt "$deadline" ] || fail "training did not start within 180 s: $(cat "$progress" 2>&1)$(job_logs_of "$id")"
  sleep 0.2
done
nodes=$(on_login scontrol show hostnames "$(on_login squeue -h -j "$id" -o %N)" | tr '\n' ' ')
read -r node0 node spare <<<"$nodes"
batch_host=$(on_login scontrol show job -o "$id" | sed -n 's/.* BatchHost=\([^ ]*\).*/\1/p')
[ "$batch_host" = "$node0" ] || fail "the batch shell runs on '$batch_host', not on rank 0's node $node0"
until grep -q '"phase": "training", "epoch": 2, "epochs": 5, "step": [1-9]' "$progress" 2>/dev/null; do
  [ "$SECONDS" -lt "$deadline" ] || fail "epoch 2 did not start within 180 s: $(cat "$progress" 2>&1)$(job_logs_of "$id")"
  sleep 0.2
done
at_exit "\"$LOCAL_SLURM\" node start $node"
"$LOCAL_SLURM" node crash "$node"
# Slurm notices after SlurmdTimeout (30 s on the local cluster).
wait_for_state "$JOB_NAME" COMPLETED 240
echo "batch log: $(cat "logs/${JOB_NAME}_$id.err")"
grep -qE "^ddpctl: restart 1 of 1 in the job: node $node( \(Slurm: [^)]*\))? was lost; $node left out, spare $spare taken$" \
  "logs/${JOB_NAME}_$id.err" || fail "the batch shell did not restart the step for the lost node$(job_logs_of "$id")"
# The checkpoint of the last whole epoch when the node went: epoch 1's (the
# resume is at epoch 2), or epoch 2's where that short epoch ended first.
grep -qE "^ddp-train: resumed from .* at epoch [23], sample [0-9]+ of 1600 \(written by 2 ranks, now 2\)" \
  "logs/${JOB_NAME}_$id.restart0.0.out" || fail "rank 0 did not resume the checkpoint: $(cat "logs/${JOB_NAME}_$id.restart0.0.out")"
on_login sacct -n -X -P --duplicates -j "$id" -o State >"$T/states"
grep -q REQUEUE "$T/states" && fail "job $id was requeued: $(cat "$T/states")"
run status "$JOB_NAME"
echo "status: $(cat "$T/out")"
expect_code 0
expect_out "COMPLETED"
expect_out_re "restart 1 of 1 in the job: node $node( \(Slurm: [^)]*\))? was lost; $node left out, spare $spare taken; training again at epoch [2-5] step [0-9]+, resumed from $T/ck/[^ ]+ at epoch [23], sample [0-9]+ of 1600 \(written by 2 ranks, now 2\)"
run report "$JOB_NAME"
echo "report: $(cat "$T/out")"
expect_code 0
expect_out_re "restart 1 of 1: node $node.* was lost; .*; training again after [0-9.]+ s \(epoch [2-5] step [0-9]+; [0-9.]+ s of it from the last progress to the step's end\)"
