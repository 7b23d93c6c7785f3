#!/usr/bin/env bash
# With `action: warn` a stalled job keeps running: status marks it STALLED,
# for how long and which rank stopped, with its usage; --json carries the
# watchdog's record and Slurm's own state.
# One version: a user journey, not what differs between Slurm versions
# (docs/testing.md, "Which Slurm version runs what"):
# slurm versions: 26.05
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
write_spec job.yaml <<YAML
partition: cpu
nodes: 2
gpus_per_node: 0
procs_per_node: 2
launch: per-gpu
command: [python3, $DDPCTL_SOURCE/tests/slurm/data/stalled_rank.py]
progress: {pattern: 'epoch (?P<epoch>\d+) step (?P<step>\d+)', epochs: 1000}
monitor: {interval: 2s}
watchdog: {stall_after: 20s, action: warn}
YAML
run submit job.yaml --wait
expect_code 0
id=$(submitted_job_id)
deadline=$((SECONDS + 120))
while :; do
  run status "$JOB_NAME"
  grep -qF STALLED "$T/out" && break
  grep -qF RUNNING "$T/out" || fail "the job is not running: $(cat "$T/out" "$T/err")"
  [ "$SECONDS" -lt "$deadline" ] || fail "status never showed STALLED: $(cat "$T/out")"$'\n'"$(cat "logs/${JOB_NAME}_$id.err")"
  sleep 1
done
echo "status: $(cat "$T/out")"
first=$(sed -n 's/^ddpctl: master .* (\(.*\)), world size.*/\1/p' "logs/${JOB_NAME}_$id.out")
expect_out "stalled "
expect_out "(no progress in the progress pattern): rank 1 ($first) stopped at epoch 0 step 0"
expect_out "RSS "
run status "$JOB_NAME" --json
expect_out '"state": "RUNNING"'
expect_out '"taken": "warned"'
expect_out '"usage": {'
# It runs on: still RUNNING two samples later, and the batch log warned.
usage="logs/${JOB_NAME}_$id.usage.$first.jsonl"
samples=$(wc -l <"$usage")
deadline=$((SECONDS + 60))
while [ "$(wc -l <"$usage")" -lt $((samples + 2)) ]; do
  [ "$SECONDS" -lt "$deadline" ] || fail "no new samples in $usage"
  sleep 0.5
done
on_login squeue -h -j "$id" -o %T >"$T/state"
grep -qx RUNNING "$T/state" || fail "the warned job is no longer running: $(cat "$T/state")"
grep -qF "ddpctl: watchdog: warning: stalled" "logs/${JOB_NAME}_$id.err" ||
  fail "the batch log has no warning: $(cat "logs/${JOB_NAME}_$id.err")"
