#!/usr/bin/env bash
# The recipe for a program of the user's (docs/running.md "Your own program:
# checkpoint on SIGTERM, exit 75"), the very block of the docs, under a real
# preemption: a job of `urgent` takes the nodes of this job of `scavenger`
# (scripts/local-slurm). Every rank gets SIGTERM, rank 0 saves the step it
# reached, all exit 75, and the job is requeued "after preemption"; the
# recipe started on that state resumes at the saved step.
# slurm versions: 24.11
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
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
env: {TOTAL_STEPS: "100000"}
command: [python3, $T/program.py]
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
await "requeueing job $id \(restart 1 of 2\): after preemption: "
await "^rank 0: checkpointed at step [0-9]+; stopping for the requeue$"
saved=$(echo "$found" | sed -E 's/.* at step ([0-9]+);.*/\1/')
await "^rank 1: checkpointed at step [0-9]+; stopping for the requeue$"
state=$(find "$T" -name state.txt -print -quit)
if [ -z "$state" ] || [ "$(cat "$state")" != "$saved" ]; then
  fail "rank 0 said it saved step $saved; the checkpoint holds: ${state:-no state.txt} $(cat "$state" 2>&1)"
fi
# Started again, the recipe resumes where it stopped: run here on the saved
# state (the job itself would start again only after Slurm's begin time for
# a requeued job, about two minutes; moving that to now has Slurm kill the
# start, "Job credential revoked", so the test does not).
resumed=$(DDPCTL_CHECKPOINT_DIR=$(dirname "$state") TOTAL_STEPS=$((saved + 1)) python3 program.py)
[ "${resumed%%$'\n'*}" = "rank 0: starting at step $saved" ] ||
  fail "the recipe did not resume at step $saved: $resumed"
run status "$JOB_NAME"
expect_out "attempt 2 of 3 (requeued after preemption: "
echo "status: $(cat "$T/out")"
on_login scancel "$urgent" "$id"
echo "saved step $saved, resumed there"
