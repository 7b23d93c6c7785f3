#!/usr/bin/env bash
# Hybrid mode with both shapes able to start at the same moment (submitted
# held, released together): exactly one trains, the other stands down or is
# cancelled, over several races; the counts are printed.
# One version: a user journey, not what differs between Slurm versions
# (docs/testing.md, "Which Slurm version runs what"):
# slurm versions: 24.11
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
races=${RACES:-5}
write_spec job.yaml <<'YAML'
partition: cpu
nodes: 1
gpus_per_node: 0
procs_per_node: 1
command: 'echo TRAINED >"$PWD/trained.$SLURM_JOB_ID"'
alternatives:
  - {partition: a100-80gb, label: a100}
YAML
hold_submissions
double=0 empty=0
for i in $(seq "$races"); do
  # Held at submission (sbatch --hold), released in one scontrol call.
  run submit job.yaml --again
  expect_code 0
  run_dir=$(find "$DDPCTL_RUNS" -mindepth 1 -maxdepth 1 -newer job.yaml -type d | sort | tail -1)
  ids=$(cat "$run_dir"/race/jobs/* | tr '\n' ' ')
  # One scontrol call releases them in turn: the first may start, win and
  # cancel the second before scontrol reaches it ("already finished").
  # shellcheck disable=SC2086
  if ! on_login scontrol release $ids 2>release.err; then
    grep -q "already finished" release.err || fail "release failed: $(cat release.err)"
  fi
  # shellcheck disable=SC2086
  jobs_csv=$(echo $ids | tr ' ' ,)
  deadline=$((SECONDS + 90))
  while [ -n "$(on_login squeue -h -j "$jobs_csv" -o %i 2>/dev/null)" ]; do
    [ "$SECONDS" -lt "$deadline" ] ||
      fail "race $i: jobs $ids had not ended 90 s after their release: $(on_login squeue -h -j "$jobs_csv" -o '%i %T %r %N' 2>&1)"
    sleep 0.2
  done
  trained=0
  for id in $ids; do [ -f "trained.$id" ] && trained=$((trained + 1)); done
  [ "$trained" -gt 1 ] && double=$((double + 1))
  [ "$trained" -eq 0 ] && empty=$((empty + 1))
  # The next run directory must be -newer than job.yaml, also on file
  # systems with 1 s timestamps (not a wait for Slurm).
  touch job.yaml
  sleep 1
  echo "race $i: jobs $ids: $trained trained"
done
echo "races: $races, double trainings: $double, empty groups: $empty"
[ "$double" -eq 0 ] || fail "$double races trained twice"
[ "$empty" -eq 0 ] || fail "$empty races trained nobody"
