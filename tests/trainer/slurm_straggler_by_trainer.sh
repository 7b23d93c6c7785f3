#!/usr/bin/env bash
# Slow, not hung, with the bundled trainer: one node of a two-node CPU job is
# throttled (a CPU quota on every process of the node). ddp-train's rank 0
# writes every rank's loading and forward time into the progress file; the
# watchdog names the throttled rank by it, status shows it while it runs and
# report names it after the job ended.
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
: "${DDP_TRAIN:?}"
# 15%: enough to start ddp-train there within the rendezvous timeout. While
# it starts (rank 0 waits), the samples may name it slow by its CPU first.
"$LOCAL_SLURM" node throttle g2 15 >/dev/null
at_exit "'$LOCAL_SLURM' node unthrottle g2"
write_spec job.yaml <<YAML
partition: cpu
nodes: 2
gpus_per_node: 0
procs_per_node: 1
nodelist: g[1-2]
mem: 1G
monitor: {interval: 2s}
watchdog: {slow_after: 30s}
trainer:
  program: $DDP_TRAIN
  model: smallcnn
  data: synthetic
  epochs: 50
  batch_size: 16
  workers: 0
  extra_args: [--synthetic-size, "64000", --no-val]
YAML
run submit job.yaml --wait
expect_code 0
id=$(submitted_job_id)
deadline=$((SECONDS + 240))
until grep -q "slow: rank 1 (g2) at .* (by the trainer's" "$T/out" 2>/dev/null; do
  [ "$SECONDS" -lt "$deadline" ] ||
    fail "status never named rank 1 (g2) slow by the trainer's figures: $(cat "$T/out" "$T/err"); progress: $(cat "logs/${JOB_NAME}_$id.progress.json" 2>&1); record: $(cat "logs/${JOB_NAME}_$id.slow.json" 2>&1)"
  sleep 1
  run status "$JOB_NAME"
done
echo "status: $(cat "$T/out")"
grep -qE "slow: rank 1 \(g2\) at 0\.[0-6][0-9]× the others for [0-9ms]+ \(by the trainer's loading and forward time per batch\)" "$T/out" ||
  fail "status does not say how slow rank 1 is, by the trainer's figures: $(cat "$T/out")"
grep -q '"rank_work_s": \[' "logs/${JOB_NAME}_$id.progress.json" ||
  fail "the progress file has no per-rank work: $(cat "logs/${JOB_NAME}_$id.progress.json")"
on_login scancel "$id"
wait_for_state "$JOB_NAME" CANCELLED 60
run report "$JOB_NAME"
echo "report: $(cat "$T/out")"
expect_out "slow: rank 1 (g2) at 0."
