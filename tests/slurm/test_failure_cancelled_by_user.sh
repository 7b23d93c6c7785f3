#!/usr/bin/env bash
# A running job cancelled with scancel: status says it was cancelled, by whom
# (from accounting), and names no task as failed (srun's SIGTERM to the step
# is not a failure of the program).
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
write_spec job.yaml <<YAML
partition: cpu
nodes: 2
gpus_per_node: 0
procs_per_node: 1
command: "echo training; sleep 600"
YAML
run submit job.yaml --wait
expect_code 0
id=$(submitted_job_id)
for _ in $(seq 300); do grep -q training "logs/${JOB_NAME}_$id.restart0.1.out" 2>/dev/null && break; sleep 0.2; done
on_login scancel "$id"
wait_for_sacct "$id" CANCELLED
deadline=$((SECONDS + 60))
while :; do
  run status "$JOB_NAME"
  grep -qF "was cancelled by root" "$T/out" && break
  [ "$SECONDS" -lt "$deadline" ] || fail "status did not say who cancelled the job: $(cat "$T/out" "$T/err")$(slurmctld_log_of "$id")"
  sleep 0.3
done
echo "status: $(cat "$T/out")"
grep -qE " CANCELLED +[0-9]+s/5m00s +g\[1-2\] +0 +was cancelled by root$" "$T/out" ||
  fail "the status line is not the cancellation alone: $(cat "$T/out")"
if grep -qE "task [0-9]|rank [0-9]" "$T/out"; then fail "a task is named as failed in a cancelled job: $(cat "$T/out")"; fi
run status "$JOB_NAME" --json
expect_out '"what": "was cancelled by root"'
