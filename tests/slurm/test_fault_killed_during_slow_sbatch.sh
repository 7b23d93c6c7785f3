#!/usr/bin/env bash
# ddpctl killed (SIGKILL) while its sbatch is still on the way to the
# controller: sbatch dies with it, so it cannot submit the old token later;
# the re-submit right after settles the attempt and makes exactly one job,
# which status shows and cancel ends.
# shellcheck disable=SC2016  # the fake's body expands when it runs
# One version: a user journey, not what differs between Slurm versions
# (docs/testing.md, "Which Slurm version runs what"):
# slurm versions: 24.11
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
write_long_spec job.yaml
# Slow before it reaches the controller; says who it is and who ran it.
fake_command sbatch 'echo "$$ $PPID" >"'"$T"'/sbatch.pids.tmp"; mv "'"$T"'/sbatch.pids.tmp" "'"$T"'/sbatch.pids"
sleep 20
exec "$REAL" "$@"'
"$LOCAL_SLURM" exec -- "$DDPCTL" submit job.yaml >out.1 2>err.1 &
submitter=$!
deadline=$((SECONDS + 60))
until [ -s sbatch.pids ]; do
  [ "$SECONDS" -lt "$deadline" ] || fail "the slow sbatch never started: $(cat out.1 err.1)"
  sleep 0.1
done
read -r sbatch_pid ddpctl_pid <sbatch.pids
kill -KILL "$ddpctl_pid" || fail "ddpctl (pid $ddpctl_pid) was not running"
wait "$submitter" || true
export PATH=${PATH#"$T/fakebin:"}
run submit job.yaml
expect_code 0
expect_out "submitted job"
# The killed ddpctl's sbatch must be gone: then it can never submit.
deadline=$((SECONDS + 30))
while kill -0 "$sbatch_pid" 2>/dev/null && ! grep -q '^State:.*Z' "/proc/$sbatch_pid/status" 2>/dev/null; do
  [ "$SECONDS" -lt "$deadline" ] || fail "the killed ddpctl's sbatch (pid $sbatch_pid) still runs 30 s later"
  sleep 0.1
done
[ "$(job_ids | wc -l)" -eq 1 ] || fail "Slurm has jobs $(job_ids | tr '\n' ' '), expected one"
[ "$(ledger_outcomes)" = "absent submitted " ] || fail "ledger: $(ledger_outcomes)"
id=$(job_ids)
run status "$JOB_NAME"
expect_out "$id"
run cancel "$JOB_NAME"
expect_code 0
expect_out "job $id: CANCELLED"
