#!/usr/bin/env bash
# Slow, not hung: one node of a two-node job is throttled (a CPU quota on
# every process of the node, as a neighbour's busy loop would slow it).
# Its rank keeps the other waiting at every step; the watchdog names it from
# the usage samples (CPU time used or waited for), status shows it, and with
# exclude_slow the requeue at the time limit leaves its node out.
# One version: a user journey, not what differs between Slurm versions
# (docs/testing.md, "Which Slurm version runs what"):
# slurm versions: 24.11
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
"$LOCAL_SLURM" node throttle g2 5 >/dev/null
at_exit "'$LOCAL_SLURM' node unthrottle g2"
write_spec job.yaml <<YAML
partition: cpu
nodes: 2
gpus_per_node: 0
procs_per_node: 1
launch: per-gpu
nodelist: g[1-2]
command: [python3, $DDPCTL_SOURCE/tests/slurm/data/lockstep.py]
monitor: {interval: 2s}
watchdog: {slow_after: 30s, exclude_slow: true}
requeue: {signal: USR1, grace: 60, max_restarts: 1}
YAML
run submit job.yaml --wait
expect_code 0
id=$(submitted_job_id)
# Named once it has been below 0.7x for slow_after (30 s) at every reading.
deadline=$((SECONDS + 200))
until grep -q "slow: rank 1 (g2)" "$T/out" 2>/dev/null; do
  [ "$SECONDS" -lt "$deadline" ] ||
    fail "status never named rank 1 (g2) slow: $(cat "$T/out" "$T/err"); record: $(cat "logs/${JOB_NAME}_$id.slow.json" 2>&1); batch log: $(cat "logs/${JOB_NAME}_$id.err")"
  sleep 1
  run status "$JOB_NAME"
done
echo "status: $(cat "$T/out")"
expect_out "RUNNING"
grep -qE "slow: rank 1 \(g2\) at 0\.[0-6][0-9]× the others for [0-9ms]+ \(by CPU time used or waited for\); a requeue leaves out g2" "$T/out" ||
  fail "status does not say how slow rank 1 is and that a requeue leaves g2 out: $(cat "$T/out")"
grep -qF "ddpctl: watchdog: slow: rank 1 (g2) at" "logs/${JOB_NAME}_$id.err" ||
  fail "the batch log does not name the slow rank: $(cat "logs/${JOB_NAME}_$id.err")"
run status "$JOB_NAME" --json
expect_out '"exclude_nodes": ['
# What Slurm does grace seconds before the time limit (--signal=B:USR1@grace):
# the script passes it on, the program stops with 75, the script requeues.
on_login scancel --batch --signal=USR1 "$id"
deadline=$((SECONDS + 60))
until grep -q "ddpctl: requeue: excluding g2: slow: rank 1 (g2)" "logs/${JOB_NAME}_$id.err" 2>/dev/null; do
  [ "$SECONDS" -lt "$deadline" ] || fail "the requeue did not exclude g2: $(cat "logs/${JOB_NAME}_$id.err")$(slurmctld_log_of "$id")"
  sleep 0.5
done
# The message comes before the requeue: Slurm's answer may follow it by a moment.
deadline=$((SECONDS + 30))
job=$(on_login scontrol show job -o "$id")
until grep -qE "ExcNodeList=g2( |$)" <<<"$job"; do
  [ "$SECONDS" -lt "$deadline" ] || fail "g2 is not in the job's ExcNodeList: $job"
  sleep 0.5
  job=$(on_login scontrol show job -o "$id")
done
grep -qE "ReqNodeList=g1( |$)" <<<"$job" || fail "g2 is still a required node: $job"
grep -qF "ddpctl: requeueing job $id (restart 1 of 1)" "logs/${JOB_NAME}_$id.err" ||
  fail "no requeue notice: $(cat "logs/${JOB_NAME}_$id.err")"
