#!/usr/bin/env bash
# Sourced by the trainer's end-to-end tests: a fresh temporary folder, a free
# port for the rendezvous, and helpers to run ddp-train's processes and wait
# on them. A failing test keeps its folder.
set -euo pipefail
: "${DDP_TRAIN:?set DDP_TRAIN to the ddp-train binary}"
: "${MAKE_TINY_IMAGENET:?set MAKE_TINY_IMAGENET to the dataset generator}"
T=$(mktemp -d "${TMPDIR:-/tmp}/ddptrain-test.XXXXXX")
keep_on_failure() {
  local rc=$?
  # Never leave a trainer behind.
  pkill -KILL -f "^$DDP_TRAIN .*$T" 2>/dev/null || true
  if [ "$rc" -eq 0 ]; then rm -rf "$T"; else echo "kept $T" >&2; fi
}
trap keep_on_failure EXIT
cd "$T"
# The launcher and the workers read these; a test sets what it needs.
unset RANK WORLD_SIZE LOCAL_RANK LOCAL_WORLD_SIZE NODE_RANK NNODES MASTER_ADDR MASTER_PORT DDPCTL_PROGRESS_FILE \
  SLURM_PROCID SLURM_NTASKS SLURM_LOCALID SLURM_NODEID SLURM_NNODES SLURM_JOB_NUM_NODES SLURM_NTASKS_PER_NODE

fail() { echo "FAIL: $*" >&2; exit 1; }

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
export MASTER_ADDR=127.0.0.1
MASTER_PORT=$(free_port)
export MASTER_PORT

# dataset DIR: a tiny TinyImageNet-shaped JPEG dataset (8 classes, 32x32).
dataset() { "$MAKE_TINY_IMAGENET" "$1" 8 48 8 32 >/dev/null; }

# train NAME ARGS...: runs ddp-train in the foreground; output in NAME.out,
# exit code in $code.
train() {
  local name=$1
  shift
  set +e
  "$DDP_TRAIN" "$@" >"$T/$name.out" 2>&1
  code=$?
  set -e
}

# start NAME ARGS...: runs ddp-train in the background; its pid in $pid.
start() {
  local name=$1
  shift
  "$DDP_TRAIN" "$@" >"$T/$name.out" 2>&1 &
  # shellcheck disable=SC2034  # read by the tests
  pid=$!
}

# finish PID [SECONDS]: waits for PID (at most SECONDS, default 120); its exit
# code in $code.
finish() {
  local p=$1 limit=${2:-120} waited=0
  while kill -0 "$p" 2>/dev/null; do
    [ "$waited" -lt $((limit * 10)) ] || fail "pid $p still running after $limit s"
    sleep 0.1
    waited=$((waited + 1))
  done
  set +e
  wait "$p"
  code=$?
  set -e
}

expect_code() { [ "$code" -eq "$1" ] || fail "exit code $code, expected $1; output:"$'\n'"$(cat "$T/$2.out")"; }
expect_in() { grep -qF -- "$2" "$T/$1.out" || fail "$1.out lacks: $2"$'\n'"it was:"$'\n'"$(cat "$T/$1.out")"; }

# epoch_line NAME N: the "Epoch [N/..." line of NAME.out without its throughput;
# empty (not a failure under pipefail) when there is none.
epoch_line() { { grep "^Epoch \[$2/" "$T/$1.out" || true; } | sed 's/ | Throughput:.*//'; }

# wait_progress FILE EPOCH STEP: until the progress file says training at
# EPOCH, step >= STEP (at most 120 s).
wait_progress() {
  local file=$1 epoch=$2 step=$3 content deadline=$((SECONDS + 120))
  local re='"phase": "training", "epoch": ([0-9]+), "epochs": [0-9]+, "step": ([0-9]+),'
  while [ "$SECONDS" -lt "$deadline" ]; do
    content=$(cat "$file" 2>/dev/null || true)
    if [[ $content =~ $re ]] && [ "${BASH_REMATCH[1]}" -eq "$epoch" ] && [ "${BASH_REMATCH[2]}" -ge "$step" ]; then
      return 0
    fi
    sleep 0.05
  done
  fail "progress did not reach epoch $epoch step $step within 120 s: $(cat "$file" 2>/dev/null)"
}
