#!/usr/bin/env bash
# One node of a two-node job crashes (its slurmd and the job's processes on
# it die at once): once Slurm gives up on it (SlurmdTimeout, 30 s on the
# local cluster) the job ends NODE_FAIL, and status names the lost node, not
# the task on the healthy node that srun stopped because of it.
# SBATCH_NO_REQUEUE keeps Slurm from requeueing it (JobRequeue=1 is Slurm's
# default), so the end state stays NODE_FAIL.
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
write_spec job.yaml <<YAML
partition: cpu
nodes: 2
gpus_per_node: 0
procs_per_node: 1
command: "echo training on \$(hostname); sleep 600"
YAML
export SBATCH_NO_REQUEUE=1
run submit job.yaml --wait
expect_code 0
id=$(submitted_job_id)
for _ in $(seq 300); do grep -q training "logs/${JOB_NAME}_$id.restart0.1.out" 2>/dev/null && break; sleep 0.2; done
grep -q training "logs/${JOB_NAME}_$id.restart0.1.out" || fail "task 1 did not start: $(cat logs/* 2>&1)"
second=$(sed -n 's/^training on //p' "logs/${JOB_NAME}_$id.restart0.1.out")
[ -n "$second" ] || fail "task 1 did not say its node: $(cat "logs/${JOB_NAME}_$id.restart0.1.out")"
# The node comes back when the test ends, whatever happens.
at_exit "\"$LOCAL_SLURM\" node start $second"
"$LOCAL_SLURM" node crash "$second"
wait_for_job "$id" NODE_FAIL 150
run status "$JOB_NAME"
echo "status: $(cat "$T/out")"
grep -qE " NODE_FAIL .* lost node $second \(it stopped responding to Slurm, which marked it down\)$" "$T/out" ||
  fail "status does not name the lost node $second: $(cat "$T/out" "$T/err")"
if grep -qE "task [0-9]|rank [0-9]" "$T/out"; then fail "a task is named as the failure of a lost node: $(cat "$T/out")"; fi
run status "$JOB_NAME" --json
expect_out "\"node\": \"$second\""
"$LOCAL_SLURM" node start "$second"
