#!/usr/bin/env bash
# On a cluster without accounting (no sacct), status says so instead of
# guessing: a job squeue has forgotten is UNKNOWN, never gone. The cluster is
# restarted without accounting (and MinJobAge 2 s) for this test, then restored.
# One version: a user journey, not what differs between Slurm versions
# (docs/testing.md, "Which Slurm version runs what"):
# slurm versions: 24.11
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
restore() {
  local rc=$?
  "$LOCAL_SLURM" down >/dev/null
  "$LOCAL_SLURM" up >/dev/null
  return "$rc"
}
trap 'restore; keep_on_failure' EXIT
"$LOCAL_SLURM" down >/dev/null || fail "local-slurm down failed"
DDPCTL_SLURM_MIN_JOB_AGE=2 "$LOCAL_SLURM" up --no-accounting >/dev/null || fail "local-slurm up --no-accounting failed"
write_spec job.yaml <<'YAML'
partition: cpu
gpus_per_node: 0
procs_per_node: 1
command: "true"
YAML
# Not --follow: with MinJobAge 2 s and no sacct, a poll slowed by load can
# come after squeue forgot the job, and --follow then rightly cannot say how
# it ended (CI's load made it so once). The test waits for that itself.
run submit job.yaml
expect_code 0
# Wait until squeue forgets the job (MinJobAge, checked every few seconds).
deadline=$((SECONDS + 120))
while [ -n "$(on_login squeue -h -t all -n "$JOB_NAME" -o %i)" ]; do
  [ "$SECONDS" -lt "$deadline" ] ||
    fail "squeue still lists the ended job 120 s after it ended (MinJobAge 2 s): $(on_login squeue -h -t all -n "$JOB_NAME" -o '%i %T %e')"
  sleep 0.5
done
run status "$JOB_NAME"
expect_code 0
expect_out "UNKNOWN"
expect_out "no longer in squeue, and sacct cannot say how it ended"
run doctor
expect_err "sacct (accounting)"
expect_err "unavailable"
