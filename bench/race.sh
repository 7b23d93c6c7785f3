#!/usr/bin/env bash
# Hybrid-mode race on the real local Slurm cluster (scripts/local-slurm up):
#   1. latency: shape A blocked (its partition full), shape B free; prints the
#      time from B's claim of the group to A's cancellation (target < 1 s);
#   2. safety: RACES (default 50) races with both shapes released at the same
#      moment; prints the races, double trainings and empty groups (target 0, 0);
#   3. re-races: ROUNDS (default 20) times the training winner is requeued or
#      its node fails mid-training (bench/race_requeue.sh, with ddp-train):
#      double trainings, empty generations, samples seen once per epoch, and
#      the time from the failure to training again (p50/max).
# 1 and 2 are the end-to-end tests of tests/slurm run with bench settings.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
export DDPCTL=${DDPCTL:-$root/build/src/ddpctl} DDPCTL_SOURCE=$root
[ -x "$DDPCTL" ] || { echo "bench: $DDPCTL not built (scripts/build)" >&2; exit 1; }
"$root/scripts/local-slurm" status >/dev/null 2>&1 || { echo "bench: start the cluster: scripts/local-slurm up" >&2; exit 1; }
bash "$root/tests/slurm/test_race_blocked_shape_loses.sh" | grep "race latency"
RACES=${RACES:-50} bash "$root/tests/slurm/test_race_both_free_one_trains.sh" | grep "^races:"
bash "$root/bench/race_requeue.sh" | grep -E "^(round|re-races|samples|time from)"
