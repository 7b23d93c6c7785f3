#!/usr/bin/env bash
# The fabric check's time on the real local Slurm cluster (scripts/local-slurm
# up; issue 66: at most 10 s for 4 CPU nodes). TRIALS (default 5) times each:
#   healthy    a 4-node job of a plain program (`command: true`) with the
#              check on (the profile's cpu busbw_gbs, its fabric_check:
#              sized 1M as tests/trainer/slurm_fabric_check_names_slow_node.sh's):
#              the check's own time (its record's `seconds`) and the job's
#              elapsed time in sacct;
#   baseline   the same job with fabric_check: false: its elapsed time;
#   slow node  g3 sending at 40 Mbit/s (`local-slurm node slow-link`): the
#              check's time with its bisection (3 rounds) and whether it
#              named g3.
# Prints one line per trial and the medians.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
export DDPCTL=${DDPCTL:-$root/build/src/ddpctl} DDPCTL_SOURCE=$root
[ -x "$root/build/trainer/ddp-train" ] || { echo "bench: ddp-train not built (scripts/build)" >&2; exit 1; }
trials=${TRIALS:-5}
# shellcheck source=tests/slurm/lib.sh
source "$root/tests/slurm/lib.sh"
JOB_NAME=bench-fabric
mkdir -p "$T/clusters"
sed 's/^  cpu: *{nodes: 4, gpus_per_node: 0,/  cpu: {nodes: 4, busbw_gbs: 0.05, gpus_per_node: 0,/' \
  "$root/configs/clusters/local.yaml" >"$T/clusters/local.yaml"
echo "fabric_check: {size: 1M, iters: 3, timeout: 30s}" >>"$T/clusters/local.yaml"
export DDPCTL_CLUSTERS="$T/clusters"
write_spec job.yaml <<YAML
partition: cpu
nodes: 4
gpus_per_node: 0
procs_per_node: 1
command: "true"
YAML
# one CHECK STATE: submits the job (CHECK true or false), waits for it to
# end in STATE (a slow node with no spare and no requeue: FAILED); prints
# "<check seconds or -> <elapsed seconds> <excluded>".
one() {
  run submit job.yaml --set "fabric_check=$1" --wait
  [ "$code" -eq 0 ] || { echo "bench: submit failed: $(cat "$T/err")" >&2; exit 1; }
  local id rec elapsed
  id=$(submitted_job_id)
  wait_for_sacct "$id" "$2" 120
  elapsed=$(on_login sacct -n -X -P -j "$id" -o ElapsedRaw | sed -n 1p)
  rec="logs/${JOB_NAME}_$id.restart0.fabric.json"
  if [ -f "$rec" ]; then
    /usr/bin/python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(r["seconds"], sys.argv[2], ",".join(r["exclude"]) or "-")' "$rec" "$elapsed"
  else
    echo "- $elapsed -"
  fi
}
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
: >"$T/healthy"
: >"$T/baseline"
: >"$T/slow"
for ((i = 1; i <= trials; i++)); do
  one true COMPLETED >>"$T/healthy"
  one false COMPLETED >>"$T/baseline"
  echo "trial $i: healthy $(tail -n1 "$T/healthy"), baseline $(tail -n1 "$T/baseline")"
done
"$LOCAL_SLURM" node slow-link g3 40mbit >/dev/null
at_exit "'$LOCAL_SLURM' node fast-link g3"
for ((i = 1; i <= trials; i++)); do
  one true FAILED >>"$T/slow"
  echo "trial $i: slow node g3: $(tail -n1 "$T/slow")"
done
"$LOCAL_SLURM" node fast-link g3
echo "median check time, healthy 4 nodes: $(cut -d' ' -f1 "$T/healthy" | median) s (max $(cut -d' ' -f1 "$T/healthy" | sort -g | tail -n1))"
echo "median job elapsed: with the check $(cut -d' ' -f2 "$T/healthy" | median) s, without $(cut -d' ' -f2 "$T/baseline" | median) s"
echo "median check time, g3 slow (bisection): $(cut -d' ' -f1 "$T/slow" | median) s; named g3 in $(grep -c ' g3$' "$T/slow") of $trials"
