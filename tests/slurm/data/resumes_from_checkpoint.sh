#!/bin/bash
# A training that resumes from its checkpoint (a step counter in the run's
# DDPCTL_CHECKPOINT_DIR), checkpoints and stops with 75 on TERM, and records
# in the folder it lies in (one file system for every test cluster):
#   trainings  "<who> <step it started at>", one line per training
#   progress   the step it reached, rewritten each step
#   finished   "<who> 300" once it reached its last step
#   double     a second training while one ran (a lock the training holds)
# <who> is "<the submit folder's name>:<job id>": the local clusters are all
# called "local", and a race across sites submits from one folder per site.
me="$(basename "$PWD"):$SLURM_JOB_ID" dir=$(dirname "$0")
if ! mkdir "$dir/training.lock" 2>/dev/null; then
  echo "$me started while $(cat "$dir/training.lock/owner") trained" >>"$dir/double"
  exit 1
fi
echo "$me" >"$dir/training.lock/owner"
ck=$DDPCTL_CHECKPOINT_DIR/step
step=$(cat "$ck" 2>/dev/null || echo 0)
echo "$me $step" >>"$dir/trainings"
stop() { echo "$step" >"$ck"; rm -rf "$dir/training.lock"; exit 75; }
trap stop TERM
while [ "$step" -lt 300 ]; do
  step=$((step + 1))
  echo "$step" >"$ck"
  echo "$step" >"$dir/progress"
  sleep 0.1 &
  wait $!
done
rm -rf "$dir/training.lock"
echo "$me $step" >>"$dir/finished"
