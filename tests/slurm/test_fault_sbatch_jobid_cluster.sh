#!/usr/bin/env bash
# shellcheck disable=SC2016  # the fake bodies expand when the fake runs
# sbatch --parsable on a federated site prints "jobid;cluster".
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
write_long_spec job.yaml
fake_command sbatch 'id=$("$REAL" "$@") || exit
echo "$id;local"'
run submit job.yaml
expect_code 0
expect_out "submitted job $(job_ids) on cluster local"
grep -q '"cluster": "local"' "$(only_run_dir)/ledger.json" || fail "ledger lacks the cluster"
