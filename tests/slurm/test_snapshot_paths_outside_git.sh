#!/usr/bin/env bash
# Outside a git work tree: snapshot.paths copies the files it names, and the
# job runs them as submitted (a helper the program sources from beside itself
# too); without snapshot: the job runs the folder's files in place, and
# status says so.
# One version: a user journey, not what differs between Slurm versions
# (docs/testing.md, "Which Slurm version runs what"):
# slurm versions: 24.11
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
git -C "$T" rev-parse --git-dir >/dev/null 2>&1 && fail "$T is inside a git work tree; this test needs one outside"
mkdir lib data
cat >program.sh <<'SH'
#!/bin/bash
source "$(dirname "$0")/lib/helper.sh"
echo "program 1, $(helper)"
SH
echo 'helper() { echo "helper 1"; }' >lib/helper.sh
chmod +x program.sh
echo "not code" >data/x
write_spec job.yaml <<YAML
partition: cpu
gpus_per_node: 0
procs_per_node: 1
hold: true
snapshot: {paths: [program.sh, lib]}
command: [./program.sh]
YAML
run submit job.yaml
expect_code 0
expect_out "(snapshot.paths): 2 files"
id=$(submitted_job_id)
expect_jobs_held
sed -i 's/program 1/program 2/' program.sh
echo 'helper() { echo "helper 2"; }' >lib/helper.sh
on_login scontrol release "$id"
wait_for_job "$id" COMPLETED 60
grep -qx "program 1, helper 1" "logs/${JOB_NAME}_$id.restart0.0.out" ||
  fail "the job did not run the snapshot: $(cat "logs/${JOB_NAME}_$id.restart0.0.out")"

# Without snapshot: outside git, the job runs in place.
write_spec plain.yaml <<YAML
partition: cpu
gpus_per_node: 0
procs_per_node: 1
command: [./program.sh]
YAML
run submit plain.yaml
expect_code 0
expect_out "code:   runs in place: not a git work tree"
id2=$(submitted_job_id)
wait_for_job "$id2" COMPLETED 60
grep -qx "program 2, helper 2" "logs/${JOB_NAME}_$id2.restart0.0.out" ||
  fail "the job did not run the folder's files: $(cat "logs/${JOB_NAME}_$id2.restart0.0.out")"
run status "$id2" --json
expect_out '"off": "not a git work tree'
