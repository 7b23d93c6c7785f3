#!/usr/bin/env bash
# The recipe (docs/running.md "Your own program: checkpoint on SIGTERM, exit
# 75") inside an Apptainer image that has no Slurm commands, on 2 nodes of
# `scavenger`, preempted for real by a job of `urgent` (scripts/local-slurm).
# Slurm's SIGTERM reaches the ranks inside the container (they are the
# step's processes); each stops at its next step, rank 0 saves the step it
# reached, and the batch shell, outside the image, requeues the job "after
# preemption".
# Only where the nodes have its runtime (lib.sh's container check skips it elsewhere):
# slurm versions: 26.05
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
sif=$(container_test_image apptainer)
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
launch: per-gpu
requeue: {signal: USR1, grace: 20, max_restarts: 2}
env: {TOTAL_STEPS: "100000"}
command: [python3, program.py]
container:
  runtime: apptainer
  image: $sif
  options: [--no-privs]
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
await "^rank 0: starting at step 0$"
await "^rank 1: starting at step 0$"
urgent=$(on_login sbatch --parsable -p urgent -N 4 --exclusive --chdir="$T" -o /dev/null -J "$JOB_NAME-urgent" --wrap 'sleep 300')
at_exit "on_login scancel $urgent"
await "^rank 0: checkpointed at step [0-9]+; stopping for the requeue$"
saved=$(echo "$found" | sed -E 's/.* at step ([0-9]+);.*/\1/')
await "^rank 1: checkpointed at step [0-9]+; stopping for the requeue$"
await "requeueing job $id \(restart 1 of 2\): after preemption"
echo "requeue: $found"
state=$(find "$T" -name state.txt -print -quit)
if [ -z "$state" ] || [ "$(cat "$state")" != "$saved" ]; then
  fail "rank 0 said it saved step $saved; the checkpoint holds: ${state:-no state.txt} $(cat "$state" 2>&1)"
fi
on_login scancel "$urgent" "$id"
echo "in the container, the ranks checkpointed at step $saved; requeued after preemption"
