#!/usr/bin/env bash
# logs -f keeps following when the job is requeued: it announces the new
# attempt and prints that attempt's output, then stops when the job ends.
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
write_spec job.yaml <<'YAML'
partition: cpu
gpus_per_node: 0
procs_per_node: 1
command: 'echo "attempt ${SLURM_RESTART_COUNT:-0} start"; sleep 3; echo "attempt ${SLURM_RESTART_COUNT:-0} end"'
YAML
run submit job.yaml --wait
expect_code 0
id=$(job_ids)
"$LOCAL_SLURM" exec -- "$DDPCTL" logs "$JOB_NAME" -f >follow.out 2>&1 &
follower=$!
for _ in $(seq 50); do grep -q "attempt 0 start" follow.out && break; sleep 0.2; done
node=$(on_login squeue -h -j "$id" -o %N)
on_login scontrol requeue "$id"
# Slurm holds a requeued job back for two minutes, so that the first attempt
# can finish on its node. Once it has (the node is idle), let it start now.
for _ in $(seq 100); do
  if [ "$(on_login squeue -h -t all -j "$id" -o %T)" = PENDING ] &&
    [ "$(on_login sinfo -h -N -n "${node:-g1}" -o %t | sort -u)" = idle ]; then
    on_login scontrol update JobId="$id" StartTime=now
    break
  fi
  sleep 0.2
done
for _ in $(seq 150); do kill -0 "$follower" 2>/dev/null || break; sleep 0.2; done
kill -0 "$follower" 2>/dev/null && { kill "$follower"; fail "logs -f did not stop: $(cat follow.out)"; }
grep -q "was requeued: attempt 2" follow.out || fail "no requeue notice: $(cat follow.out)"
grep -q "attempt 1 end" follow.out || fail "second attempt's output missing: $(cat follow.out)"
grep -q "ended: COMPLETED" follow.out || fail "no end notice: $(cat follow.out)"
