#!/usr/bin/env bash
# logs -f keeps following when the job is requeued: it announces the new
# attempt and prints that attempt's output, then stops when the job ends.
# One version: a user journey, not what differs between Slurm versions
# (docs/testing.md, "Which Slurm version runs what"):
# slurm versions: 24.11
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
# The first attempt runs until it is requeued (a fixed few seconds could end
# it before the requeue on a loaded machine); the second one ends by itself.
write_spec job.yaml <<'YAML'
partition: cpu
gpus_per_node: 0
procs_per_node: 1
command: 'echo "attempt ${SLURM_RESTART_COUNT:-0} start"; if [ "${SLURM_RESTART_COUNT:-0}" = 0 ]; then sleep 240; fi; sleep 3; echo "attempt ${SLURM_RESTART_COUNT:-0} end"'
YAML
run submit job.yaml --wait
expect_code 0
id=$(job_ids)
"$LOCAL_SLURM" exec -- "$DDPCTL" logs "$JOB_NAME" -f >follow.out 2>&1 &
follower=$!
for _ in $(seq 300); do grep -q "attempt 0 start" follow.out && break; sleep 0.2; done
grep -q "attempt 0 start" follow.out || fail "logs -f did not show the first attempt's output within 60 s: $(cat follow.out)"
node=$(on_login squeue -h -j "$id" -o %N)
[ -n "$node" ] || fail "job $id has no node: $(on_login squeue -h -t all -j "$id" -o '%T %r')"
on_login scontrol requeue "$id" || fail "scontrol requeue $id failed"
# Slurm holds a requeued job back for two minutes (BeginTime), so that the
# first attempt can finish on its node. Start it sooner, as an admin would, but
# only as real Slurm could: once the node is idle and at least 2 s after the
# requeue (slurmd revokes the old credential with the requeue's time in whole
# seconds; a launch in that same second is killed, "Job credential revoked").
# The first sight of PENDING comes after the requeue.
pending_since=""
deadline=$((SECONDS + 60))
while :; do
  if [ "$(on_login squeue -h -t all -j "$id" -o %T)" = PENDING ]; then
    [ -n "$pending_since" ] || pending_since=$(date +%s)
    node_states=$(on_login sinfo -h -N -n "$node" -o %t | sort -u)
    if [ "$node_states" = idle ] && [ "$(date +%s)" -ge $((pending_since + 2)) ]; then
      on_login scontrol update JobId="$id" StartTime=now
      break
    fi
  fi
  [ "$SECONDS" -lt "$deadline" ] ||
    fail "job $id was not pending on an idle node within 60 s of the requeue (state $(on_login squeue -h -t all -j "$id" -o %T), node $(on_login sinfo -h -N -n "$node" -o '%N=%t'))$(slurmctld_log_of "$id")"
  sleep 0.2
done
for _ in $(seq 600); do kill -0 "$follower" 2>/dev/null || break; sleep 0.2; done
kill -0 "$follower" 2>/dev/null && { kill "$follower"; fail "logs -f did not stop within 120 s of the restart: $(cat follow.out)$(slurmctld_log_of "$id")"; }
grep -q "was requeued: attempt 2" follow.out || fail "no requeue notice: $(cat follow.out)"
grep -q "attempt 1 end" follow.out || fail "second attempt's output missing: $(cat follow.out)"
grep -q "ended: COMPLETED" follow.out || fail "no end notice: $(cat follow.out)"
