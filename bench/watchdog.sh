#!/usr/bin/env bash
# The job agent's costs (docs/running.md), on the real local Slurm cluster:
#  1. the sampler's CPU per node: `ddpctl job sample` on a node of a running
#     4-rank job (THREADS threads a rank, default 32, as a torch process
#     has), every 5 s (the default), with a fake nvidia-smi on PATH (a
#     fork and exec per sample, as the real one), against the baseline the
#     site guides put in every job script: a shell loop running `ps` and
#     `nvidia-smi --query-gpu=... ` every 5 s. Both run side by side for
#     $SECONDS_SAMPLED seconds; their CPU time is read from /proc at the end.
#  2. the time from a stall to the job's end with `action: cancel`, REPS
#     times: the watchdog's record says when progress stopped, sacct when the
#     job ended (target: stall_after + at most 15 s).
# Needs: scripts/local-slurm up (22.05, or DDPCTL_SLURM_STATE for another),
# a built ddpctl in build/. Prints a Markdown table for bench/RESULTS.md.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
ddpctl=${DDPCTL:-$root/build/src/ddpctl}
L="$root/scripts/local-slurm"
REPS=${REPS:-3}
SECONDS_SAMPLED=${SECONDS_SAMPLED:-300}
work=$(mktemp -d /tmp/ddpctl-bench-watchdog.XXXXXX)
trap 'touch "$work/stop"; "$L" exec -- scancel --name=bench-watchdog-load --name=bench-watchdog-stall >/dev/null 2>&1 || true' EXIT
cd "$work"
export DDPCTL_RUNS="$work/runs"
mkdir -p fakebin
cat >fakebin/nvidia-smi <<'SH'
#!/bin/sh
printf '0, 97, 62000, 81920\n1, 95, 61000, 81920\n'
SH
chmod +x fakebin/nvidia-smi
export PATH="$work/fakebin:$PATH"
ticks=$(getconf CLK_TCK)
cpu_s() { awk -v t="$ticks" '{ c = $0; sub(/.*\) /, "", c); split(c, f, " "); printf "%.3f\n", (f[12] + f[13] + f[14] + f[15]) / t }' "/proc/$1/stat"; }

# 1. The sampler against the guides' shell loop, on one node of a 4-rank job.
# Each rank has THREADS threads, as a torch process has (intra-op, Gloo, data
# loading): the sampler reads every training thread's schedstat (wait_pct).
THREADS=${THREADS:-32}
cat >sleeper.py <<PY
import os, threading, time
stop = os.path.join(os.getcwd(), "stop")
def idle():
    while not os.path.exists(stop):
        time.sleep(0.5)
for _ in range($THREADS - 1):
    threading.Thread(target=idle, daemon=True).start()
idle()
PY
cat >load.yaml <<YAML
name: bench-watchdog-load
cluster: local
time: "00:30:00"
partition: cpu
nodes: 2
gpus_per_node: 0
procs_per_node: 2
launch: per-gpu
command: [python3, $work/sleeper.py]
YAML
"$L" exec -- "$ddpctl" submit load.yaml --wait >/dev/null
id=$("$L" exec -- squeue -h -n bench-watchdog-load -o %i)
sampler=""
for _ in $(seq 120); do
  sampler=$(pgrep -o -f "ddpctl job sample --log-base logs/bench-watchdog-load_$id" || true)
  [ -n "$sampler" ] && break
  sleep 0.5
done
[ -n "$sampler" ] || { echo "bench: no sampler found for job $id" >&2; exit 1; }
# The baseline: what the guides' job scripts run beside the training.
( while [ ! -e stop ]; do
    ps -o pid,pcpu,rss -u "$(id -u)" >/dev/null
    nvidia-smi --query-gpu=index,utilization.gpu,memory.used,memory.total --format=csv,noheader,nounits >/dev/null
    sleep 5
  done ) &
baseline=$!
s0=$(cpu_s "$sampler"); b0=$(cpu_s "$baseline")
sleep "$SECONDS_SAMPLED"
s1=$(cpu_s "$sampler"); b1=$(cpu_s "$baseline")
touch stop
samples=$(wc -l <"logs/bench-watchdog-load_$id.usage.g1.jsonl")
sampler_pct=$(awk -v a="$s0" -v b="$s1" -v t="$SECONDS_SAMPLED" 'BEGIN { printf "%.3f", 100 * (b - a) / t }')
# The loop's own CPU is its children's (ps, nvidia-smi): counted in cutime/cstime.
baseline_pct=$(awk -v a="$b0" -v b="$b1" -v t="$SECONDS_SAMPLED" 'BEGIN { printf "%.3f", 100 * (b - a) / t }')
echo "| sampler (\`ddpctl job sample\`, 5 s, fake nvidia-smi) | $sampler_pct% of a core | $(awk -v s="$sampler_pct" 'BEGIN { printf "%.1f", s * 36 }') s/h | $(awk -v s="$sampler_pct" -v b="$baseline_pct" 'BEGIN { printf "%.2f×", (b > 0 ? s / b : 0) }') |"
echo "| baseline (shell loop: ps + nvidia-smi every 5 s) | $baseline_pct% of a core | $(awk -v s="$baseline_pct" 'BEGIN { printf "%.1f", s * 36 }') s/h | 1 |"
echo "(${SECONDS_SAMPLED} s; $samples samples on g1; $THREADS threads a rank)"
rm -f stop

# 2. Stall to end with action: cancel.
cp "$root/tests/slurm/data/stalled_rank.py" .
cat >stall.yaml <<YAML
name: bench-watchdog-stall
cluster: local
time: "00:10:00"
partition: cpu
nodes: 2
gpus_per_node: 0
procs_per_node: 2
launch: per-gpu
command: [python3, $work/stalled_rank.py]
progress: {pattern: 'epoch (?P<epoch>\d+) step (?P<step>\d+)', epochs: 1000}
watchdog: {stall_after: 30s, action: cancel}
YAML
echo
echo "| rep | stall_after | interval | progress stopped → job ended |"
echo "|---:|---:|---:|---:|"
for rep in $(seq "$REPS"); do
  out=$("$L" exec -- "$ddpctl" submit stall.yaml --follow 2>&1 || true)
  id=$(sed -n 's/^submitted job \([0-9]*\) .*/\1/p' <<<"$out")
  since=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["since"])' "logs/bench-watchdog-stall_$id.stall.json")
  end=$("$L" exec -- sacct -n -X -P -j "$id" -o End)
  end_s=$(date -d "$end" +%s)
  echo "| $rep | 30 s | 5 s | $(awk -v a="$since" -v b="$end_s" 'BEGIN { printf "%.1f s", b - a }') |"
done
