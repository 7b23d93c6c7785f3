#!/usr/bin/env bash
# A job with requeue: that Slurm signals before its time limit: the script
# stops the step and requeues the job, and status says which attempt it is
# on and why: "attempt 2 of 3 (requeued at the time limit)".
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
# The program: stops when the script passes it the signal, as a checkpointing
# program does. The signal reaches every process of the step, `sleep` too: a
# script whose last command is `wait` can end when `sleep` dies, before bash
# runs the trap (seen under load); in a loop, the trap runs before the next
# command.
cat >program.sh <<'SH'
#!/bin/bash
trap 'echo "checkpointed; stopping"; exit 75' USR1
echo "training"
while :; do sleep 1; done
SH
chmod +x program.sh
write_spec job.yaml <<YAML
partition: cpu
gpus_per_node: 0
procs_per_node: 1
requeue: {signal: USR1, grace: 60, max_restarts: 2}
command: [$T/program.sh]
YAML
run submit job.yaml --wait
expect_code 0
id=$(submitted_job_id)
# The program runs once its line is in the step log.
for _ in $(seq 300); do grep -q training "logs/${JOB_NAME}_$id.restart0.0.out" 2>/dev/null && break; sleep 0.2; done
grep -q training "logs/${JOB_NAME}_$id.restart0.0.out" || fail "the program did not start: $(cat logs/* 2>&1)"
# What Slurm does `grace` seconds before the time limit (--signal=B:USR1@60).
on_login scancel --batch --signal=USR1 "$id"
deadline=$((SECONDS + 60))
until grep -q "requeueing job $id (restart 1 of 2)" "logs/${JOB_NAME}_$id.err" 2>/dev/null; do
  [ "$SECONDS" -lt "$deadline" ] || fail "the job did not requeue itself: $(cat "logs/${JOB_NAME}_$id.err")$(slurmctld_log_of "$id")"
  sleep 0.2
done
# Requeued, it waits for its BeginTime (22.05: two minutes) or runs again.
deadline=$((SECONDS + 60))
while :; do
  run status "$JOB_NAME"
  grep -qE " (PENDING|RUNNING) " "$T/out" && grep -qF "attempt 2 of 3 (requeued at the time limit)" "$T/out" && break
  [ "$SECONDS" -lt "$deadline" ] || fail "status did not show the requeued attempt: $(cat "$T/out" "$T/err")$(slurmctld_log_of "$id")"
  sleep 0.3
done
echo "status: $(cat "$T/out")"
run status "$JOB_NAME" --json
expect_out '"attempt": {'
expect_out '"number": 2'
expect_out '"of": 3'
expect_out '"why": "at the time limit"'
