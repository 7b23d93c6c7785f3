#!/usr/bin/env bash
# --dry-run validates and preflights, and neither submits nor records a run.
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
write_spec job.yaml <<'YAML'
partition: cpu
gpus_per_node: 0
procs_per_node: 1
command: "true"
YAML
run submit job.yaml --dry-run
expect_code 0
expect_out "passed validation and the cluster preflight; nothing was submitted"
expect_out "would run: sbatch --parsable --comment=ddpctl:<token>"
expect_nothing_submitted
[ ! -d runs ] || fail "a run directory was created by --dry-run"
