#!/usr/bin/env bash
# watchdog: {action: restart} with restart: {in_job: 2, spares: 1}: rank 1
# of a 2-node step hangs at step 4 (a sleep) while rank 0 waits for it at
# its step barrier. The watchdog sees no progress for stall_after, names
# rank 1 (behind the others by the progress pattern), ends the step with
# scancel --signal=KILL JOB.STEP, and the batch shell starts it again inside
# the job with rank 1's node left out and the spare taken, from the
# checkpoint. The job COMPLETES without leaving the queue, and status says
# which restart it was and why.
# One version: a user journey, not what differs between Slurm versions
# (docs/testing.md, "Which Slurm version runs what"):
# slurm versions: 24.11
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
# Two ranks in lockstep through files in the shared test folder; rank 0
# checkpoints the step. Restart 0's rank 1 never finishes step 4.
cat >program.sh <<'SH'
#!/bin/bash
dir=$(dirname "$0")
step=$(cat "$dir/ckpt" 2>/dev/null || echo 0)
echo "restart $DDPCTL_RESTART rank $NODE_RANK on $(hostname) from step $step"
echo "$$ $(hostname)" >"$dir/pid.$DDPCTL_RESTART.$NODE_RANK.tmp"
mv "$dir/pid.$DDPCTL_RESTART.$NODE_RANK.tmp" "$dir/pid.$DDPCTL_RESTART.$NODE_RANK"
last=$((step + 8))
while [ "$step" -lt "$last" ]; do
  step=$((step + 1))
  # The hang. Slurm's KILL may reach the sleep before its shell (it signals
  # a step's processes one by one; seen on 26.05): the shell must not go on
  # to step 4, which would let rank 0 checkpoint it.
  if [ "$DDPCTL_RESTART" = 0 ] && [ "$NODE_RANK" = 1 ] && [ "$step" = 4 ]; then sleep 3600; exit 9; fi
  echo "epoch 1 step $step"
  : >"$dir/at.$DDPCTL_RESTART.$NODE_RANK.$step"
  until [ -e "$dir/at.$DDPCTL_RESTART.$((1 - NODE_RANK)).$step" ]; do sleep 0.1; done
  if [ "$NODE_RANK" = 0 ]; then echo "$step" >"$dir/ckpt.tmp" && mv "$dir/ckpt.tmp" "$dir/ckpt"; fi
  sleep 0.2
done
echo "rank $NODE_RANK done at step $step"
SH
chmod +x program.sh
write_spec job.yaml <<YAML
partition: cpu
nodes: 2
gpus_per_node: 0
procs_per_node: 1
restart: {in_job: 2, spares: 1}
command: [$T/program.sh]
progress: {pattern: 'epoch (?P<epoch>\d+) step (?P<step>\d+)', epochs: 1}
monitor: {interval: 2s}
watchdog: {stall_after: 15s, action: restart}
YAML
run submit job.yaml
expect_code 0
id=$(submitted_job_id)
wait_for_sacct "$id" COMPLETED 240
echo "batch log: $(cat "logs/${JOB_NAME}_$id.err")"
read -r _ node <pid.0.1
grep -qE "^ddpctl: watchdog: ending the training step of job $id for an in-job restart: stalled " "logs/${JOB_NAME}_$id.err" ||
  fail "the watchdog did not end the stalled step$(job_logs_of "$id")"
grep -qE "^ddpctl: restart 1 of 2 in the job: the watchdog ended the step: stalled [0-9ms]+: (rank|task) 1 \($node\) stopped at [^;]*3; the others reached [^;]*4; $node left out, spare [a-z0-9]+ taken$" \
  "logs/${JOB_NAME}_$id.err" || fail "the batch shell did not restart the step without the stalled rank's node$(job_logs_of "$id")"
# The watchdog's act, as its record keeps it: the step it ended, for which restart.
record=logs/${JOB_NAME}_$id.stall.json
python3 - "$record" "$id" <<'PY' || fail "the stall record is not the restart's: $(cat "$record")"
import json, re, sys
r = json.load(open(sys.argv[1]))
assert r["action"] == "restart" and r["taken"] == "restarted" and r["step"] == 0, r
assert re.fullmatch(r"scancel --signal=KILL %s\.\d+: done" % sys.argv[2], r["result"]), r["result"]
PY
if [ ! -s pid.1.0 ] || [ ! -s pid.1.1 ]; then fail "the restarted step did not run both ranks: $(ls)$(job_logs_of "$id")"; fi
read -r _ new1 <pid.1.1
[ "$new1" != "$node" ] || fail "rank 1 ran again on the stalled node $node"
grep -qE "^restart 1 rank 1 .* from step 3$" "logs/${JOB_NAME}_$id.restart0.1.out" ||
  fail "the restarted step did not resume from the checkpoint: $(cat "logs/${JOB_NAME}_$id.restart0.1.out")"
on_login sacct -n -X -P --duplicates -j "$id" -o State >"$T/states"
grep -q REQUEUE "$T/states" && fail "job $id was requeued: $(cat "$T/states")"
run status "$JOB_NAME"
echo "status: $(cat "$T/out")"
expect_code 0
expect_out "COMPLETED"
expect_out "restart 1 of 2 in the job: the watchdog ended the step: stalled "
expect_out "$node left out, spare $new1 taken"
