#!/usr/bin/env bash
# With `watchdog: {action: requeue}` and restarts left, a stalled job is
# requeued by its watchdog; the next attempt resumes from the program's
# checkpoint and completes, and status says why the first attempt ended.
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
write_spec job.yaml <<YAML
partition: cpu
nodes: 2
gpus_per_node: 0
procs_per_node: 2
launch: per-gpu
command: [python3, $DDPCTL_SOURCE/tests/slurm/data/stalled_once.py]
progress: {pattern: 'epoch (?P<epoch>\d+) step (?P<step>\d+)', epochs: 4}
monitor: {interval: 2s}
watchdog: {stall_after: 20s, action: requeue}
requeue: {max_restarts: 1, grace: 30}
YAML
run submit job.yaml --wait
expect_code 0
id=$(submitted_job_id)
pending_since=""
deadline=$((SECONDS + 180))
while :; do
  state=$(on_login squeue -h -j "$id" -o '%T %r' 2>/dev/null || true)
  case "$state" in
    # Slurm holds a requeued job back (BeginTime, cred_expire: 2 min); start
    # it sooner, but not within seconds of the requeue: slurmd revokes the old
    # run's credential by the second, and a new launch of the same job id on
    # the same node within that second is refused ("Job credential revoked").
    PENDING*BeginTime*)
      pending_since=${pending_since:-$SECONDS}
      [ $((SECONDS - pending_since)) -lt 3 ] || on_login scontrol update JobId="$id" StartTime=now ;;
  esac
  [ "$(on_login sacct -n -X -P -j "$id" -o State 2>/dev/null || true)" = COMPLETED ] && break
  [ "$SECONDS" -lt "$deadline" ] || fail "job $id did not complete: $state"$'\n'"$(cat "logs/${JOB_NAME}_$id.err")"$'\n'"$(jobs_report)"
  sleep 0.5
done
err="logs/${JOB_NAME}_$id.err"
grep -qF "ddpctl: requeueing job $id (restart 1 of 1): by the watchdog: stalled" "$err" ||
  fail "the first attempt was not requeued by the watchdog: $(cat "$err")"
grep -qF "resuming from the checkpoint of epoch 0" "logs/${JOB_NAME}_$id.restart1.0.out" ||
  fail "the second attempt did not resume from the checkpoint: $(cat "logs/${JOB_NAME}_$id.restart1.0.out")"
grep -qx "done" "logs/${JOB_NAME}_$id.restart1.0.out" || fail "the second attempt did not finish"
ls "logs/${JOB_NAME}_$id.restart0.stacks."*.txt >/dev/null || fail "no stacks were recorded before the requeue: $(ls logs)"
run status "$JOB_NAME"
echo "status: $(cat "$T/out")"
expect_out "COMPLETED"
expect_out "attempt 2 of 2 (requeued by the watchdog: stalled"
expect_out "rank 1 ("
