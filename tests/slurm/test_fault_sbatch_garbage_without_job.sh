#!/usr/bin/env bash
# sbatch exits 0 with garbage and made no job: the attempt stays unconfirmed and
# the user is told to re-run; the re-run settles it and submits exactly once.
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
write_long_spec job.yaml
fake_command sbatch 'echo "Submitted batch job"'
run submit job.yaml
expect_code 1
expect_err "sbatch exited 0 but printed no job id"
expect_err "Run the same \`ddpctl submit\` again"
expect_nothing_submitted
export PATH=${PATH#"$T/fakebin:"}
run submit job.yaml
expect_code 0
[ "$(job_ids | wc -l)" -eq 1 ] || fail "jobs: $(job_ids | tr '\n' ' ')"
