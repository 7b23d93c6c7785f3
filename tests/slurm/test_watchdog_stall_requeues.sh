#!/usr/bin/env bash
# With `watchdog: {action: requeue}` and restarts left, a stalled job is
# requeued by its watchdog; the next attempt resumes from the program's
# checkpoint and completes, and status says why the first attempt ended.
# One version: a user journey, not what differs between Slurm versions
# (docs/testing.md, "Which Slurm version runs what"):
# slurm versions: 24.11
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
write_spec job.yaml <<YAML
partition: cpu
nodes: 2
gpus_per_node: 0
procs_per_node: 2
launch: per-gpu
command: [python3, $DDPCTL_SOURCE/tests/slurm/data/stalled_once.py]
progress: {pattern: 'epoch (?P<epoch>\d+) step (?P<step>\d+)', epochs: 4}
monitor: {interval: 2s}
watchdog: {stall_after: 20s, action: requeue}
requeue: {max_restarts: 1, grace: 30}
YAML
run submit job.yaml --wait
expect_code 0
id=$(submitted_job_id)
wait_for_completed_after_requeue "$id" 180
err="logs/${JOB_NAME}_$id.err"
grep -qF "ddpctl: requeueing job $id (restart 1 of 1): by the watchdog: stalled" "$err" ||
  fail "the first attempt was not requeued by the watchdog: $(cat "$err")"
grep -qF "resuming from the checkpoint of epoch 0" "logs/${JOB_NAME}_$id.restart1.0.out" ||
  fail "the second attempt did not resume from the checkpoint: $(cat "logs/${JOB_NAME}_$id.restart1.0.out")"
grep -qx "done" "logs/${JOB_NAME}_$id.restart1.0.out" || fail "the second attempt did not finish"
ls "logs/${JOB_NAME}_$id.restart0.stacks."*.txt >/dev/null || fail "no stacks were recorded before the requeue: $(ls logs)"
run status "$JOB_NAME"
echo "status: $(cat "$T/out")"
expect_out "COMPLETED"
expect_out "attempt 2 of 2 (requeued by the watchdog: stalled"
expect_out "rank 1 ("
# The record says what the requeue returned, written after it ran (the act first).
stall="logs/${JOB_NAME}_$id.stall.json"
{ grep -qF "\"result\":\"scontrol requeue $id: done\"" "$stall" && grep -qF '"taken":"requeued"' "$stall"; } ||
  fail "the stall record does not say what the requeue returned: $(cat "$stall")"
