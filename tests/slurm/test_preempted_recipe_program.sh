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
# shellcheck source=tests/slurm/preempt_lib.sh
source "$DDPCTL_SOURCE/tests/slurm/preempt_lib.sh"
recipe_program
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
await_match "^rank 0: starting at step 0$"
await_match "^rank 1: starting at step 0$"
preempt
await_match "requeueing job $id \(restart 1 of 2\): after preemption: "
await_match "^rank 0: checkpointed at step [0-9]+; stopping for the requeue$"
saved=$(echo "$found" | sed -E 's/.* at step ([0-9]+);.*/\1/')
await_match "^rank 1: checkpointed at step [0-9]+; stopping for the requeue$"
expect_saved_state "$saved"
state=$(find "$T" -name state.txt -print -quit)
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
