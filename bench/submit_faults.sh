#!/usr/bin/env bash
# Concurrent submits under faults, on the real local Slurm cluster
# (scripts/local-slurm up; --slurm 24.11 with DDPCTL_SLURM_STATE set):
# for each kill point, REPS (default 5) repetitions of N (default 8) ddpctls
# submitting one fresh spec at once, where the first sbatch of the
# repetition is hit by the fault and its ddpctl is killed (SIGKILL):
#   before   killed while its sbatch has not reached the controller yet
#   during   killed while a slow sbatch waits after making the job
#   after    killed after sbatch made the job, before the outcome was recorded
#   none     no fault: N plain concurrent submits
# then one more submit settles what the killed one left. Printed per kill
# point: runs intended (one per repetition), jobs Slurm made (must be
# equal), and the p50/p99 time a submit waited on the run's lock.
# shellcheck disable=SC2016  # the fakes' bodies expand when they run
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
DDPCTL=${DDPCTL:-$root/build/src/ddpctl}
[ -x "$DDPCTL" ] || { echo "bench: $DDPCTL not built (scripts/build)" >&2; exit 1; }
ls="$root/scripts/local-slurm"
"$ls" status >/dev/null 2>&1 || { echo "bench: start the cluster: scripts/local-slurm up" >&2; exit 1; }
N=${N:-8} REPS=${REPS:-5}
work=$(mktemp -d /tmp/ddpctl-bench-faults.XXXXXX)
names=()
cancel_all() { [ "${#names[@]}" -eq 0 ] || "$ls" exec -- scancel --name="$(IFS=,; echo "${names[*]}")" >/dev/null 2>&1 || true; }
trap 'cancel_all; rm -rf "$work"' EXIT
cd "$work"
export DDPCTL_RUNS="$work/runs" DDPCTL_TIMINGS=1 DDPCTL_POLL_INTERVAL=0.5
real_sbatch=$("$ls" exec -- sh -c 'command -v sbatch')

# The fault, only for the first sbatch of a repetition ($DDPCTL_BENCH_REP/first).
make_fake() {
  local point=$1 fault
  case "$point" in
    before) fault='kill -KILL "$PPID"; exit 0' ;;                                 # dies as its sbatch starts
    during) fault='( sleep 1; kill -KILL "$PPID" ) & sleep 10; exec "$REAL" "$@"' ;;  # sbatch not at the controller yet
    after) fault='"$REAL" "$@"; kill -KILL "$PPID"; exit 0' ;;                     # job made, outcome not recorded
    none) fault=':' ;;
  esac
  mkdir -p "$work/fakebin"
  printf '#!/bin/bash\nREAL=%q\nif mkdir "$DDPCTL_BENCH_REP/first" 2>/dev/null; then\n  %s\nfi\nexec "$REAL" "$@"\n' \
    "$real_sbatch" "$fault" >"$work/fakebin/sbatch"
  chmod +x "$work/fakebin/sbatch"
}

printf '%-8s %5s %9s %12s %10s %14s %14s\n' KILL REPS SUBMITS RUNS_INTENDED JOBS_MADE LOCK_WAIT_P50 LOCK_WAIT_P99
for point in none before during after; do
  make_fake "$point"
  waits=()
  jobs_made=0
  for rep in $(seq "$REPS"); do
    dir="$work/$point-$rep"
    mkdir -p "$dir"
    export DDPCTL_BENCH_REP="$dir"
    cat >"$dir/job.yaml" <<YAML
name: bench-faults-$point-$rep
cluster: local
partition: cpu
gpus_per_node: 0
procs_per_node: 1
time: "00:05:00"
output_dir: $dir/logs
command: "sleep 300"
YAML
    pids=()
    for i in $(seq "$N"); do
      PATH="$work/fakebin:$PATH" "$ls" exec -- "$DDPCTL" submit "$dir/job.yaml" >"$dir/out.$i" 2>"$dir/err.$i" &
      pids+=($!)
    done
    for p in "${pids[@]}"; do wait "$p" || true; done
    # The settling submit, without the fault.
    "$ls" exec -- "$DDPCTL" submit "$dir/job.yaml" >"$dir/out.settle" 2>"$dir/err.settle" || true
    while read -r w; do waits+=("$w"); done < <(sed -n 's/^ddpctl: timing: lock_wait_s //p' "$dir"/err.*)
    names+=("bench-faults-$point-$rep")
  done
  # A killed ddpctl's sbatch that survived would submit after its slow
  # window (10 s): count once it has surely passed.
  sleep 12
  for rep in $(seq "$REPS"); do
    made=$("$ls" exec -- squeue -h -t all -n "bench-faults-$point-$rep" -o %i | wc -l)
    jobs_made=$((jobs_made + made))
  done
  cancel_all
  stats=$(printf '%s\n' "${waits[@]}" | sort -g | awk '{ v[NR] = $1 } END {
    p50 = v[int((NR - 1) * 0.50) + 1]; p99 = v[int((NR - 1) * 0.99) + 1];
    printf "%.3fs %.3fs", p50, p99 }')
  # shellcheck disable=SC2086  # two words, the two percentiles
  printf '%-8s %5d %9d %12d %10d %14s %14s\n' "$point" "$REPS" $((REPS * (N + 1))) "$REPS" "$jobs_made" ${stats}
done
