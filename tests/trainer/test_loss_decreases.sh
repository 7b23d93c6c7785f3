#!/usr/bin/env bash
# Two workers under the launcher learn a tiny generated TinyImageNet-shaped
# JPEG dataset: the loss falls, validation is global, replicas stay identical,
# and the metrics file has one record per epoch.
# shellcheck source=tests/trainer/lib.sh
. "$(dirname "$0")/lib.sh"
dataset tin
train run --nproc-per-node 2 --model smallcnn --data tin --image-size 32 --epochs 4 --batch-size 16 --lr 0.05 \
  --workers 1 --metrics metrics.jsonl
expect_code 0 run
expect_in run "ddp-train: 2 rank(s), smallcnn on CPU/Gloo, tinyimagenet data (384 train, 64 val images, 8 classes)"
expect_in run "ddp-train: parameters identical on all 2 ranks"
grep -Eq '^Epoch \[4/4\] LR: 0\.050000 \| Loss \(train, val\): [0-9.]+, [0-9.]+ \| Accuracy \(train, val\): [0-9.]+%, [0-9.]+% \| Throughput: [0-9.]+ img/s$' run.out ||
  fail "no epoch line in the seeds' format: $(cat run.out)"
python3 - <<'PY' || fail "metrics: $(cat metrics.jsonl)"
import json, math
recs = [json.loads(l) for l in open("metrics.jsonl")]
assert [r["epoch"] for r in recs] == [1, 2, 3, 4], recs
first, last = recs[0], recs[-1]
print(f"train loss {first['train_loss']:.3f} -> {last['train_loss']:.3f}, val acc {last['val_acc']:.1f}%")
assert last["train_loss"] < 0.6 * first["train_loss"], "train loss did not fall"
# Validation is at 100% after epoch 1 on this tiny set, so the last epoch's
# val loss against the first is a coin flip of the sample order: ask for a
# fall at the best later epoch, and for the last to stay well below chance.
assert min(r["val_loss"] for r in recs[1:]) < first["val_loss"], "val loss did not fall"
assert last["val_loss"] < 0.5 * math.log(8), "val loss not well below chance (ln 8)"
assert last["val_acc"] > 50, "val accuracy not above chance (12.5%)"
for r in recs:
    assert r["val_scope"] == "global" and r["world_size"] == 2 and r["img_per_s"] > 0
    assert len(r["step_time_s"]) == 2 and len(r["peak_mem_mib"]) == 2 and min(r["peak_mem_mib"]) > 0
    assert r["rank0_mem_mib"]["peak"] >= r["rank0_mem_mib"]["avg"] > 0
    assert 0 <= r["rendezvous_s"] < r["first_step_s"]
    assert r["params"] == 23696 + 65 * 8, r["params"]  # smallcnn, 8 classes (comm_floor.hpp's count)
    # 3x the forward pass: 3->16 at 32x32, 16->32 at 16x16, 32->64 at 8x8 (3x3), 64->8; 2 FLOPs a multiply-add.
    assert r["flops_per_sample"] == 3 * 2 * (3*16*9*32*32 + 16*32*9*16*16 + 32*64*9*8*8 + 64*8), r["flops_per_sample"]
PY
