#!/usr/bin/env bash
# A lost node, with the bundled trainer on the real local Slurm cluster and
# the queue empty: the time from the node's crash (`local-slurm node crash`
# of rank 1's node, not the batch host) to training again (a new trainer
# process's first step, from --trace-samples), restarting inside the
# allocation against the requeue:
#   in-job   restart: {in_job: 1, spares: 1} (the job holds a spare node)
#   requeue  requeue: {max_restarts: 1}: Slurm requeues the job whose node
#            failed, and it starts again from the queue (the baseline).
# Both resume from the checkpoint. REPS (default 2) crashes each. The
# requeue figure is a lower bound: a real site's queue adds its wait for a
# multi-node shape (hours at a busy site). Also printed: sacct's attempts of
# each job (the in-job restart never leaves the queue).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
export DDPCTL=${DDPCTL:-$root/build/src/ddpctl} DDPCTL_SOURCE=$root
DDP_TRAIN=${DDP_TRAIN:-$root/build/trainer/ddp-train}
[ -x "$DDP_TRAIN" ] || { echo "bench: $DDP_TRAIN not built (scripts/build)" >&2; exit 1; }
reps=${REPS:-2}
# shellcheck source=tests/slurm/lib.sh
source "$root/tests/slurm/lib.sh"

trace_files() { find "$1" -type f -size +0 | sort; }
# wait_training DIR SEEN: until a trace file of DIR not in SEEN has a step.
wait_training() {
  local dir=$1 seen=$2 deadline=$((SECONDS + 400)) f
  while :; do
    for f in $(trace_files "$dir"); do grep -qxF "$f" <<<"$seen" || return 0; done
    [ "$SECONDS" -lt "$deadline" ] || fail "no training again within 400 s$(jobs_report)"
    sleep 0.2
  done
}

declare -A results
for mode in in-job requeue; do
  for rep in $(seq "$reps"); do
    JOB_NAME=bench-restart-$mode-$rep
    trace=$T/trace-$mode-$rep
    mkdir -p "$trace"
    case $mode in
      in-job) section='restart: {in_job: 1, spares: 1}' ;;
      requeue) section='requeue: {max_restarts: 1, grace: 60}' ;;
    esac
    write_spec "job-$mode-$rep.yaml" <<YAML
partition: cpu
nodes: 2
gpus_per_node: 0
procs_per_node: 1
cpus_per_task: 1
mem: 1G
$section
trainer:
  program: $DDP_TRAIN
  model: smallcnn
  data: synthetic
  epochs: 100
  batch_size: 8
  global_batch: 16
  workers: 0
  checkpoint_dir: $T/ck-$mode-$rep
  resume: true
  extra_args: [--synthetic-size, "2048", --image-size, "32", --no-val, --trace-samples, $trace/s]
YAML
    run submit "job-$mode-$rep.yaml" --no-preflight
    expect_code 0
    id=$(submitted_job_id)
    wait_training "$trace" ""
    sleep 1  # mid-training
    seen=$(trace_files "$trace")
    node=$(on_login scontrol show hostnames "$(on_login squeue -h -j "$id" -o %N)" | sed -n 2p)
    t0=$(date +%s.%N)
    "$LOCAL_SLURM" node crash "$node" >/dev/null
    at_exit "\"$LOCAL_SLURM\" node start $node >/dev/null"
    wait_training "$trace" "$seen"
    t1=$(date +%s.%N)
    "$LOCAL_SLURM" node start "$node" >/dev/null
    attempts=$(on_login sacct -n -X -P --duplicates -j "$id" -o State | tr '\n' ' ')
    on_login scancel "$id"
    secs=$(printf '%.1f' "$(echo "$t1 - $t0" | bc)")
    results[$mode]+="$secs "
    echo "$mode $rep: job $id, node $node crashed: training again after $secs s; sacct: $attempts"
    # The node back in service before the next round.
    deadline=$((SECONDS + 120))
    until on_login sinfo -h -n "$node" -o %t | grep -qE '^(idle|mix|alloc)'; do
      [ "$SECONDS" -lt "$deadline" ] || fail "node $node not back within 120 s: $(on_login sinfo -h -n "$node" -o '%t %E')"
      sleep 0.5
    done
  done
done
mean() { awk '{ s = 0; for (i = 1; i <= NF; i++) s += $i; printf "%.1f", s / NF }' <<<"$1"; }
in_job=$(mean "${results[in-job]}")
requeue=$(mean "${results[requeue]}")
echo "lost node to training again, mean of $reps: in-job restart ${in_job} s (${results[in-job]}), requeue ${requeue} s (${results[requeue]}; baseline)"
echo "ratio: the in-job restart takes $(echo "scale=2; $in_job / $requeue" | bc)x the requeue's time"
