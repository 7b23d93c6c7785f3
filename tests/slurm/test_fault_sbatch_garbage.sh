#!/usr/bin/env bash
# shellcheck disable=SC2016  # the fake bodies expand when the fake runs
# sbatch exits 0 but prints garbage instead of a job id: not taken as a job id;
# the job is found by its token instead.
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
write_long_spec job.yaml
fake_command sbatch '"$REAL" "$@" >/dev/null || exit
echo "<html><body>502 Bad Gateway</body></html>"'
run submit job.yaml
expect_code 0
expect_out "submitted job $(job_ids)"
grep -q "printed no job id" "$(only_run_dir)/ledger.json" || fail "ledger lacks what sbatch printed"
