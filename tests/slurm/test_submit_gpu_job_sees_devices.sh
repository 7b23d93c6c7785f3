#!/usr/bin/env bash
# A GPU job on a100-80gb sees its GPUs as on a real cluster.
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
write_spec job.yaml <<'YAML'
partition: a100-80gb
gpu_type: a100
nodes: 1
gpus_per_node: 4
launch: per-gpu
command: 'echo "rank $RANK local $LOCAL_RANK cvd=$CUDA_VISIBLE_DEVICES gpus=$SLURM_GPUS_ON_NODE"'
YAML
run submit job.yaml --follow
expect_code 0
run logs "$JOB_NAME" --rank 3
expect_code 0
expect_out "rank 3 local 3 cvd=0,1,2,3 gpus=4"
run status "$JOB_NAME"
expect_out "COMPLETED"
run status "$JOB_NAME" --json
expect_out "\"gpus\": 4"
