#!/usr/bin/env bash
# --loader-only (bench/loader_vs_torchvision.sh) times the JPEG loader alone:
# it reads the dataset, builds the batches and prints one JSON line counting
# every image after the first batch; too few batches is an error saying so.
# shellcheck source=tests/trainer/lib.sh
. "$(dirname "$0")/lib.sh"
dataset tin
# 8 classes x 48 images = 384; batch 32: 12 batches, 11 timed.
train a --loader-only --data tin --image-size 32 --batch-size 32 --workers 2
expect_code 0 a
expect_in a '"images":352'
expect_in a '"layout":"tinyimagenet"'
/usr/bin/python3 -c "import json,sys; j=[json.loads(x) for x in open('$T/a.out') if x.startswith('{')][-1]; sys.exit(0 if j['loader_img_per_s'] > 0 else 1)" ||
  fail "no positive loader_img_per_s in: $(cat "$T/a.out")"
train b --loader-only --data tin --image-size 32 --batch-size 32 --workers 1 --max-steps 4
expect_code 0 b
expect_in b '"images":96'
train c --loader-only --data tin --image-size 32 --batch-size 256
expect_code 1 c
expect_in c "--loader-only needs at least 2 batches"
