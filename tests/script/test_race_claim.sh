#!/usr/bin/env bash
# The race claim (hybrid mode, docs/race.md): both shapes of a spec with
# alternatives are submitted; the first job to start claims the group,
# cancels the other job and trains; the other, when it starts, finds the
# claim taken and stands down without a node check or training, cancelling
# itself.
# shellcheck source=tests/script/lib.sh
. "$(dirname "$0")/lib.sh"

spec raced <<'EOF_SPEC'
name: raced
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
EOF_SPEC
submit submit raced.yaml --no-snapshot
[ "${#scripts[@]}" -eq 2 ] || fail "expected 2 submitted shapes, sbatch got: ${scripts[*]}"
race=$(find "$T/runs" -maxdepth 2 -type d -name race)
[ -d "$race/jobs" ] || fail "no race folder in $T/runs"
: >"$STUB_LOG"
training='^srun --kill-on-bad-exit=1 '

# The second shape's job (7002) starts first: it wins.
nodes=2 run_job "${scripts[1]}" SLURM_JOB_ID=7002
expect_rc 0
expect_job_out "ddpctl: race: shape 2x1 (job 7002) started first and won generation 1; cancelling the other shapes"
expect_calls 1 '^scancel '
expect_call '^scancel 7001$'
[ -f "$race/cancelled.7001" ] || fail_job "no $race/cancelled.7001"
read -r winner label _ <"$race/claim/winner"
[ "$winner $label" = "7002 2x1" ] || fail_job "race/claim/winner says $winner $label"
expect_calls 1 "$training"

# The first shape's job (7001) starts later: it stands down.
: >"$STUB_LOG"
nodes=1 run_job "${scripts[0]}" SLURM_JOB_ID=7001
expect_rc 0
expect_job_out "ddpctl: race: shape 1x2 (job 7001) lost generation 1 to 7002 2x1"
expect_job_out "standing down without training"
[ -f "$race/stood-down.7001" ] || fail_job "no $race/stood-down.7001"
expect_calls 1 '^scancel '
expect_call '^scancel 7001$'
expect_calls 0 "$training"
expect_no_call 'job check'
echo ok
