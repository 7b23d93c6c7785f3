#!/usr/bin/env bash
# A checkpoint written by 4 ranks resumes on 2: the rest of the epoch's order
# is split across the 2 new ranks, so every sample of every epoch is trained
# on exactly once across the switch (--trace-samples lists what each rank
# trained on), and training goes on to the end. Without --global-batch the
# global batch halves, with a warning; --global-batch 32 keeps it by
# accumulating 2 micro-batches on 2 ranks.
# shellcheck source=tests/trainer/lib.sh
. "$(dirname "$0")/lib.sh"
# 8192 samples: 256 steps of 4 x 8 per epoch, long enough to stop inside
# one; divisible by 4 x 8 and 2 x 8, so no epoch drops a tail.
size=8192
args=(--model smallcnn --data synthetic --synthetic-size "$size" --classes 8 --image-size 16 --epochs 2
  --batch-size 8 --lr 0.05 --workers 0 --no-val)

# cut_and_resume NAME FLAGS...: 4 ranks, stopped by SIGUSR1 inside epoch 1,
# then 2 ranks with --resume to the end; both with FLAGS. Sets $offset (the
# samples of epoch 1 the first attempt trained on) and leaves NAME-cut.out,
# NAME-resume.out, NAME-ck/ and the traces NAME-trace.rank*.
cut_and_resume() {
  local name=$1 step
  shift
  export DDPCTL_PROGRESS_FILE=$T/$name-progress.json
  MASTER_PORT=$(free_port) start "$name-cut" --nproc-per-node 4 "${args[@]}" "$@" --checkpoint-dir "$name-ck" \
    --trace-samples "$T/$name-trace"
  wait_progress "$DDPCTL_PROGRESS_FILE" 1 2
  kill -USR1 "$pid"
  finish "$pid" 120
  unset DDPCTL_PROGRESS_FILE
  expect_code 75 "$name-cut"
  step=$(sed -n 's/^ddp-train: stop requested: checkpoint saved at epoch 1, step \([0-9]*\); exiting for requeue$/\1/p' \
    "$name-cut.out")
  [ -n "$step" ] || fail "$name: no checkpoint inside epoch 1:"$'\n'"$(cat "$name-cut.out")"
  { [ "$step" -gt 0 ] && [ "$step" -lt 256 ]; } || fail "$name: stopped at step $step, not inside epoch 1 (256 steps)"
  offset=$((step * 32))  # 4 ranks x batch 8 x accumulation 1 per step
  echo "$name: 4 ranks stopped at epoch 1, step $step (sample $offset)"
  # The first attempt's traces are the files there now.
  cut_traces=("$T/$name"-trace.rank*)
  [ "${#cut_traces[@]}" -eq 4 ] || fail "$name: ${#cut_traces[@]} trace files after 4 ranks: ${cut_traces[*]}"

  MASTER_PORT=$(free_port) train "$name-resume" --nproc-per-node 2 "${args[@]}" "$@" --checkpoint-dir "$name-ck" \
    --resume --trace-samples "$T/$name-trace"
  expect_code 0 "$name-resume"
  expect_in "$name-resume" "ddp-train: parameters identical on all 2 ranks"
  # The loss curve goes on: epoch 1 ends in the second attempt, then epoch 2.
  if grep -q "^Epoch \[" "$name-cut.out"; then fail "$name: the stopped attempt finished an epoch: $(cat "$name-cut.out")"; fi
  for e in 1 2; do
    grep -Eq "^Epoch \[$e/2\] LR: [0-9.]+ \| Loss \(train, val\): [0-9]+\.[0-9]+, " "$name-resume.out" ||
      fail "$name: no loss line for epoch $e after the resume:"$'\n'"$(cat "$name-resume.out")"
  done
}

# count_samples EPOCH FILES...: samples the trace FILES list for EPOCH.
count_samples() {
  local epoch=$1
  shift
  awk -v e="$epoch" '$1 == e { n += NF - 1 } END { print n + 0 }' "$@"
}

