#!/usr/bin/env bash
# Race, then sweep (docs/race.md): a grid with alternatives submits its first
# cell as a race; the winner, once it has claimed the group, runs `ddpctl
# sweep continue RUN` (here the real ddpctl, through the stub agent), which
# submits the grid's other cells as one job array on the winner's shape.
# The loser stands down and submits nothing.
# shellcheck source=tests/script/lib.sh
. "$(dirname "$0")/lib.sh"

answer_ddpctl() {
  if [ "$1 ${2:-}" = "sweep continue" ]; then exec "$DDPCTL" "$@"; fi
  [ "$1" != --version ] || echo "ddpctl stub"
}
export -f answer_ddpctl
spec grid <<'EOF_SPEC'
name: grid
cluster: local
partition: cpu
nodes: 1
gpus_per_node: 0
procs_per_node: 2
time: "00:10:00"
output_dir: logs
trainer: {model: smallcnn, data: synthetic}
alternatives:
  - {nodes: 2, procs_per_node: 1}
grid:
  trainer.lr: [0.1, 0.05, 0.02]
EOF_SPEC
submit sweep grid.yaml --no-snapshot
[ "${#scripts[@]}" -eq 2 ] || fail "expected the first cell's 2 shapes, sbatch got: ${scripts[*]}"
expect_calls 2 '^sbatch --parsable .*--array=0 '
: >"$STUB_LOG"

# The 2x1 shape's first cell (job 7002, an array of one task) starts first.
# shellcheck disable=SC2086  # the arguments sbatch passed, as words
nodes=2 run_job "${scripts[1]}" SLURM_JOB_ID=7002 SLURM_ARRAY_JOB_ID=7002 SLURM_ARRAY_TASK_ID=0 -- ${script_args[1]}
expect_rc 0
expect_call '^scancel 7001$'
expect_call '^ddpctl sweep continue '
expect_calls 1 '^sbatch --parsable .*--array=1-2'
expect_call '^sbatch --parsable .* [^ ]*/grid-2x1[^ ]*\.sbatch( |$)'

: >"$STUB_LOG"
# shellcheck disable=SC2086
nodes=1 run_job "${scripts[0]}" SLURM_JOB_ID=7001 SLURM_ARRAY_JOB_ID=7001 SLURM_ARRAY_TASK_ID=0 -- ${script_args[0]}
expect_rc 0
expect_job_out "standing down without training"
expect_no_call '^(sbatch|ddpctl sweep)'
echo ok
