#!/usr/bin/env bash
# The recipe (docs/running.md "Your own program: checkpoint on SIGTERM, exit
# 75") launched by torchrun on 2 nodes, preempted for real by a job of
# `urgent` on `scavenger`'s nodes (scripts/local-slurm). Slurm's SIGTERM
# reaches torchrun's agents and their workers; each worker stops at its
# next step, rank 0 saves the step it reached. torchrun itself ends with its
# own status on SIGTERM, not 75, so the script asks Slurm: the job shows a
# PreemptTime, and it is requeued "after preemption" all the same.
# Skips where the nodes' Python has no torch. torch 2.14 here; the recipe
# without torchrun is test_preempted_recipe_program (24.11).
# slurm versions: 26.05
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
# shellcheck source=tests/slurm/culprit_lib.sh
source "$DDPCTL_SOURCE/tests/slurm/culprit_lib.sh"
need_node_torch
need_node_torchrun
{
  printf 'import time\ndef train_one_step(step):\n    time.sleep(0.2)\n\n'
  awk '/^### Your own program/ {on = 1} on && /^```python$/ {code = 1; next} code && /^```$/ {exit} code' \
    "$DDPCTL_SOURCE/docs/running.md"
} >program.py
grep -q "os._exit(75)" program.py || fail "the recipe's block was not found in docs/running.md: $(cat program.py)"
write_spec job.yaml <<YAML
partition: scavenger
nodes: 2
gpus_per_node: 0
procs_per_node: 1
requeue: {signal: USR1, grace: 20, max_restarts: 2}
command: >-
  /usr/bin/python3 -m torch.distributed.run --nnodes="\$NNODES" --node_rank="\$NODE_RANK"
  --nproc_per_node="\$NPROC_PER_NODE" --master_addr="\$MASTER_ADDR" --master_port="\$MASTER_PORT"
  --redirects 2 --tee 2 --monitor_interval 1 $T/program.py
# Debian builds torch without libuv (culprit_lib.sh).
env: {USE_LIBUV: "0", PYTHONPATH: "$LIBUV_OFF", TOTAL_STEPS: "100000"}
YAML
run submit job.yaml --wait
expect_code 0
id=$(submitted_job_id)
# await PATTERN: a line of the job's logs matches the ERE within two minutes; sets $found.
await() {
  local deadline=$((SECONDS + 120)) since=$SECONDS
  until found=$(grep -rhE -- "$1" logs 2>/dev/null | tail -n1) && [ -n "$found" ]; do
    [ "$SECONDS" -lt "$deadline" ] || fail "no line matches '$1' in the job's logs: $(tail -n 5 logs/* 2>&1)$(slurmctld_log_of "$id")"
    pause_since "$since"
  done
}
await "rank 0: starting at step 0$"
await "rank 1: starting at step 0$"
urgent=$(on_login sbatch --parsable -p urgent -N 4 --exclusive --chdir="$T" -o /dev/null -J "$JOB_NAME-urgent" --wrap 'sleep 300')
at_exit "on_login scancel $urgent"
await "rank 0: checkpointed at step [0-9]+; stopping for the requeue$"
saved=$(echo "$found" | sed -E 's/.* at step ([0-9]+);.*/\1/')
await "requeueing job $id \(restart 1 of 2\): after preemption"
echo "requeue: $found"
state=$(find "$T" -name state.txt -print -quit)
if [ -z "$state" ] || [ "$(cat "$state")" != "$saved" ]; then
  fail "rank 0 said it saved step $saved; the checkpoint holds: ${state:-no state.txt} $(cat "$state" 2>&1)"
fi
deadline=$((SECONDS + 60)) since=$SECONDS
while :; do
  run status "$JOB_NAME"
  grep -qF "attempt 2 of 3 (requeued after preemption: " "$T/out" && break
  [ "$SECONDS" -lt "$deadline" ] || fail "status does not say the job was requeued after preemption: $(cat "$T/out" "$T/err")"
  pause_since "$since"
done
echo "status: $(cat "$T/out")"
on_login scancel "$urgent" "$id"
echo "torchrun's ranks checkpointed at step $saved; requeued after preemption"
