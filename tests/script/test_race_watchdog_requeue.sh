#!/usr/bin/env bash
# A raced run whose winner's watchdog requeues it (watchdog.action requeue)
# races its group again from inside the job, as the script's own requeues do
# (docs/race.md): the winner's script starts the watchdog with --race-run,
# the run's folder, which it hands to `ddpctl race-again` before it requeues
# (test_job_watch.cpp: the watcher's side). A run that is not raced gets no
# --race-run.
# shellcheck source=tests/script/lib.sh
. "$(dirname "$0")/lib.sh"

# The training step runs until the watchdog has started (the script starts
# it beside the step, and stops it when the step ends): at most 30 s.
answer_srun() {
  [[ " $* " == *" --kill-on-bad-exit=1 "* ]] || return 0
  for _ in $(seq 600); do
    ! grep -q '^ddpctl job watch ' "$STUB_LOG" || return 0
    sleep 0.05
  done
  echo "the watchdog did not start within 30 s" >&2
}
export -f answer_srun
spec raced <<'EOF_SPEC'
name: raced
cluster: local
partition: cpu
nodes: 1
gpus_per_node: 0
procs_per_node: 2
time: "00:10:00"
output_dir: logs
requeue: {max_restarts: 2}
monitor: {interval: 5s}
watchdog: {stall_after: 10m, action: requeue}
trainer: {model: smallcnn, data: synthetic}
alternatives:
  - {nodes: 2, procs_per_node: 1}
EOF_SPEC
submit submit raced.yaml --no-snapshot
[ "${#scripts[@]}" -eq 2 ] || fail "expected 2 submitted shapes, sbatch got: ${scripts[*]}"
run_dir=$(dirname "$(find "$T/runs" -maxdepth 2 -type d -name race)")
: >"$STUB_LOG"

# The first shape's job starts first and wins; its watchdog knows the run.
nodes=1 run_job "${scripts[0]}" SLURM_JOB_ID=7001
expect_rc 0
expect_call "^ddpctl job watch .* --action requeue .* --race-run $run_dir --step-pid "

# The same spec without alternatives: no race, no --race-run.
sed -i '/^alternatives:/,$d' "$T/job/raced.yaml"
render raced.yaml
: >"$STUB_LOG"
nodes=1 run_job "$script"
expect_rc 0
expect_call '^ddpctl job watch .* --action requeue '
expect_no_call ' --race-run '
echo ok
