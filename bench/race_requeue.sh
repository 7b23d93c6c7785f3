#!/usr/bin/env bash
# Re-racing under failures, with the bundled trainer on the real local Slurm
# cluster (bench/race.sh runs it): a race of a 2-node x 1 rank shape (cpu)
# and a 1-node x 1 rank shape (a100-80gb), trainer.global_batch 16, resumed
# from its checkpoint by whichever shape wins each generation. ROUNDS
# (default 20) times, mid-training, the winner is
#   - signalled as at its time limit (it checkpoints, re-races from inside
#     the job and requeues itself),          rounds 1, 3, 6, 8, ...
#   - requeued by `scontrol requeue` (the next `ddpctl status` re-races), or
#   - its first node crashes (every 5th round; status re-races once Slurm
#     has requeued the job, after SlurmdTimeout).
# Prints per round the time from the failure to training again, then: double
# trainings (overlapping training steps in sacct), empty generations (none
# trained), samples per epoch seen more than once or never, and p50/max of
# the time to training again.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
export DDPCTL=${DDPCTL:-$root/build/src/ddpctl} DDPCTL_SOURCE=$root
DDP_TRAIN=${DDP_TRAIN:-$root/build/trainer/ddp-train}
[ -x "$DDP_TRAIN" ] || { echo "bench: $DDP_TRAIN not built (scripts/build)" >&2; exit 1; }
rounds=${ROUNDS:-20}
# shellcheck source=tests/slurm/lib.sh
source "$root/tests/slurm/lib.sh"
JOB_NAME=bench-rerace
mkdir -p trace
write_spec job.yaml <<YAML
partition: cpu
nodes: 2
gpus_per_node: 0
procs_per_node: 1
cpus_per_task: 1
mem: 1G
requeue: {signal: USR1, grace: 60, max_restarts: $rounds}
trainer:
  program: $DDP_TRAIN
  model: smallcnn
  data: synthetic
  epochs: 100
  batch_size: 8
  global_batch: 16
  workers: 0
  checkpoint_dir: $T/ck
  resume: true
  extra_args: [--synthetic-size, "2048", --image-size, "32", --no-val, --trace-samples, $T/trace/s]
alternatives:
  - {partition: a100-80gb, nodes: 1, label: a100}
YAML
run submit job.yaml --no-preflight
expect_code 0
run_dir=$(only_run_dir)
run_id=$(basename "$run_dir")

generations() { local g=1; while [ -d "$run_dir/race/gen.$((g + 1))" ]; do g=$((g + 1)); done; echo "$g"; }
claim_of() { if [ "$1" -eq 1 ]; then echo "$run_dir/race/claim"; else echo "$run_dir/race/claim.$1"; fi; }
# trace_files: the trace files with at least one step in them.
trace_files() { find trace -type f -size +0 | sort; }
# wait_training_again SEEN: waits until a trace file not in SEEN has a step.
wait_training_again() {
  local seen=$1 deadline=$((SECONDS + 240)) f
  while :; do
    for f in $(trace_files); do
      grep -qxF "$f" <<<"$seen" || return 0
    done
    [ "$SECONDS" -lt "$deadline" ] || fail "no training again within 240 s: $(cat "$T/err" 2>/dev/null)$(jobs_report)"
    # What a user's status does: re-races a group whose winner Slurm requeued.
    run status "$run_id"
    sleep 0.3
  done
}

