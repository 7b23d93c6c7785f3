#!/usr/bin/env bash
# The gate of a race across sites (docs/race.md "Across sites"), one site's
# job script under stub commands: submitted with --site, its shapes race as
# one site's group; the job that wins the site's claim waits at the gate and
#   - with no word from the coordinator in --gate-timeout, stands down held
#     (scontrol requeuehold of itself), never training;
#   - started again with the coordinator's grant naming it, trains, and
#     records how long it waited;
#   - finding that another site won (stand-down), cancels itself untrained.
# shellcheck source=tests/script/lib.sh
. "$(dirname "$0")/lib.sh"

spec sited <<'EOF_SPEC'
name: sited
cluster: local
on: u@a.org
partition: cpu
nodes: 1
gpus_per_node: 0
procs_per_node: 2
time: "00:10:00"
output_dir: logs
trainer: {model: smallcnn, data: synthetic}
alternatives:
  - {on: u@b.org, nodes: 2, procs_per_node: 1, label: b-2x1}
EOF_SPEC
submit submit sited.yaml --no-snapshot --site u@a.org --coordinator sited-r1 --gate-timeout 2
[ "${#scripts[@]}" -eq 1 ] || fail "site u@a.org has one shape; sbatch got: ${scripts[*]}"
gate=$(find "$T/runs" -maxdepth 3 -type d -name gate)
[ -f "$gate/site.json" ] || fail "no gate/site.json in $T/runs"
grep -qF '"coordinator": "sited-r1"' "$gate/site.json" || fail "site.json: $(cat "$gate/site.json")"
training='^srun --kill-on-bad-exit=1 '
: >"$STUB_LOG"

# 1. No coordinator: after the gate's 2 s the job stands down, held.
nodes=1 run_job "${scripts[0]}" SLURM_JOB_ID=7001
expect_rc 0
expect_job_out "ddpctl: race: job 7001 (shape 1x2) waits at the gate for the coordinator's grant (at most 2 s)"
expect_job_err "no grant from the coordinator within 2 s; job 7001 stands down without training"
expect_call '^scontrol requeuehold 7001$'
expect_calls 0 "$training"
[ -f "$gate/timeout.7001" ] || fail_job "no $gate/timeout.7001"
[ -f "$gate/at.7001" ] || fail_job "no $gate/at.7001"

# 2. Granted, released and started again: it trains, and says how long it waited.
echo "7001 u@a.org $(date +%s)" >"$gate/grant"
: >"$STUB_LOG"
nodes=1 run_job "${scripts[0]}" SLURM_JOB_ID=7001 SLURM_RESTART_COUNT=1
expect_rc 0
expect_job_out "ddpctl: race: job 7001 granted by the coordinator after"
expect_calls 1 "$training"
expect_no_call '^scontrol requeuehold'
[ -f "$gate/passed.7001" ] || fail_job "no $gate/passed.7001"

# 3. Another site won: a job of a new race here stands down at the gate, untrained.
submit submit sited.yaml --no-snapshot --site u@a.org --coordinator sited-r2 --gate-timeout 30 --again
gate2=$(grep -l '"sited-r2"' "$T"/runs/*/race/gate/site.json | xargs dirname)
echo "b 9001 $(date +%s)" >"$gate2/stand-down"
: >"$STUB_LOG"
nodes=1 run_job "${scripts[-1]}" SLURM_JOB_ID=7002
expect_rc 0
expect_job_out "stands down at the gate without training: the coordinator said: b 9001"
expect_call '^scancel 7002$'
expect_calls 0 "$training"
[ -f "$(dirname "$gate2")/stood-down.7002" ] || fail_job "no stood-down.7002"
echo ok
