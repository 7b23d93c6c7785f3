#!/usr/bin/env bash
# How the requeued-array fixtures in this folder were captured: on a local
# cluster (scripts/local-slurm [--slurm V] up), an array of two tasks that
# run until told to stop. Task 1 runs under the array's own job id (Slurm
# keeps the array's record for its last task); it is requeued with
# `scontrol requeue <id>_1` and started again, then task 0 likewise, a few
# seconds later. Into OUT/<version>/array-requeued-*:
#
#   running   both tasks on their second attempt: squeue --json (-squeue.json,
#             trimmed to the array's records as capture-array.sh does), and
#             sacct -X -P --duplicates as ddpctl asks it, of the array's id
#             (-sacct-duplicates.txt: EVERY task's records, in the order they
#             were submitted, task 0's second attempt last) and of task 1 as
#             <id>_1 (-sacct-task1.txt: its own two)
#   ended     both stopped (COMPLETED): sacct -X -P with and without
#             --duplicates of the array's id (-ended-sacct-duplicates.txt,
#             -ended-sacct.txt)
#
# Run it under the version's lock:
#
#   flock /tmp/ddpctl-slurm-22.05.lock tests/unit/data/capture-array-requeue.sh 22.05 [OUT]
#
# The format string below must stay src/slurm/slurm.cpp's kSacctFormat;
# test_status.cpp reads the files.
set -euo pipefail
version=${1:?usage: capture-array-requeue.sh VERSION [OUT]}
here=$(cd "$(dirname "$0")" && pwd)
out=${2:-$here}/$version
mkdir -p "$out"
ls="$here/../../../scripts/local-slurm"
work=$(mktemp -d /tmp/ddpctl-capture-requeue.XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$work"
s() { "$ls" --slurm "$version" exec -- "$@"; }
sf() { s env SLURM_BITSTR_LEN=0 "$@"; }
sacct_format=JobID,JobName,Comment,State,Reason,Partition,Account,NodeList,Submit,Start,End,TimelimitRaw,NNodes,AllocTRES,ReqTRES,ExitCode,WorkDir,JobIDRaw
trim_json() {
  python3 -c '
import json, sys
doc = json.load(sys.stdin)
def number(v):
    return v.get("number") if isinstance(v, dict) else v
doc["jobs"] = [j for j in doc["jobs"] if str(number(j.get("array_job_id"))) == sys.argv[1]]
json.dump(doc, sys.stdout, indent=2)
print()' "$1"
}
# state TASK: "<state> <restarts>" of array task TASK (<id>_<idx>).
state() { s scontrol show job "$1" | tr ' ' '\n' | sed -n 's/^JobState=//p; s/^Restarts=//p' | tr '\n' ' '; }
# wait_state TASK WANT: polls (a minute at most) until state TASK is WANT.
wait_state() {
  for _ in $(seq 300); do
    [ "$(state "$1")" = "$2" ] && return 0
    sleep 0.2
  done
  echo "task $1 did not reach '$2': $(state "$1")" >&2
  exit 1
}
# requeue TASK: requeues a running task and starts it again at once (it
# would wait for its BeginTime), once slurmd will take it (a second later).
requeue() {
  s scontrol requeue "$1"
  wait_state "$1" "PENDING 1 "
  sleep 2
  s scontrol update JobId="$1" StartTime=now
  wait_state "$1" "RUNNING 1 "
}
# accounted ID N: waits until sacct --duplicates has N records of ID, none running when $3 is "ended".
accounted() {
  for _ in $(seq 300); do
    local records
    records=$(sf sacct -X -n -P --duplicates -o State --jobs="$1" --starttime=1970-01-01)
    if [ "$(wc -l <<<"$records")" = "$2" ]; then
      [ "${3:-}" != ended ] || ! grep -qv -e COMPLETED -e REQUEUED <<<"$records" && return 0
    fi
    sleep 0.2
  done
  echo "sacct did not show $2 records of $1: $records" >&2
  exit 1
}

cat >"$work/task.sh" <<EOF
#!/bin/bash
echo "task \$SLURM_ARRAY_TASK_ID of \$SLURM_ARRAY_JOB_ID is job \$SLURM_JOB_ID, restart \${SLURM_RESTART_COUNT:-0}"
while [ ! -e $work/stop ]; do sleep 0.2; done
EOF
id=$(s sbatch --parsable --requeue --array=0-1 -p cpu -N 1 -n 1 -J cap-array-requeue --comment=ddpctl:tokrequeue -t 5 \
  -o "$work/%A_%a.out" "$work/task.sh")
wait_state "${id}_0" "RUNNING 0 "
wait_state "${id}_1" "RUNNING 0 "
[ "$(s squeue -h -j "${id}_1" -o %A)" = "$id" ] || echo "note: task 1 does not run under the array's id $id" >&2
requeue "${id}_1"
sleep 2  # task 0's second attempt is submitted a second or more after task 1's
requeue "${id}_0"
accounted "$id" 4
sf squeue --json --states=all --jobs="$id" | trim_json "$id" >"$out/array-requeued-squeue.json"
sf sacct -X -n -P --duplicates -o "$sacct_format" --jobs="$id" --starttime=1970-01-01 >"$out/array-requeued-sacct-duplicates.txt"
sf sacct -X -n -P --duplicates -o "$sacct_format" --jobs="${id}_1" --starttime=1970-01-01 >"$out/array-requeued-sacct-task1.txt"
touch "$work/stop"
accounted "$id" 4 ended
sf sacct -X -n -P --duplicates -o "$sacct_format" --jobs="$id" --starttime=1970-01-01 >"$out/array-requeued-ended-sacct-duplicates.txt"
sf sacct -X -n -P -o "$sacct_format" --jobs="$id" --starttime=1970-01-01 >"$out/array-requeued-ended-sacct.txt"
echo "$version: requeued array $id"
