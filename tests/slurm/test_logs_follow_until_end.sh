#!/usr/bin/env bash
# logs -f prints the job's output as it is written and stops when the job ends.
# One version: a user journey, not what differs between Slurm versions
# (docs/testing.md, "Which Slurm version runs what"):
# slurm versions: 24.11
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
write_spec job.yaml <<'YAML'
partition: cpu
gpus_per_node: 0
procs_per_node: 1
command: "for i in 1 2 3; do echo tick $i; sleep 1; done"
YAML
run submit job.yaml --wait
expect_code 0
run logs "$JOB_NAME" -f
expect_code 0
expect_out "ddpctl: master "
expect_out "tick 1"
expect_out "tick 3"
expect_out "ended: COMPLETED"
