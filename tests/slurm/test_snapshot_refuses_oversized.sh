#!/usr/bin/env bash
# A snapshot over its limit stops the submit with its largest files named,
# and nothing is submitted; --no-snapshot submits it to run in place, and
# status says so.
# One version: it tests a decision of ddpctl's, not Slurm's answers
# (docs/testing.md, "Which Slurm version runs what"):
# slurm versions: 22.05
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
mkdir repo && cd repo
git init -q . && git config user.email t@example.org && git config user.name test
printf '#!/bin/bash\necho in place\n' >program.sh
chmod +x program.sh
head -c 3145728 /dev/urandom >weights.bin
write_spec job.yaml <<YAML
partition: cpu
gpus_per_node: 0
procs_per_node: 1
snapshot: {max_mb: 2}
command: [./program.sh]
YAML
git add -A && git commit -qm one
run submit job.yaml
expect_code 1
expect_err "job.yaml:"
expect_err "the snapshot would be 3.0 MiB"
expect_err "weights.bin"
expect_err "raise snapshot.max_mb"
[ -z "$(own_live_jobs)" ] || fail "a job was submitted: $(own_live_jobs)"
run submit job.yaml --no-snapshot
expect_code 0
expect_out "code:   runs in place: --no-snapshot"
id=$(submitted_job_id)
wait_for_job "$id" COMPLETED 60
grep -qx "in place" "logs/${JOB_NAME}_$id.restart0.0.out" || fail "the job did not run: $(cat logs/* 2>&1)"
run status "$JOB_NAME"
expect_out "code: runs in place: --no-snapshot"
