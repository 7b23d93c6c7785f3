#!/usr/bin/env bash
# Where the nodes cannot run ddpctl's job agent (here: a path that is not on
# them), the job still trains, unwatched, and status says what it cannot see.
# One version: a user journey, not what differs between Slurm versions
# (docs/testing.md, "Which Slurm version runs what"):
# slurm versions: 26.05
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
write_spec job.yaml <<YAML
partition: cpu
nodes: 2
gpus_per_node: 0
procs_per_node: 1
command: "echo training; sleep 600"
YAML
set +e
"$LOCAL_SLURM" exec -- env DDPCTL_PROGRAM="$T/not-on-the-nodes/ddpctl" "$DDPCTL" submit job.yaml --wait >"$T/out" 2>"$T/err"
code=$?
set -e
expect_code 0
id=$(submitted_job_id)
for _ in $(seq 300); do grep -q training "logs/${JOB_NAME}_$id.restart0.1.out" 2>/dev/null && break; sleep 0.2; done
grep -q training "logs/${JOB_NAME}_$id.restart0.1.out" || fail "the job did not train without its agent: $(cat "logs/${JOB_NAME}_$id.err")"
grep -qF "ddpctl: monitor: " "logs/${JOB_NAME}_$id.err" || fail "the batch log does not say the job is unwatched: $(cat "logs/${JOB_NAME}_$id.err")"
run status "$JOB_NAME"
echo "status: $(cat "$T/out")"
expect_out "RUNNING"
expect_out "not monitored: $T/not-on-the-nodes/ddpctl cannot run on "
run status "$JOB_NAME" --json
expect_out '"monitor_off": '
