#!/usr/bin/env bash
# status --watch refreshes until every job shown has ended, then returns.
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
write_spec job.yaml <<'YAML'
partition: cpu
gpus_per_node: 0
procs_per_node: 1
command: "sleep 2"
YAML
run submit job.yaml
expect_code 0
set +e
timeout 60 "$LOCAL_SLURM" exec -- "$DDPCTL" status "$JOB_NAME" --watch >"$T/out" 2>"$T/err"
code=$?
set -e
expect_code 0
expect_out "ddpctl status, every 0.5s"
expect_out "COMPLETED"
[ "$(grep -c "ddpctl status, every" "$T/out")" -gt 1 ] || fail "status --watch did not refresh"
