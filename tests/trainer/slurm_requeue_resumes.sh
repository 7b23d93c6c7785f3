#!/usr/bin/env bash
# The time-limit path on real Slurm: the requeue signal reaches the batch
# shell, which passes it to the step; every rank stops at one step, rank 0
# checkpoints, the launchers exit 75, the script requeues the job, and the
# next attempt resumes from the checkpoint and finishes.
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
requeue: {signal: USR1, grace: 60, max_restarts: 2}
trainer:
  program: $DDP_TRAIN
  model: smallcnn
  data: synthetic
  epochs: 2
  batch_size: 16
  workers: 0
  checkpoint_dir: $T/ck
  resume: true
  extra_args: [--synthetic-size, "6400", --no-val]
YAML
run submit job.yaml --wait
expect_code 0
id=$(job_ids)
progress=logs/${JOB_NAME}_${id}.progress.json
for _ in $(seq 300); do grep -q '"phase": "training", "epoch": 1, "epochs": 2, "step": [1-9]' "$progress" 2>/dev/null && break; sleep 0.1; done
grep -q '"phase": "training"' "$progress" || fail "training never started: $(cat "$progress" 2>/dev/null)"
node=$(on_login squeue -h -j "$id" -o %N)
# What Slurm does grace seconds before the time limit (--signal=B:USR1@grace).
on_login scancel --batch --signal=USR1 "$id"
# Requeued jobs wait two minutes in Slurm 22.05 (BeginTime); start it sooner,
# as an admin would, but only as real Slurm could: once its nodes are idle and
# at least 2 s after the requeue. slurmd revokes the old credential with the
# requeue's time in whole seconds, and a launch whose credential carries the
# same second is killed ("Job credential revoked"). The first sight of PENDING
# comes after the requeue, so 2 s after it is safely past that second.
pending_since=""
deadline=$((SECONDS + 60))
while :; do
  if [ "$(on_login squeue -h -t all -j "$id" -o %T)" = PENDING ]; then
    [ -n "$pending_since" ] || pending_since=$(date +%s)
    node_states=$(on_login sinfo -h -N -n "$node" -o %t | sort -u)
    if [ "$node_states" = idle ] && [ "$(date +%s)" -ge $((pending_since + 2)) ]; then
      on_login scontrol update JobId="$id" StartTime=now
      break
    fi
  fi
  [ "$SECONDS" -lt "$deadline" ] ||
    fail "job $id was not pending on idle nodes within 60 s of the stop signal (state $(on_login squeue -h -t all -j "$id" -o %T), nodes $(on_login sinfo -h -N -n "$node" -o '%N=%t'))$(slurmctld_log_of "$id")"
  sleep 0.2
done
wait_for_state "$JOB_NAME" COMPLETED 180
first=logs/${JOB_NAME}_${id}.restart0.0.out
second=logs/${JOB_NAME}_${id}.restart1.0.out
grep -q "ddp-train: stop requested: checkpoint saved at epoch 1, step [0-9]*; exiting for requeue" "$first" ||
  fail "first attempt did not checkpoint: $(cat "$first")"
step=$(sed -n 's/.*checkpoint saved at epoch 1, step \([0-9]*\);.*/\1/p' "$first")
# 2 ranks x batch 16: step S is sample 32 x S of the epoch's 6400.
grep -qF "ddp-train: resumed from $T/ck/checkpoint.pt at epoch 1, sample $((step * 32)) of 6400 (written by 2 ranks, now 2)" "$second" ||
  fail "second attempt did not resume at step $step: $(cat "$second")"
grep -q "^Epoch \[2/2\]" "$second" || fail "second attempt did not finish: $(cat "$second")"
grep -q "requeueing job $id (restart 1 of 2)" logs/"${JOB_NAME}_${id}".err || fail "no requeue notice: $(cat logs/"${JOB_NAME}_${id}".err)"
