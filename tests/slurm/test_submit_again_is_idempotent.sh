#!/usr/bin/env bash
# Running the same submit twice while the job is queued makes one job, not two.
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
write_spec job.yaml <<'YAML'
partition: cpu
gpus_per_node: 0
procs_per_node: 1
command: "sleep 300"
YAML
run submit job.yaml
expect_code 0
first=$(job_ids)
run submit job.yaml
expect_code 0
expect_out "already submitted: job $first"
[ "$(job_ids)" = "$first" ] || fail "jobs now: $(job_ids | tr '\n' ' '), expected only $first"
run submit job.yaml --again
expect_code 0
[ "$(job_ids | wc -l)" -eq 2 ] || fail "--again did not submit a second job"
