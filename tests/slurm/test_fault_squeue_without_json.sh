#!/usr/bin/env bash
# A squeue without --json (older Slurm): status falls back to a format string
# and still shows the job, its state and its GPUs.
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
write_spec job.yaml <<'YAML'
partition: gpu
gpu_type: a100
gpus_per_node: 1
nodes: 2
command: "sleep 300"
YAML
run submit job.yaml --wait
expect_code 0
# shellcheck disable=SC2016  # expands when the fake runs
fake_command squeue 'for a in "$@"; do [ "$a" = --json ] && { echo "squeue: unrecognized option '\''--json'\''" >&2; exit 1; }; done
exec "$REAL" "$@"'
run status "$JOB_NAME" --json
expect_code 0
expect_out '"state": "RUNNING"'
expect_out '"gpus": 2'
expect_out '"time_limit_s": 300'
