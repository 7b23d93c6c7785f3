#!/usr/bin/env bash
# An account the user has no association with: caught before sbatch, with suggestions.
# One version: it tests a decision of ddpctl's, not Slurm's answers
# (docs/testing.md, "Which Slurm version runs what"):
# slurm versions: 26.05
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
write_spec job.yaml <<'YAML'
partition: cpu
gpus_per_node: 0
procs_per_node: 1
account: lusuu
command: "true"
YAML
run submit job.yaml
expect_code 1
expect_err "job.yaml:7:10: account: account lusuu is not one you can charge on this cluster (did you mean 'lusu'?)"
expect_nothing_submitted
