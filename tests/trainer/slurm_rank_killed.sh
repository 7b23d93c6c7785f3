#!/usr/bin/env bash
# Rank 3 of a 2 x 2 trainer job (a worker on the second node) is killed with
# SIGKILL: the job ends within seconds, and status, submit --follow and logs
# name rank 3, its node and the signal, not rank 0's "Connection closed by
# peer". Workers show in ps as ddp-train.
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
: "${DDP_TRAIN:?}"
write_spec job.yaml <<YAML
partition: cpu
nodes: 2
gpus_per_node: 0
procs_per_node: 2
cpus_per_task: 2
mem: 1G
trainer:
  program: $DDP_TRAIN
  model: smallcnn
  data: synthetic
  epochs: 50
  batch_size: 16
  workers: 0
  extra_args: [--synthetic-size, "100000", --no-val]
YAML
# --follow in the background: its last words are checked at the end.
"$LOCAL_SLURM" exec -- "$DDPCTL" submit job.yaml --follow >follow.out 2>follow.err &
follow=$!
at_exit "kill $follow"
progress=""
deadline=$((SECONDS + 120))
until [ -n "$progress" ] && grep -q '"phase": "training", "epoch": 1, "epochs": 50, "step": [1-9]' "$progress" 2>/dev/null; do
  [ "$SECONDS" -lt "$deadline" ] || fail "training did not start within 120 s: $(cat follow.out follow.err logs/* 2>&1)"
  progress=$(ls logs/*.progress.json 2>/dev/null || true)
  sleep 0.2
done
id=$(sed -n 's/^submitted job \([0-9]*\) .*/\1/p' follow.out)
[ -n "$id" ] || fail "submit printed no job id: $(cat follow.out follow.err)"
# Rank 3: the ddp-train worker of this job whose environment says RANK=3.
victim=$(rank_pid "$id" 3)
[ -n "$victim" ] || fail "no ddp-train process with RANK=3 of job $id ($(pgrep -c -x ddp-train || true) processes named ddp-train)"
kill -KILL "$victim"
killed_at=$SECONDS
wait_for_job "$id" FAILED 60
echo "job ended $((SECONDS - killed_at)) s after the kill"
wait "$follow" && fail "submit --follow exited 0 for a failed job"
grep -qF "ddpctl: error: job $id ended FAILED: rank 3 (task 1) on g2 was killed by signal 9 (SIGKILL): ddp-train: error: rank 3 (local rank 1, pid $victim) was killed by signal 9 (Killed); stopping the other workers" follow.err ||
  fail "submit --follow's last words: $(cat follow.err)"
run status "$JOB_NAME"
grep -qE " FAILED .* rank 3 \(task 1\) on g2 was killed by signal 9 \(SIGKILL\): ddp-train: error: rank 3 \(local rank 1, pid $victim\) was killed by signal 9 \(Killed\); stopping the other workers$" "$T/out" ||
  fail "status does not name rank 3: $(cat "$T/out")"
run logs "$JOB_NAME"
expect_out "showing rank 3's output (--rank picks another) <=="
expect_out "${JOB_NAME}_$id.restart0.1.out (training output, attempt 1, task 1) <=="
