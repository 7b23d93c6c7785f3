#!/usr/bin/env bash
# ddpctl submits the bundled trainer as 2 nodes x 2 workers on the local
# cluster: it learns the generated dataset, every rank joins, replicas end
# identical, and the progress file for `ddpctl status` ends as done.
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
: "${DDP_TRAIN:?}" "${MAKE_TINY_IMAGENET:?}"
"$MAKE_TINY_IMAGENET" "$T/tin" 8 48 8 32 >/dev/null
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
  data: $T/tin
  epochs: 3
  batch_size: 16
  lr: 0.05
  workers: 1
  checkpoint_dir: $T/ck
  extra_args: [--image-size, "32", --rendezvous-timeout, "60"]
YAML
run submit job.yaml --wait
expect_code 0
id=$(job_ids)
wait_for_state "$JOB_NAME" COMPLETED 180
rank0=$(ls logs/"${JOB_NAME}_${id}".restart0.0.out)
rank1=$(ls logs/"${JOB_NAME}_${id}".restart0.1.out)
grep -q "ddp-train: 4 rank(s), smallcnn on CPU/Gloo, tinyimagenet data" "$rank0" || fail "rank 0 log: $(cat "$rank0")"
grep -q "^Epoch \[3/3\] LR: 0.050000 |" "$rank0" || fail "no last epoch line: $(cat "$rank0")"
grep -q "ddp-train: parameters identical on all 4 ranks" "$rank0" || fail "no replica check: $(cat "$rank0")"
grep -q "ddp-train: node 1 of 2: started 2 worker(s), ranks 2-3 of 4" "$rank1" || fail "node 1 log: $(cat "$rank1")"
if grep -q '^\[rank 1\] Epoch' "$rank0"; then fail "rank 1 printed an epoch line"; fi
metrics=logs/${JOB_NAME}_${id}.metrics.jsonl  # $DDPCTL_METRICS_FILE, set by the script
python3 - "$metrics" <<'PY' || fail "metrics: $(cat "$metrics")"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
assert [r["epoch"] for r in recs] == [1, 2, 3]
assert all(r["world_size"] == 4 and r["local_world_size"] == 2 for r in recs)
assert recs[-1]["train_loss"] < recs[0]["train_loss"]
PY
grep -q '"phase": "done", "epoch": 3, "epochs": 3' logs/"${JOB_NAME}_${id}".progress.json ||
  fail "progress file: $(cat logs/"${JOB_NAME}_${id}".progress.json)"