# check_traces NAME: over both attempts, every sample of each epoch exactly
# once; the first attempt trained on the first $offset samples of epoch 1.
check_traces() {
  local name=$1 problems all resume_traces=()
  all=("$T/$name"-trace.rank*)
  for f in "${all[@]}"; do
    case " ${cut_traces[*]} " in *" $f "*) ;; *) resume_traces+=("$f") ;; esac
  done
  [ "${#resume_traces[@]}" -eq 2 ] || fail "$name: ${#resume_traces[@]} new trace files after 2 ranks: ${resume_traces[*]}"
  problems=$(awk -v size="$size" '
    { for (i = 2; i <= NF; i++) {
        if ($i !~ /^[0-9]+$/ || $i + 0 >= size) printf "epoch %s: sample %s is not an index below %d\n", $1, $i, size
        if (++seen[$1 " " $i] == 2) printf "epoch %s: sample %s trained on twice\n", $1, $i
        count[$1]++
      } }
    END {
      for (e = 1; e <= 2; e++) {
        if (count[e] != size) printf "epoch %d: %d samples trained on, expected %d\n", e, count[e], size
        for (i = 0; i < size; i++)
          if (!((e " " i) in seen)) { printf "epoch %d: sample %d never trained on (and maybe more)\n", e, i; break }
      }
    }' "${all[@]}")
  # At most 20 lines of it; sed reads all of its input, so no broken pipe.
  [ -z "$problems" ] || fail "$name: the traces of both attempts are not every sample once per epoch:"$'\n'"$(printf '%s\n' "$problems" | sed -n 1,20p)"
  local first_part second_part
  first_part=$(count_samples 1 "${cut_traces[@]}")
  second_part=$(count_samples 1 "${resume_traces[@]}")
  [ "$first_part" -eq "$offset" ] || fail "$name: the 4 ranks trained on $first_part samples of epoch 1, the checkpoint says $offset"
  [ "$second_part" -eq $((size - offset)) ] || fail "$name: the 2 ranks trained on $second_part samples of epoch 1, expected $((size - offset))"
  [ "$(count_samples 2 "${cut_traces[@]}")" -eq 0 ] || fail "$name: the stopped attempt trained in epoch 2"
  echo "$name: epoch 1 = $first_part samples on 4 ranks + $second_part on 2, each once; epoch 2 complete"
}

# expect_batches NAME WANT: the metrics' global_batch/grad_accum per epoch,
# comma-separated (only the second attempt finished epochs).
expect_batches() {
  local got
  got=$(python3 -c 'import json, sys
print(",".join("%s/%s" % (r["global_batch"], r["grad_accum"]) for r in map(json.loads, open(sys.argv[1]))))' \
    "$1-ck/metrics.jsonl") || fail "$1: cannot read $1-ck/metrics.jsonl"
  [ "$got" = "$2" ] || fail "$1: metrics global_batch/grad_accum per epoch: $got, expected $2"
}

# Per-rank batch kept, global batch halved: said once, with the fix.
cut_and_resume plain
expect_in plain-resume "ddp-train: resumed from plain-ck/checkpoint.pt at epoch 1, sample $offset of $size (written by 4 ranks, now 2); global batch 32 -> 16"
expect_in plain-resume "ddp-train: warning: the global batch changed from 32 to 16: set trainer.global_batch"
check_traces plain
expect_batches plain 16/1,16/1

# --global-batch 32: accumulation 1 on 4 ranks, 2 on 2 ranks.
cut_and_resume kept --global-batch 32
expect_in kept-cut "ddp-train: --global-batch 32 = 4 ranks x --batch-size 8 x accumulation 1"
expect_in kept-resume "ddp-train: --global-batch 32 = 2 ranks x --batch-size 8 x accumulation 2"
expect_in kept-resume "ddp-train: resumed from kept-ck/checkpoint.pt at epoch 1, sample $offset of $size (written by 4 ranks, now 2); global batch 32 -> 32"
if grep -q "global batch changed" kept-resume.out; then fail "kept: a warning although --global-batch kept it: $(cat kept-resume.out)"; fi
check_traces kept
expect_batches kept 32/2,32/2

# --global-batch that 3 ranks cannot divide: refused before the rendezvous.
MASTER_PORT=$(free_port) train odd --nproc-per-node 3 "${args[@]}" --global-batch 32
expect_code 1 odd
expect_in odd "--global-batch 32 is not a multiple of 3 ranks x --batch-size 8 = 24 samples per micro-step"
