#!/usr/bin/env bash
# The job agent failing on its own (here `ddpctl job checked` crashing with
# SIGSEGV, as a bug in it would) never ends a healthy job: its verdicts have
# exit statuses of their own, so the script trains on, the batch log says
# the agent failed, and status shows the error as the agent's.
# One version: a user journey, not what differs between Slurm versions
# (docs/testing.md, "Which Slurm version runs what"):
# slurm versions: 24.11
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
# The agent the script runs: this ddpctl, except that `job checked` crashes.
mkdir -p "$T/agent"
cat >"$T/agent/ddpctl" <<SH
#!/bin/sh
if [ "\$1" = job ] && [ "\$2" = checked ]; then kill -SEGV \$\$; fi
exec "$DDPCTL" "\$@"
SH
chmod +x "$T/agent/ddpctl"
write_spec job.yaml <<YAML
partition: cpu
nodes: 2
gpus_per_node: 0
procs_per_node: 1
command: "echo training; sleep 600"
YAML
set +e
"$LOCAL_SLURM" exec -- env DDPCTL_PROGRAM="$T/agent/ddpctl" "$DDPCTL" submit job.yaml --wait >"$T/out" 2>"$T/err"
code=$?
set -e
expect_code 0
id=$(submitted_job_id)
for _ in $(seq 300); do grep -q training "logs/${JOB_NAME}_$id.restart0.0.out" 2>/dev/null && break; sleep 0.2; done
grep -q training "logs/${JOB_NAME}_$id.restart0.0.out" ||
  fail "the job did not train after its agent failed: $(cat "logs/${JOB_NAME}_$id.err")"
grep -qF "ddpctl: monitor: error: $T/agent/ddpctl job checked failed (exit status 139)" "logs/${JOB_NAME}_$id.err" ||
  fail "the batch log does not say the agent failed: $(cat "logs/${JOB_NAME}_$id.err")"
grep -qF "the node check failed" "logs/${JOB_NAME}_$id.err" && fail "the agent's crash was taken for a failed node check"
run status "$JOB_NAME"
echo "status: $(cat "$T/out")"
expect_out "RUNNING"
expect_out "agent error: $T/agent/ddpctl job checked failed (exit status 139): the node check's results were not read"
run status "$JOB_NAME" --json
expect_out '"agent_errors": '
