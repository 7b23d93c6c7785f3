#!/usr/bin/env bash
# Besides the per-node launcher: one process per GPU as srun starts them
# (SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID), and plain torchrun-style env
# (RANK, WORLD_SIZE, LOCAL_RANK).
# shellcheck source=tests/trainer/lib.sh
. "$(dirname "$0")/lib.sh"
args=(--model smallcnn --synthetic-size 256 --epochs 1 --workers 0)

SLURM_PROCID=1 SLURM_NTASKS=2 SLURM_LOCALID=1 start srun1 "${args[@]}"
SLURM_PROCID=0 SLURM_NTASKS=2 SLURM_LOCALID=0 train srun0 "${args[@]}"
expect_code 0 srun0
finish "$pid" 30
[ "$code" -eq 0 ] || fail "task 1 exited $code: $(cat srun1.out)"
expect_in srun0 "ddp-train: 2 rank(s)"
expect_in srun0 "ddp-train: parameters identical on all 2 ranks"

MASTER_PORT=$(free_port)
RANK=1 WORLD_SIZE=2 LOCAL_RANK=1 start env1 "${args[@]}" --sync reducer
RANK=0 WORLD_SIZE=2 LOCAL_RANK=0 train env0 "${args[@]}" --sync reducer
expect_code 0 env0
finish "$pid" 30
[ "$code" -eq 0 ] || fail "rank 1 exited $code: $(cat env1.out)"
expect_in env0 "sync reducer"
expect_in env0 "ddp-train: parameters identical on all 2 ranks"
# Rank 1 prints nothing of the epoch lines: rank 0 reports global numbers.
if grep -q "^Epoch" env1.out; then fail "rank 1 printed an epoch line"; fi
