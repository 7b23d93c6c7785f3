#!/usr/bin/env bash
# Records the Flight Recorder dumps of README.md: fr_hang.py's ranks run in
# the Debian forky chroot (python3-torch 2.14, `scripts/trainer-libtorch2
# root`), with ddpctl's sitecustomize first on PYTHONPATH; once the hung rank
# is there, `ddpctl job stacks` (the agent's own path, on a fake job) asks
# every rank through its pipe, and the dumps are copied here.
#   tests/unit/data/flight_recorder/record.sh DDPCTL CHROOT
set -euo pipefail
ddpctl=$(realpath "$1")
root=$(realpath "$2")
here=$(cd "$(dirname "$0")" && pwd)
work=/tmp/ddpctl-fr-record
rm -rf "${root:?}$work"
mkdir -p "$root$work"
cp "$here/fr_hang.py" "$root$work/"
hook=$("$ddpctl" job python-hook --log-base "$root$work/job")
cp -r "$hook" "$root$work/hook"

# record NAME CASE WORLD HANG_RANK PORT
record() {
  local name=$1 case=$2 world=$3 hang=$4 port=$5 pids=() r
  local run=$work/$name
  mkdir -p "$root$run"
  for ((r = 0; r < world; r++)); do
    env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/tmp USE_LIBUV=0 MASTER_ADDR=127.0.0.1 MASTER_PORT="$port" WORLD_SIZE="$world" \
      RANK="$r" FR_CASE="$case" FR_HANG_RANK="$hang" FR_READY="$run/ready" PYTHONPATH="$work/hook" \
      SLURM_JOB_ID=fr-record SLURMD_NODENAME=n1 DDPCTL_TRAINING=1 \
      TORCH_FR_BUFFER_SIZE=2000 TORCH_FR_DUMP_TEMP_FILE="$run/rank_" TORCH_NCCL_DEBUG_INFO_PIPE_FILE="$run/pipe_" \
      chroot "$root" python3 "$work/fr_hang.py" >"$root$run/rank$r.log" 2>&1 &
    pids+=($!)
  done
  local deadline=$((SECONDS + 120))
  until [ -e "$root$run/ready" ] && [ "$(find "$root$run" -name 'pipe_*.pipe' | wc -l)" = "$world" ]; do
    [ "$SECONDS" -lt "$deadline" ] || { echo "record: $name never got there: $(cat "$root$run"/rank*.log)" >&2; kill "${pids[@]}"; return 1; }
    sleep 0.5
  done
  sleep 3  # the others reach the collective the hung rank does not
  env SLURM_JOB_ID=fr-record SLURMD_NODENAME=n1 TORCH_NCCL_DEBUG_INFO_PIPE_FILE="$root$run/pipe_" \
    "$ddpctl" job stacks --log-base "$root$run/job" >/dev/null
  deadline=$((SECONDS + 60))
  until [ "$(find "$root$run" -name 'rank_[0-9]*' ! -name '*.part*' | wc -l)" = "$world" ]; do
    [ "$SECONDS" -lt "$deadline" ] || { echo "record: $name: not every rank dumped" >&2; kill "${pids[@]}"; return 1; }
    sleep 0.5
  done
  kill "${pids[@]}"
  wait "${pids[@]}" 2>/dev/null || true
  mkdir -p "$here/$name"
  for ((r = 0; r < world; r++)); do cp "$root$run/rank_$r" "$here/$name/rank_$r"; done
  echo "record: $name: $(cd "$here/$name" && printf '%s ' *)"
}
record gloo-2ranks-rank1-sleeps sleep 2 1 29711
record gloo-4ranks-rank3-sleeps sleep 4 3 29712
record gloo-2ranks-rank1-broadcasts mismatch 2 1 29713
