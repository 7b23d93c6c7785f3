#!/usr/bin/env bash
# shellcheck disable=SC2016  # the fake bodies expand when the fake runs
# ddpctl killed after sbatch made the job but before it wrote the outcome:
# re-running submit finds the job by its token, so there is exactly one job.
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
write_long_spec job.yaml
fake_command sbatch '"$REAL" "$@"
kill -KILL "$PPID"'
run submit job.yaml
[ "$code" -eq 137 ] || fail "ddpctl was not killed (exit $code)"
[ "$(ledger_outcomes)" = "intent " ] || fail "ledger: $(ledger_outcomes)"
[ "$(job_ids | wc -l)" -eq 1 ] || fail "sbatch did not make the job"
export PATH=${PATH#"$T/fakebin:"}
run submit job.yaml
expect_code 0
expect_out "already submitted: job $(job_ids)"
[ "$(job_ids | wc -l)" -eq 1 ] || fail "jobs: $(job_ids | tr '\n' ' ')"
[ "$(ledger_outcomes)" = "submitted " ] || fail "ledger: $(ledger_outcomes)"
