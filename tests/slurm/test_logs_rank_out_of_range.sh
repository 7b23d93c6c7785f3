#!/usr/bin/env bash
# logs --rank beyond the world size names the valid range.
# One version: it tests a decision of ddpctl's, not Slurm's answers
# (docs/testing.md, "Which Slurm version runs what"):
# slurm versions: 26.05
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
write_spec job.yaml <<'YAML'
partition: cpu
gpus_per_node: 0
nodes: 2
procs_per_node: 2
command: "echo node $NODE_RANK here"
YAML
run submit job.yaml --follow
expect_code 0
run logs "$JOB_NAME" --rank 4
expect_code 1
expect_err "--rank: rank 4 is outside this job's 4 ranks (0-3)"
run logs "$JOB_NAME" --rank 3
expect_code 0
expect_out "task 1"
expect_out "node 1 here"
