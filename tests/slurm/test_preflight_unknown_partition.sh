#!/usr/bin/env bash
# A partition the profile has but Slurm does not: caught before sbatch, at the spec's line.
# One version: it tests a decision of ddpctl's, not Slurm's answers
# (docs/testing.md, "Which Slurm version runs what"):
# slurm versions: 24.11
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
# (runs/.locks holds the run's lock, taken before the preflight; it is not a run)
run_dirs=$(find runs -mindepth 1 -maxdepth 1 -type d ! -name .locks 2>/dev/null || true)
[ -z "$run_dirs" ] || fail "a run directory was created for a spec that failed preflight: $run_dirs"
