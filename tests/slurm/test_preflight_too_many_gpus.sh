#!/usr/bin/env bash
# More GPUs per node than any node of the partition has: caught before sbatch.
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
use_drifted_profile
write_spec job.yaml <<'YAML'
partition: a100-80gb
gpu_type: a100
gpus_per_node: 8
command: "true"
YAML
sed -i 's/^cluster: local$/cluster: drift/' job.yaml
run submit job.yaml
expect_code 1
expect_err "job.yaml:6:16: gpus_per_node: 8 a100 GPUs per node asked, but nodes in partition a100-80gb have at most 4"
expect_nothing_submitted
