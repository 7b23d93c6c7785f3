#!/usr/bin/env bash
# Who hung it, and how long naming it takes (docs/running.md "Who hung the
# job"), each way of taking the stacks against the baseline gdb (what the
# nodes of the issue's first user had), all measured in this one run:
#  1. One host, RANKS (default 4) ranks of tests/slurm/data/multinode.py
#     (CPU, Gloo; rank 1 asleep at epoch 1, the others waiting in backward),
#     started with ddpctl's sitecustomize first on PYTHONPATH. REPS (default
#     3) times each, the median: the wall time and the CPU (user + system,
#     the dumper and its children) to have every rank's stacks:
#       faulthandler   `ddpctl job stacks`, gdb and py-spy not on PATH
#       gdb (baseline) `gdb -p PID -batch -nx -ex 'thread apply all bt'` on
#                      every rank at once, as the agent runs it
#       both           `ddpctl job stacks` with gdb on PATH (faulthandler,
#                      then gdb on every rank), what a node with gdb does
#  2. The real local Slurm (SLURM, default 22.05): multinode.py under
#     torchrun, 2 nodes x 2 ranks, `watchdog: {stall_after: 20s, action:
#     cancel}`, `monitor: {interval: 2s}`, REPS times each way (faulthandler
#     alone: fakes that say "not found" first on PATH; both: the nodes'
#     gdb). From the stall being detectable (the last progress + stall_after)
#     to the stall record naming the culprit (its file polled every 0.1 s),
#     split into the detection (the record's detected_at) and the stacks.
# Needs: a built ddpctl in build/ (or DDPCTL), python3-torch and gdb on the
# host; for 2, scripts/local-slurm up. As root, under the cluster's lock:
#   flock /tmp/ddpctl-slurm-22.05.lock bench/culprit.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
DDPCTL=${DDPCTL:-$root/build/src/ddpctl}
SLURM=${SLURM:-22.05}
RANKS=${RANKS:-4}
REPS=${REPS:-3}
L="$root/scripts/local-slurm"
program=$root/tests/slurm/data/multinode.py
[ -x "$DDPCTL" ] || { echo "bench: $DDPCTL not built (scripts/build)" >&2; exit 1; }
/usr/bin/python3 -c 'import torch' 2>/dev/null || { echo "bench: python3-torch is needed" >&2; exit 1; }
gdb=$(command -v gdb) || { echo "bench: gdb is needed" >&2; exit 1; }
work=$(mktemp -d /tmp/ddpctl-bench-culprit.XXXXXX)
pids=()
cleanup() {
  [ "${#pids[@]}" -eq 0 ] || kill "${pids[@]}" 2>/dev/null || true
  "$L" --slurm "$SLURM" exec -- scancel --name=bench-culprit >/dev/null 2>&1 || true
}
trap cleanup EXIT
cd "$work"
median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
# ratio A B: A / B, "1" for the baseline itself (A is B).
ratio() { awk -v a="$1" -v b="$2" -v base="${3:-}" 'BEGIN { if (base == "base") print 1; else printf "%.2f×", (b > 0 ? a / b : 0) }'; }

# 1. One host: the ranks, then each way of taking their stacks.
hook=$("$DDPCTL" job python-hook --log-base "$work/bench")
mkdir -p nobin bin
for tool in gdb py-spy; do printf '#!/bin/sh\nexit 127\n' >"nobin/$tool" && chmod +x "nobin/$tool"; done
ln -s "$gdb" bin/gdb
port=$((29500 + RANDOM % 400))
for r in $(seq 0 $((RANKS - 1))); do
  env SLURM_JOB_ID=bench-culprit SLURMD_NODENAME=h1 SLURM_PROCID="$r" RANK="$r" LOCAL_RANK="$r" WORLD_SIZE="$RANKS" \
    MASTER_ADDR=127.0.0.1 MASTER_PORT=$port USE_LIBUV=0 OMP_NUM_THREADS=1 DDPCTL_TRAINING=1 PYTHONPATH="$hook" \
    /usr/bin/python3 "$program" 1000 1000 >"rank$r.out" 2>&1 &
  pids+=($!)
done
deadline=$((SECONDS + 300))
until grep -q "Epoch 1" rank1.out 2>/dev/null && [ "$(cat rank*.out | grep -c "Epoch 1")" -ge "$RANKS" ]; do
  [ "$SECONDS" -lt "$deadline" ] || { echo "bench: the ranks did not reach epoch 1: $(cat rank*.out)" >&2; exit 1; }
  sleep 0.5
done
# timed WHAT CMD...: "wall cpu" of CMD (its children's CPU included).
timed() {
  local what=$1
  shift
  /usr/bin/time -o "$work/time" -f "%e %U %S" "$@" >/dev/null 2>"$work/$what.err" ||
    { echo "bench: $what failed: $(cat "$work/$what.err")" >&2; exit 1; }
  awk '{ printf "%s %.2f\n", $1, $2 + $3 }' "$work/time"
}
gdb_all() {
  local p
  for p in "${pids[@]}"; do "$gdb" -p "$p" -batch -nx -ex 'thread apply all bt' >"gdb.$p" 2>&1 & done
  wait
}
for way in faulthandler gdb both; do
  : >"$way.times"
  for _ in $(seq "$REPS"); do
    case "$way" in
      faulthandler) timed "$way" env PATH="$work/nobin:$PATH" SLURM_JOB_ID=bench-culprit SLURMD_NODENAME=h1 \
        "$DDPCTL" job stacks --log-base "$work/bench" >>"$way.times" ;;
      gdb) timed "$way" bash -c "$(declare -f gdb_all); gdb=$gdb; pids=(${pids[*]}); gdb_all" >>"$way.times" ;;
      both) timed "$way" env PATH="$work/bin:$PATH" SLURM_JOB_ID=bench-culprit SLURMD_NODENAME=h1 \
        "$DDPCTL" job stacks --log-base "$work/bench" >>"$way.times" ;;
    esac
  done
