#!/usr/bin/env bash
# sbatch that never answers: ddpctl stops it, records the attempt as
# unconfirmed, and the next submit settles it (no job was made) and submits once.
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
write_long_spec job.yaml
fake_command sbatch 'exec sleep 600'
export DDPCTL_SBATCH_TIMEOUT=2
run submit job.yaml
expect_code 1
expect_err "sbatch did not finish in time and was stopped"
expect_err "recorded as unconfirmed"
[ "$(ledger_outcomes)" = "unconfirmed " ] || fail "ledger: $(ledger_outcomes)"
export PATH=${PATH#"$T/fakebin:"}
# The real sbatch gets the default time: 2 s is too short on a loaded machine.
unset DDPCTL_SBATCH_TIMEOUT
run submit job.yaml
expect_code 0
expect_out "submitted job"
[ "$(ledger_outcomes)" = "absent submitted " ] || fail "ledger: $(ledger_outcomes)"
[ "$(job_ids | wc -l)" -eq 1 ] || fail "jobs: $(job_ids | tr '\n' ' ')"
