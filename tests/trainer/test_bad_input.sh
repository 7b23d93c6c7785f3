#!/usr/bin/env bash
# Bad arguments and unreadable data fail at once with messages that name the
# flag, the folder or the file.
# shellcheck source=tests/trainer/lib.sh
. "$(dirname "$0")/lib.sh"
train a --model resnet99
expect_code 1 a
expect_in a "ddp-train: error: --model: resnet99 not in {resnet18,resnet50,smallcnn}"
train b --epochs 0
expect_code 1 b
expect_in b "--epochs"
train c --data "$T/missing"
expect_code 1 c
expect_in c "ddp-train: error: --data: $T/missing is not a directory (or use --data synthetic)"
mkdir empty
train d --data empty
expect_code 1 d
expect_in d "ddp-train: error: --data:"
train e --resume
expect_code 1 e
expect_in e "--resume needs --checkpoint-dir"
for bad in 1 1: :3 -1:3 1:0 1:x; do
  train hang --test-hang-at "$bad"
  expect_code 1 hang
  expect_in hang "ddp-train: error: --test-hang-at: $bad is not RANK:STEP (a rank from 0, a step from 1)"
done

# A corrupt image: the rank that reads it fails naming the file, and the
# launcher names that rank.
dataset tin
# No `find | sort | head` here: under pipefail, head's early exit can kill sort
# with SIGPIPE and end the test silently.
mapfile -t images < <(find tin/train -name '*.JPEG' | sort)
[ "${#images[@]}" -gt 0 ] || fail "the generated dataset has no training images under $T/tin/train"
bad=${images[0]}
echo "not a jpeg" >"$bad"
train f --nproc-per-node 2 --model smallcnn --data tin --image-size 32 --batch-size 16 --workers 1 --no-val
[ "$code" -ne 0 ] || fail "a corrupt image did not fail the run"
expect_in f "cannot decode $bad as JPEG"
grep -q "ddp-train: error: rank [01] (local rank [01], pid [0-9]*) exited with status 1; its last line: .*cannot decode" f.out ||
  fail "the launcher did not name the failing rank: $(cat f.out)"
