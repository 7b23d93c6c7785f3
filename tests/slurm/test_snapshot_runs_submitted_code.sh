#!/usr/bin/env bash
# The job runs the code as submitted: submitted held, then the program is
# changed and committed, then released, the job prints the first program's
# line; status --json names the commit it ran and whether the tree was dirty;
# git-ignored files (data/) are not copied; uncommitted changes are.
# One version: a user journey, not what differs between Slurm versions
# (docs/testing.md, "Which Slurm version runs what"):
# slurm versions: 24.11
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
mkdir repo && cd repo
git init -q . && git config user.email t@example.org && git config user.name test
cat >program.sh <<'SH'
#!/bin/bash
echo "program version 1"
SH
chmod +x program.sh
echo "data/" >.gitignore
mkdir data && head -c 1048576 /dev/zero >data/big.bin
write_spec job.yaml <<YAML
partition: cpu
gpus_per_node: 0
procs_per_node: 1
hold: true
command: [./program.sh]
YAML
git add -A && git commit -qm "version 1"
v1=$(git rev-parse HEAD)

run submit job.yaml
expect_code 0
expect_out "code:   snapshot "
expect_out "(commit ${v1:0:12} on "
id=$(submitted_job_id)
expect_jobs_held
# The next experiment, committed while the job waits.
sed -i 's/version 1/version 2/' program.sh
git commit -qam "version 2"
on_login scontrol release "$id"
wait_for_job "$id" COMPLETED 60
grep -qx "program version 1" "logs/${JOB_NAME}_$id.restart0.0.out" ||
  fail "the job did not run the submitted program: $(cat "logs/${JOB_NAME}_$id.restart0.0.out")"
run status "$JOB_NAME" --json
expect_out "\"commit\": \"$v1\""
expect_out '"dirty": false'
snap=$(sed -n 's/.*"dir": "\(.*\.snapshots[^"]*\)".*/\1/p' "$T/out")
snap=${snap%%$'\n'*}
[ -x "$snap/program.sh" ] || fail "no snapshot folder with the program: '$snap'; status: $(cat "$T/out")"
[ ! -e "$snap/data" ] || fail "the git-ignored data/ was copied into the snapshot $snap"
[ ! -e "$snap/logs" ] || fail "the logs folder was copied into the snapshot $snap"

# Uncommitted changes are part of the snapshot (and its diff); reverting
# them before the job starts changes nothing.
sed -i 's/version 2/version 3 (uncommitted)/' program.sh
run submit job.yaml
expect_code 0
expect_out "with uncommitted changes"
id2=$(submitted_job_id)
[ "$id2" != "$id" ] || fail "the second submission made no new job"
git checkout -q program.sh
on_login scontrol release "$id2"
wait_for_job "$id2" COMPLETED 60
grep -qx "program version 3 (uncommitted)" "logs/${JOB_NAME}_$id2.restart0.0.out" ||
  fail "the job did not run the uncommitted program: $(cat "logs/${JOB_NAME}_$id2.restart0.0.out")"
run status "$id2" --json
expect_out '"dirty": true'
diff=$(sed -n 's/.*"diff": "\(.*\)".*/\1/p' "$T/out")
grep -qF "+echo \"program version 3 (uncommitted)\"" "$diff" || fail "the kept diff lacks the change: $(cat "$diff")"
run status "$id2"
expect_out "code: snapshot "
