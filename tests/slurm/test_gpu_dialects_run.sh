#!/usr/bin/env bash
# A 2-node GPU job runs in every GPU dialect a site profile can name (gres,
# gpus-per-node, constraint, partition): Slurm accepts each script, and its
# in-job steps (the master's address, the launch) run and see their GPUs.
# Slurm 26.05 refuses --gres=gpu together with --gpus-per-node (counting
# SLURM_GPUS_PER_NODE in a job's environment), so a dialect that mixed them,
# in the script or in an in-job srun, fails here on 26.05.
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
mkdir -p clusters
export DDPCTL_CLUSTERS="$T/clusters"
for dialect in gres gpus-per-node constraint partition; do
  sed -e "s/^gpu_request: .*/gpu_request: $dialect/" -e "s/^name: local/name: local-$dialect/" \
    "$DDPCTL_SOURCE/configs/clusters/local.yaml" >"clusters/local-$dialect.yaml"
  # The constraint dialect names GPU types by node feature; the partition
  # dialect by the partition they live in.
  case "$dialect" in
    constraint) sed -i 's/^  a100: {gres: a100,/  a100: {constraint: a100,/' "clusters/local-$dialect.yaml" ;;
    partition) sed -i 's/^  a100: {gres: a100,/  a100: {partition: a100-80gb,/' "clusters/local-$dialect.yaml" ;;
  esac
  case "$dialect" in
    constraint | partition) grep -q "^  a100: {$dialect: " "clusters/local-$dialect.yaml" ||
      fail "the a100 line of local.yaml changed shape, not rewritten for $dialect: $(grep -n 'a100:' "clusters/local-$dialect.yaml")" ;;
  esac
  cat >"job-$dialect.yaml" <<YAML
name: $JOB_NAME
cluster: local-$dialect
time: "00:05:00"
partition: a100-80gb
gpu_type: a100
nodes: 2
gpus_per_node: 4
launch: per-gpu
command: 'echo "rank \$RANK on \$(hostname) cvd=\$CUDA_VISIBLE_DEVICES gpus=\$SLURM_GPUS_ON_NODE"'
YAML
  run gen "job-$dialect.yaml" --stdout
  expect_code 0
  case "$dialect" in
    gres) expect_out "#SBATCH --gres=gpu:a100:4" ;;
    gpus-per-node) expect_out "#SBATCH --gpus-per-node=a100:4" ;;
    constraint) expect_out "#SBATCH --constraint=a100" ;;
    partition) expect_out "#SBATCH --gres=gpu:4" ;;
  esac
  if [ "$dialect" = gpus-per-node ] && grep -q -- "--gres" "$T/out"; then
    fail "the gpus-per-node script also asks --gres, which Slurm 26.05 refuses: $(cat "$T/out")"
  fi
  run submit "job-$dialect.yaml" --follow
  [ "$code" -eq 0 ] || fail "the $dialect job did not complete (exit $code): $(cat "$T/out" "$T/err")$(jobs_report)"
  run logs "$JOB_NAME" --rank 7
  expect_code 0
  expect_out "rank 7 on a2 cvd=0,1,2,3 gpus=4"
done
