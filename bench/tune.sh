#!/usr/bin/env bash
# ddpctl tune on the real local Slurm cluster (scripts/local-slurm up; the
# bundled trainer, so the 22.05 cluster, whose nodes run this build's
# ddp-train): 12 trials of 2-node CPU shapes (whole nodes, 2 ranks each,
# so 2 trials run at once; smallcnn, SYNTHETIC images an epoch; each
# trial checkpoints in its own ck/<study>-t<N>) on
# the 4 nodes of `scavenger`, 4 in flight, a median pruner, the same 12
# parameter sets in every study (enqueued; epochs 1-4, so trials differ in
# length). Three studies (bench/tune_study.py):
#   adaptive   ddpctl tune: the next trial asked as soon as one ends;
#   batch      the baseline: 4 asked, the 4 waited for, then the next 4
#              (Hydra's Optuna sweeper with the submitit launcher);
#   faults     ddpctl tune again, with 2 preemptions injected (an urgent
#              job takes every node; the trials requeue) and the study's
#              process killed twice (SIGKILL) and started again.
# Printed: node occupancy (busy node-seconds from sacct ÷ 4 nodes × the
# study's time) of each, the ratio adaptive ÷ batch; for each pruned trial
# the seconds from the pruner's decision to its job ended (ddpctl cancel
# returned); for faults, the PREEMPTED attempts sacct shows, every trial's
# state, and the runs against the trials (none lost, none twice).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
export DDPCTL=${DDPCTL:-$root/build/src/ddpctl} DDPCTL_SOURCE=$root
DDP_TRAIN=${DDP_TRAIN:-$root/build/trainer/ddp-train}
[ -x "$DDP_TRAIN" ] || { echo "bench: $DDP_TRAIN not built (scripts/build)" >&2; exit 1; }
SYNTHETIC=${SYNTHETIC:-8192}
# shellcheck source=tests/slurm/lib.sh
source "$root/tests/slurm/lib.sh"
JOB_NAME=bench-tune
write_spec job.yaml <<YAML
partition: scavenger
nodes: 2
gpus_per_node: 0
procs_per_node: 2
exclusive: true
time: "00:15:00"
requeue: {signal: USR1, grace: 20, max_restarts: 4}
trainer:
  program: $DDP_TRAIN
  model: smallcnn
  data: synthetic
  epochs: 1
  lr: 0.01
  batch_size: 16
  workers: 0
  checkpoint_dir: ck
  resume: true
  extra_args: [--synthetic-size, "$SYNTHETIC", --image-size, "32", --no-val]
YAML
study() {  # study MODE NAME [KILL_AFTER]: one process of the study, its lines appended to NAME.log
  on_login env PYTHONPATH="$root/python" DDPCTL="$DDPCTL" DDPCTL_RUNS="$T/runs" /usr/bin/python3 \
    "$root/bench/tune_study.py" "$1" "sqlite:///$T/$2.db" "$2" job.yaml ${3:+"$3"} >>"$T/$2.log" 2>>"$T/$2.err"
}
# occupancy NAME: busy node-seconds of the study's jobs (sacct, every
# attempt) ÷ (4 nodes × from its first line to its end).
occupancy() {
  local names t0 t1
  names=$(seq -s, -f "$1-t%g" 0 11)
  t0=$(awk 'NR == 1 { print $1 }' "$T/$1.log")
  t1=$(awk '$2 == "end" { t = $1 } END { print t }' "$T/$1.log")
  on_login sacct -a -D -X -n -P --name="$names" -S now-3hours -o JobID,Start,End,NNodes,State >"$T/$1.sacct"
  /usr/bin/python3 - "$T/$1.sacct" "$t0" "$t1" <<'PY'
import sys, datetime
rows, t0, t1 = open(sys.argv[1]).read().splitlines(), float(sys.argv[2]), float(sys.argv[3])
busy = 0.0
for r in rows:
    _, start, end, nodes, state = r.split("|")
    if start in ("Unknown", "None") or end in ("Unknown", "None"):
        continue
    s, e = (datetime.datetime.fromisoformat(x).timestamp() for x in (start, end))
    busy += max(0.0, min(e, t1) - max(s, t0)) * int(nodes)
print(f"{busy / (4 * (t1 - t0)):.3f} {t1 - t0:.0f} {busy:.0f}")
PY
}
prune_free() {  # prune_free NAME: seconds from each pruning decision to its run's end confirmed
  awk '$4 == "pruned" { d[$3] = $1 } $4 == "run" && $6 == "stopped;" && ($3 in d) { printf "%.1f ", $1 - d[$3] }' \
    "$T/$1.log"
}
states() { awk '$2 == "state" { print $4 }' "$T/$1.log" | sort | uniq -c | awk '{ printf "%s %s, ", $1, $2 }'; }

