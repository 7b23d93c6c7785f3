#!/usr/bin/env bash
# Runs of two commits: report labels each row with the commit it ran and
# warns that they ran different code; `ddpctl diff` shows the changed line of
# code and the changed spec field, and two runs of one state say "same".
# One version: a user journey, not what differs between Slurm versions
# (docs/testing.md, "Which Slurm version runs what"):
# slurm versions: 26.05
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
mkdir repo && cd repo
git init -q . && git config user.email t@example.org && git config user.name test
# One metrics line, so that report has a row to show whether or not the job
# lived long enough for a usage sample.
cat >program.sh <<'SH'
#!/bin/bash
echo "lr 0.1"
echo '{"epoch": 1, "epochs": 1, "img_per_s": 100}' >>"$DDPCTL_METRICS_FILE"
SH
chmod +x program.sh
write_spec job.yaml <<YAML
partition: cpu
gpus_per_node: 0
procs_per_node: 1
env: {SEED: "1"}
command: [./program.sh]
YAML
git add -A && git commit -qm one
c1=$(git rev-parse HEAD)
run submit job.yaml
expect_code 0
id1=$(submitted_job_id)
wait_for_job "$id1" COMPLETED 60
run submit job.yaml --again
expect_code 0
id_same=$(submitted_job_id)
wait_for_job "$id_same" COMPLETED 60
sed -i 's/lr 0.1/lr 0.2/' program.sh
sed -i 's/SEED: "1"/SEED: "2"/' job.yaml
git commit -qam two
c2=$(git rev-parse HEAD)
run submit job.yaml
expect_code 0
id2=$(submitted_job_id)
wait_for_job "$id2" COMPLETED 60

run report "$id1" "$id2"
expect_code 0
expect_out "${c1:0:12}"
expect_out "${c2:0:12}"
expect_out "warning: these rows ran different code: ${c1:0:12} (1x1); ${c2:0:12} (1x1)"
run report "$id1" "$id2" --format json
expect_out "\"code\": \"${c1:0:12}\""
expect_err "ddpctl: warning: these rows ran different code"

run diff "$id1" "$id2"
expect_code 0
expect_out "== spec"
expect_out '-env: {SEED: "1"}'
expect_out '+env: {SEED: "2"}'
expect_out "A ran ${c1:0:12}, B ran ${c2:0:12}"
expect_out '-echo "lr 0.1"'
expect_out '+echo "lr 0.2"'
expect_out "+++ B/program.sh"
expect_out "+export SEED=2"

run diff "$id1" "$id_same"
expect_code 0
expect_out "same: snapshot"
expect_out "the two runs ran the same spec, code and script"