wait_training_again ""
times=()
crash_epochs=""
for i in $(seq "$rounds"); do
  g=$(generations)
  winner=$(cut -d' ' -f1 "$(claim_of "$g")/winner")
  # Mid-training: a step after the current trainer's first.
  sleep 1
  seen=$(trace_files)
  if [ $((i % 5)) -eq 0 ]; then
    how="node crash"
    node=$(on_login squeue -h -j "$winner" -o %N)
    node=$(on_login scontrol show hostnames "$node" | sed -n 1p)
    # The epoch it is in (or enters before the kill): its samples since the
    # last checkpoint are trained again.
    e=$(cat trace/* | awk '$1 > m { m = $1 } END { print m + 0 }')
    crash_epochs+=" $e $((e + 1))"
    t0=$(date +%s.%N)
    "$LOCAL_SLURM" node crash "$node" >/dev/null
    at_exit "\"$LOCAL_SLURM\" node start $node >/dev/null"
  elif [ $((i % 2)) -eq 1 ]; then
    how="time limit"
    t0=$(date +%s.%N)
    on_login scancel --batch --signal=USR1 "$winner"
  else
    how="scontrol requeue"
    t0=$(date +%s.%N)
    on_login scontrol requeue "$winner"
  fi
  wait_training_again "$seen"
  t1=$(date +%s.%N)
  [ "$how" != "node crash" ] || "$LOCAL_SLURM" node start "$node" >/dev/null
  secs=$(printf '%.1f' "$(echo "$t1 - $t0" | bc)")
  times+=("$secs")
  new_g=$(generations)
  echo "round $i ($how of job $winner, generation $g): training again after ${secs} s, generation $new_g won by $(cut -d' ' -f1,2 "$(claim_of "$new_g")/winner")"
done

# Double trainings: training steps (ID.0, every attempt) whose times overlap.
ids=$(cat "$run_dir"/race/jobs/* "$run_dir"/race/gen.*/jobs/* | sort -u | tr '\n' ,)
steps=$(on_login sacct -D -n -P -j "${ids%,}" -o JobID,Start,End --noconvert -S now-1day 2>/dev/null |
  awk -F'|' '$1 ~ /\.0$/ && $2 != "Unknown" { print }')
double=$(awk -F'|' '
  function t(s) { gsub(/[-T:]/, " ", s); return mktime(s) }
  { start[NR] = t($2); end[NR] = ($3 == "Unknown" ? 2^31 : t($3)); id[NR] = $1 }
  END { n = 0; for (i = 1; i <= NR; i++) for (j = i + 1; j <= NR; j++)
          if (start[i] < end[j] && start[j] < end[i]) { n++; print "overlap: " id[i] " " id[j] > "/dev/stderr" }
        print n }' <<<"$steps")
# Empty generations: no winner, or a winner whose training never started.
empty=0
for g in $(seq "$(generations)"); do
  w=$(cut -d' ' -f1 "$(claim_of "$g")/winner" 2>/dev/null || true)
  if [ -z "$w" ] || ! grep -q "^$w\.0|" <<<"$steps"; then empty=$((empty + 1)); echo "generation $g: no training (winner ${w:-none})"; fi
done
# Samples per epoch: in every epoch except the last (still running), each
# index of the epoch's order once. A node that crashed could write no
# checkpoint: its samples since the last one are trained again, counted
# apart (epochs in crash_epochs).
read -r twice retrained never epochs < <(cat trace/* | awk -v size=2048 -v micro=16 -v crashed="$crash_epochs" '
  BEGIN { n = split(crashed, ce, " "); for (k = 1; k <= n; k++) crash[ce[k]] = 1 }
  { e = $1; last = (e > last ? e : last); for (k = 2; k <= NF; k++) seen[e, $k]++ }
  END { twice = 0; retrained = 0; never = 0; n = 0
        for (e = 1; e < last; e++) { n++
          for (i = 0; i < size - size % micro; i++) {
            times = seen[e, i] + 0
            if (times > 1) { if (e in crash) retrained += times - 1; else twice += times - 1 }
            if (times == 0) never++ } }
        print twice, retrained, never, n }')
sorted=$(printf '%s\n' "${times[@]}" | sort -n)
p50=$(sed -n "$(((${#times[@]} + 1) / 2))p" <<<"$sorted")
max=$(tail -n 1 <<<"$sorted")
echo "re-races: $rounds, generations: $(generations), double trainings: $double, empty generations: $empty"
echo "samples over $epochs whole epochs: seen twice $twice, never seen $never; trained again after a lost node (since its last checkpoint): $retrained"
echo "time from the failure to training again: p50 ${p50} s, max ${max} s"
