#!/usr/bin/env bash
# A job whose rank 1 stops while the others wait for it (as in a collective):
# with `watchdog: {stall_after: 20s, action: cancel}` the watchdog inside the
# job cancels it soon after 20 s without progress, records every node's
# stacks first, and status explains the ending by the stall, naming rank 1
# and its node.
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
command: [python3, $DDPCTL_SOURCE/tests/slurm/data/stalled_rank.py]
progress: {pattern: 'epoch (?P<epoch>\d+) step (?P<step>\d+)', epochs: 1000}
monitor: {interval: 2s}
watchdog: {stall_after: 20s, action: cancel}
YAML
run submit job.yaml --wait
expect_code 0
id=$(submitted_job_id)
wait_for_sacct "$id" CANCELLED 120
# Ranks 0 and 1 run on the first node (block distribution).
first=$(sed -n 's/^ddpctl: master .* (\(.*\)), world size.*/\1/p' "logs/${JOB_NAME}_$id.out")
[ -n "$first" ] || fail "the batch log names no first node: $(cat "logs/${JOB_NAME}_$id.out")"
# The record the watchdog left: when progress stopped, and that it cancelled.
record="logs/${JOB_NAME}_$id.stall.json"
[ -s "$record" ] || fail "the watchdog left no record ($record): $(ls logs)"$'\n'"$(cat "logs/${JOB_NAME}_$id.err")"
grep -qF '"taken":"cancelled"' "$record" || fail "the record does not say cancelled: $(cat "$record")"
since=$(python3 -c 'import json,sys; print(int(json.load(open(sys.argv[1]))["since"]))' "$record")
# sacct says CANCELLED as soon as the controller ends the job; squeue lists
# it COMPLETING until the nodes report its processes gone (seconds under
# load), and status shows Slurm's state: wait for the end.
deadline=$((SECONDS + 60))
while :; do
  run status "$JOB_NAME" --json
  end=$(python3 -c 'import json,sys; j=json.load(open(sys.argv[1]))["rows"]; print(j[0]["end_time"] or "")' "$T/out" 2>/dev/null || true)
  state=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["rows"][0]["state"])' "$T/out" 2>/dev/null || true)
  if [ -n "$end" ] && [ "$end" -ge "$since" ] && [ "$state" != COMPLETING ]; then break; fi
  [ "$SECONDS" -lt "$deadline" ] || fail "status shows no end after the stall within 60 s: $(cat "$T/out")"
  sleep 0.5
done
# stall_after (20 s) + one interval (2 s) + the stacks and the cancel: well
# within a minute even on a loaded machine (bench/ measures it precisely).
took=$((end - since))
echo "progress stopped at $since, the job ended at $end: $took s"
[ "$took" -ge 20 ] || fail "cancelled after $took s, before stall_after (20 s)"
[ "$took" -le 60 ] || fail "cancelled $took s after the stall (stall_after 20 s)"
run status "$JOB_NAME"
echo "status: $(cat "$T/out")"
expect_out "CANCELLED"
expect_out "was cancelled by the watchdog: stalled"
expect_out "rank 1 ($first) stopped at epoch 0 step 0; the others reached epoch 1 step 0"
expect_out "stacks in"
# Every node's stacks were recorded, naming the training processes.
for node in $(on_login scontrol show hostnames "$(on_login sacct -n -X -P -j "$id" -o NodeList)"); do
  stacks="logs/${JOB_NAME}_$id.restart0.stacks.$node.txt"
  [ -s "$stacks" ] || fail "no stacks from $node: $(ls logs)"
  grep -qE "rank [0-9]" "$stacks" || fail "the stacks of $node name no rank: $(cat "$stacks")"
done
grep -qF "ddpctl: watchdog: cancelling job $id: stalled" "logs/${JOB_NAME}_$id.err" ||
  fail "the batch log does not say why it was cancelled: $(cat "logs/${JOB_NAME}_$id.err")"
# The record says what scancel returned, written after it ran (the act first).
stall="logs/${JOB_NAME}_$id.stall.json"
{ grep -qF "\"result\":\"scancel $id: done\"" "$stall" && grep -qF '"taken":"cancelled"' "$stall"; } ||
  fail "the stall record does not say what the cancel returned: $(cat "$stall")"