done
# Each way found what it should: faulthandler every rank's frames, gdb DDP's Reducer.
stacks=$work/bench.restart0.stacks.h1.txt
[ "$(grep -c 'faulthandler (signal' "$stacks")" -ge "$RANKS" ] || { echo "bench: not every rank answered: $(cat "$stacks")" >&2; exit 1; }
grep -q 'c10d::Reducer::finalize_backward' gdb.* || { echo "bench: gdb saw no rank in DDP's backward" >&2; exit 1; }
kill "${pids[@]}" 2>/dev/null || true
pids=()
base_wall=$(cut -d' ' -f1 gdb.times | median)
base_cpu=$(cut -d' ' -f2 gdb.times | median)
echo "Every rank's stacks, $RANKS ranks of multinode.py on one host (median of $REPS):"
echo
echo "| way | wall | per rank (wall / ranks) | CPU | ratio (wall) |"
echo "|---|---:|---:|---:|---:|"
for way in faulthandler gdb both; do
  wall=$(cut -d' ' -f1 "$way.times" | median)
  cpu=$(cut -d' ' -f2 "$way.times" | median)
  label=$way
  [ "$way" = gdb ] && label="gdb (baseline)"
  [ "$way" = both ] && label="faulthandler, then gdb"
  base=""
  [ "$way" != gdb ] || base=base
  echo "| $label | $wall s | $(awk -v w="$wall" -v n="$RANKS" 'BEGIN { printf "%.2f s", w / n }') | $cpu s | $(ratio "$wall" "$base_wall" "$base") |"
done
echo "(CPU of the baseline: $base_cpu s)"

# 2. On the cluster: from a detectable stall to the named culprit.
"$L" --slurm "$SLURM" exec -- scontrol ping >/dev/null 2>&1 || { echo "bench: Slurm $SLURM is not up" >&2; exit 1; }
export DDPCTL_RUNS="$work/runs"
# shellcheck disable=SC2016  # expanded when the fakes run
for tool in gdb py-spy; do printf '#!/bin/sh\necho "${0##*/}: not found" >&2\nexit 127\n' >"nobin/$tool"; done
cat >job.yaml <<YAML
name: bench-culprit
cluster: local
time: "00:05:00"
partition: cpu
nodes: 2
gpus_per_node: 0
procs_per_node: 2
command: >-
  /usr/bin/python3 -m torch.distributed.run --nnodes="\$NNODES" --node_rank="\$NODE_RANK"
  --nproc_per_node="\$NPROC_PER_NODE" --master_addr="\$MASTER_ADDR" --master_port="\$MASTER_PORT"
  --redirects 2 --tee 2 --monitor_interval 1 $program 1000 1000
progress: {pattern: 'Epoch (?P<epoch>\d+) \| Batchsize', epochs: 1000}
monitor: {interval: 2s}
watchdog: {stall_after: 20s, action: cancel}
YAML
# One job: "detection stacks total stacks_by" once its record names a culprit.
one_job() {
  local path=$1 out id record named
  out=$(env PATH="$path" "$L" --slurm "$SLURM" exec -- "$DDPCTL" submit job.yaml --again 2>&1) ||
    { echo "bench: submit failed: $out" >&2; exit 1; }
  id=$(sed -n 's/^submitted job \([0-9]*\) .*/\1/p' <<<"$out")
  record=logs/bench-culprit_$id.stall.json
  local deadline=$((SECONDS + 240))
  while :; do
    named=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(r["culprit"] and "yes" or "")' "$record" 2>/dev/null || true)
    [ -n "$named" ] && break
    [ "$SECONDS" -lt "$deadline" ] || { echo "bench: job $id named no culprit" >&2; exit 1; }
    sleep 0.1
  done
  local t
  t=$(date +%s.%N)
  python3 - "$record" "$t" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
t = float(sys.argv[2])
detectable = r["since"] + r["stall_after_s"]
if not r["culprit_named"] or not r["culprit"].startswith("rank 1 "):
    sys.exit("bench: the culprit is not rank 1: " + r["culprit"])
print(f'{r["detected_at"] - detectable:.2f} {t - r["detected_at"]:.2f} {t - detectable:.2f} {r["stacks_by"].split(":")[0].replace(" ", "_")}')
PY
  "$L" --slurm "$SLURM" exec -- scancel "$id" >/dev/null 2>&1 || true
}
: >slurm.faulthandler
: >slurm.both
for _ in $(seq "$REPS"); do
  one_job "$work/nobin:$PATH" >>slurm.faulthandler
  one_job "$PATH" >>slurm.both
done
echo
echo "From a detectable stall (the last progress + stall_after) to the record naming the culprit, Slurm $SLURM, 2 nodes × 2 ranks (median of $REPS):"
echo
echo "| nodes | stacks taken by | detection | stacks and decision | stall → named culprit | ratio |"
echo "|---|---|---:|---:|---:|---:|"
base_total=$(cut -d' ' -f3 slurm.both | median)
for way in both faulthandler; do
  how=$(cut -d' ' -f4 "slurm.$way" | sort -u | tr '_\n' ' ' | sed 's/ $//')
  label="no gdb or py-spy"
  [ "$way" = both ] && label="gdb (baseline)"
  total=$(cut -d' ' -f3 "slurm.$way" | median)
  base=""
  [ "$way" != both ] || base=base
  echo "| $label | $how | $(cut -d' ' -f1 "slurm.$way" | median) s | $(cut -d' ' -f2 "slurm.$way" | median) s | $total s | $(ratio "$total" "$base_total" "$base") |"
done