for mode in adaptive batch; do
  study "$mode" "$mode" || fail "bench: the $mode study failed: $(tail -n 20 "$T/$mode.err")"
done
read -r occ_a secs_a busy_a < <(occupancy adaptive)
read -r occ_b secs_b busy_b < <(occupancy batch)
echo "adaptive (ddpctl tune, 4 in flight): occupancy $occ_a over ${secs_a} s (${busy_a} busy node-s); $(states adaptive)pruned → nodes free: $(prune_free adaptive)s"
echo "batch of 4 (baseline):               occupancy $occ_b over ${secs_b} s (${busy_b} busy node-s); $(states batch)pruned → nodes free: $(prune_free batch)s"
awk -v a="$occ_a" -v b="$occ_b" -v sa="$secs_a" -v sb="$secs_b" \
  'BEGIN { printf "occupancy adaptive ÷ batch: %.2fx; study time adaptive ÷ batch: %.2fx\n", a / b, sa / sb }'

# faults: killed after trial 3's and trial 7's submissions, started again;
# an urgent job takes the nodes twice while trials run.
preempt_when_running() {  # preempt_when_running N: once N trials were submitted, while 2 trials' jobs run
  local deadline=$((SECONDS + 900)) running=0
  until [ "$(awk '$4 == "run" && substr($6, 1, 1) == "(" { n++ } END { print n + 0 }' "$T/faults.log" 2>/dev/null)" -ge "$1" ] &&
    [ "$running" -ge 2 ]; do
    [ "$SECONDS" -lt "$deadline" ] || { echo "bench: no 2 running trials to preempt" >&2; return 1; }
    sleep 1
    # Running for 3 s at least (trained some steps), so the preemption finds them still running.
    running=$(on_login squeue -h -p scavenger -t RUNNING -o %M | awk -F: '$NF + 60 * $(NF - 1) >= 3' | wc -l)
  done
  on_login sbatch --parsable -p urgent -N 4 --exclusive --chdir="$T" -o /dev/null -J "$JOB_NAME-urgent" --wrap 'sleep 5' >/dev/null
  echo "$(date +%s.%N) preempted $running running trials' jobs" >>"$T/faults.log"
}
( preempt_when_running 2 && preempt_when_running 8 ) &
injector=$!
study adaptive faults 4 && fail "bench: the study was not killed: $(tail "$T/faults.log")"
study adaptive faults 8 && fail "bench: the study was not killed twice: $(tail "$T/faults.log")"
study adaptive faults || fail "bench: the faults study failed: $(tail -n 20 "$T/faults.err")"
wait "$injector" || fail "bench: the preemptions were not injected"
read -r _ secs_f _ < <(occupancy faults)
# A preempted attempt: PREEMPTED, or REQUEUED where the job's script requeued
# itself on the preemption's SIGTERM (requeue:, docs/running.md).
preempted=$(awk -F'|' '$5 ~ /PREEMPTED|REQUEUED/' "$T/faults.sacct" | wc -l)
runs=$(awk '$2 == "state" { print $5 }' "$T/faults.log" | sort -u | wc -l)
folders=$(find "$T/runs" -maxdepth 2 -name ledger.json -path "*faults-t*" | wc -l)
echo "faults: $(grep -c " killed$" "$T/faults.log") kills, $preempted preempted attempts in sacct (PREEMPTED or REQUEUED); $(states faults)$runs runs for 12 trials, $folders run folders; ${secs_f} s in all"
failed=$(awk '$2 == "state" && $4 == "FAIL"' "$T/faults.log")
if [ -n "$failed" ]; then fail "bench: a trial FAILED: $(grep state "$T/faults.log")"; fi
[ "$preempted" -ge 2 ] || fail "bench: fewer than 2 preempted attempts: $(cat "$T/faults.sacct")"
[ "$(grep -c " preempted [1-9]" "$T/faults.log")" -eq 2 ] || fail "bench: 2 preemptions were not injected: $(grep preempted "$T/faults.log")"
if [ "$runs" -ne 12 ] || [ "$folders" -ne 12 ]; then
  fail "bench: trials and runs differ: $(grep state "$T/faults.log"); $(ls "$T/runs")"
fi
