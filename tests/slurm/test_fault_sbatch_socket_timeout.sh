#!/usr/bin/env bash
# shellcheck disable=SC2016  # the fake bodies expand when the fake runs
# sbatch makes the job but reports "Socket timed out": ddpctl finds the job by
# its token and reports it submitted; nothing is submitted twice.
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
write_long_spec job.yaml
fake_command sbatch '"$REAL" "$@" >/dev/null || exit
echo "sbatch: error: Batch job submission failed: Socket timed out on send/recv operation" >&2
exit 1'
run submit job.yaml
expect_code 0
expect_out "submitted job $(job_ids)"
grep -q "found by its token" "$(only_run_dir)/ledger.json" || fail "ledger does not say how it was confirmed"
run submit job.yaml
expect_out "already submitted"
[ "$(job_ids | wc -l)" -eq 1 ] || fail "jobs: $(job_ids | tr '\n' ' ')"
