#!/usr/bin/env bash
# A partition the profile has but Slurm does not: caught before sbatch, at the spec's line.
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
use_drifted_profile
write_spec job.yaml <<'YAML'
partition: h100
gpus_per_node: 1
command: "true"
YAML
sed -i 's/^cluster: local$/cluster: drift/' job.yaml
run submit job.yaml
expect_code 1
expect_err "job.yaml:4:12: partition: partition h100 does not exist on this cluster; Slurm has: a100-80gb, gpu, cpu"
expect_nothing_submitted
[ ! -d runs ] || fail "a run directory was created for a spec that failed preflight"
