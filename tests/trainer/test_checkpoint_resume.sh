#!/usr/bin/env bash
# SIGUSR1 to the launcher mid-epoch: every rank stops at the same step, rank 0
# checkpoints, the launcher exits 75; --resume on a different shape with the
# same world size (2 nodes x 1 instead of 1 x 2) continues from that step with
# the same loss curve as an uninterrupted run. (Another world size:
# test_resume_other_world_size.sh.)
# shellcheck source=tests/trainer/lib.sh
. "$(dirname "$0")/lib.sh"
# 8 classes x 200 images, 100 steps per epoch and rank: long enough to cut.
"$MAKE_TINY_IMAGENET" tin 8 200 8 64 >/dev/null
args=(--model smallcnn --data tin --image-size 64 --epochs 4 --batch-size 8 --lr 0.05 --workers 0)

train ref --nproc-per-node 2 "${args[@]}" --checkpoint-dir ref-ck
expect_code 0 ref

export DDPCTL_PROGRESS_FILE=$T/progress.json
MASTER_PORT=$(free_port) start cut --nproc-per-node 2 "${args[@]}" --checkpoint-dir ck
wait_progress "$DDPCTL_PROGRESS_FILE" 2 3
kill -USR1 "$pid"
finish "$pid" 60
expect_code 75 cut
expect_in cut "ddp-train: launcher got signal 10; passing it to the workers"
grep -q "^ddp-train: stop requested: checkpoint saved at epoch [23], step [0-9]*; exiting for requeue$" cut.out ||
  fail "no checkpoint line for epoch 2 or 3: $(cat cut.out)"
epoch=$(sed -n 's/^ddp-train: stop requested: checkpoint saved at epoch \([0-9]*\), step.*/\1/p' cut.out)
step=$(sed -n 's/^ddp-train: stop requested: checkpoint saved at epoch [0-9]*, step \([0-9]*\);.*/\1/p' cut.out)
echo "stopped at epoch $epoch, step $step"
{ [ "$step" -gt 0 ] && [ "$step" -lt 100 ]; } || fail "stopped at step $step, not inside an epoch (100 steps)"
if grep -q "^Epoch \[$epoch/" cut.out; then fail "epoch $epoch finished although stopped"; fi
[ -f ck/checkpoint.pt ] || fail "no checkpoint"
for f in ck/*; do
  case $f in *tmp*) fail "a temporary checkpoint file was left: $f" ;; esac
done

# Resume as 2 nodes x 1 worker: two launchers, NODE_RANK 0 and 1.
unset DDPCTL_PROGRESS_FILE
MASTER_PORT=$(free_port)
NNODES=2 NODE_RANK=1 start node1 --nproc-per-node 1 "${args[@]}" --checkpoint-dir ck --resume
node1=$pid
NNODES=2 NODE_RANK=0 train node0 --nproc-per-node 1 "${args[@]}" --checkpoint-dir ck --resume
expect_code 0 node0
finish "$node1" 30
[ "$code" -eq 0 ] || fail "node 1 exited $code: $(cat node1.out)"
# 2 ranks x batch 8: step S is sample 16 x S of the epoch's 1600.
expect_in node0 "ddp-train: resumed from ck/checkpoint.pt at epoch $epoch, sample $((step * 16)) of 1600 (written by 2 ranks, now 2); global batch 16 -> 16"
expect_in node0 "ddp-train: parameters identical on all 2 ranks"
if grep -q "^Epoch \[1/" node0.out; then fail "the resumed run repeated epoch 1"; fi
want=$(epoch_line ref 4)
got=$(epoch_line node0 4)
{ [ -n "$want" ] && [ "$want" = "$got" ]; } || fail "epoch 4 differs after resume:"$'\n'"  uninterrupted: $want"$'\n'"  resumed:       $got"
echo "epoch 4 identical: $got"

if grep -q "global batch changed" node0.out; then fail "a warning about the global batch, which did not change"; fi

# Another per-rank batch size is refused, naming the file and both values.
train other-batch --model smallcnn --data tin --image-size 64 --epochs 4 --batch-size 4 --workers 0 \
  --checkpoint-dir ck --resume
expect_code 1 other-batch
expect_in other-batch "ck/checkpoint.pt has sampler/batch_size 8; this run has 4 (resume needs the same value"
