#!/usr/bin/env bash
# 4 ddpctls submitting the same race at once make one group: the group's
# lock is held until every shape is submitted.
# One version: it tests a decision of ddpctl's, not Slurm's answers
# (docs/testing.md, "Which Slurm version runs what"):
# slurm versions: 24.11
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
# Held (the spec's hold: true, checked below in squeue): what is tested is the
# lock, and a job that failed at once on a loaded machine would rightly let a
# later submit make another one.
write_spec job.yaml <<'YAML'
partition: cpu
gpus_per_node: 0
procs_per_node: 1
command: "sleep 300"
hold: true
alternatives:
  - {partition: gpu, label: gpu}
YAML
submit_at_once 4 job.yaml
races=$(cat out.* | grep -c "^submitted race of" || true)
already=$(cat out.* | grep -c "^already submitted: job" || true)
[ "$races" -eq 1 ] || fail "$races submits made a race group, expected 1: $(cat out.* err.*)"$'\n'"$(jobs_report)"
[ "$already" -eq 3 ] || fail "$already submits said 'already submitted', expected 3: $(cat out.* err.*)"$'\n'"$(jobs_report)"
dirs=("$DDPCTL_RUNS"/*/)
[ "${#dirs[@]}" -eq 1 ] || fail "${#dirs[@]} run directories, expected 1"
expect_jobs_held
