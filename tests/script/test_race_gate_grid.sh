#!/usr/bin/env bash
# The gate of a race across sites (docs/race.md "Across sites") when more
# than the first start is at stake, one site's job script under stub commands:
#   1. a grid raced across sites: the winner of the site's claim submits the
#      grid's other cells (`ddpctl sweep continue`) only once the
#      coordinator's grant let it through its gate; without a grant it stands
#      down held and submits nothing;
#   2. a requeued winner's site raced its shapes again (generation 2) and
#      nobody raced the other sites again: the job that won generation 2 in
#      the requeued job's place opens the race's round 2 itself, granting
#      itself, and trains.
# shellcheck source=tests/script/lib.sh
. "$(dirname "$0")/lib.sh"

answer_ddpctl() {
  if [ "$1 ${2:-}" = "sweep continue" ]; then exec "$DDPCTL" "$@"; fi
  [ "$1" != --version ] || echo "ddpctl stub"
}
export -f answer_ddpctl
spec sitedgrid <<'EOF_SPEC'
name: sitedgrid
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
grid:
  trainer.lr: [0.1, 0.05, 0.02]
EOF_SPEC
submit sweep sitedgrid.yaml --no-snapshot --site u@a.org --coordinator sitedgrid-r1 --gate-timeout 2
[ "${#scripts[@]}" -eq 1 ] || fail "site u@a.org has one shape: its first cell's race; sbatch got: ${scripts[*]}"
expect_calls 1 '^sbatch --parsable .*--array=0 '
gate=$(find "$T/runs" -maxdepth 3 -type d -name gate)
grep -qF '"coordinator": "sitedgrid-r1"' "$gate/site.json" || fail "site.json: $(cat "$gate/site.json")"
training='^srun --kill-on-bad-exit=1 '
first_script=${scripts[0]} first_args=${script_args[0]}
: >"$STUB_LOG"

# 1a. The site's claim won, no grant within the gate's 2 s: held, and nothing more submitted.
# shellcheck disable=SC2086  # the arguments sbatch passed, as words
nodes=1 run_job "$first_script" SLURM_JOB_ID=7001 SLURM_ARRAY_JOB_ID=7001 SLURM_ARRAY_TASK_ID=0 -- $first_args
expect_rc 0
expect_job_err "no grant from the coordinator within 2 s; job 7001 stands down without training"
expect_call '^scontrol requeuehold 7001$'
expect_no_call '^(sbatch|ddpctl sweep)'
expect_calls 0 "$training"

# 1b. Granted, released and started again: through its gate, it submits the other cells, then trains.
echo "7001 u@a.org $(date +%s)" >"$gate/grant"
: >"$STUB_LOG"
# shellcheck disable=SC2086
nodes=1 run_job "$first_script" SLURM_JOB_ID=7001 SLURM_ARRAY_JOB_ID=7001 SLURM_ARRAY_TASK_ID=0 SLURM_RESTART_COUNT=1 -- $first_args
expect_rc 0
expect_job_out "ddpctl: race: job 7001 granted by the coordinator after"
expect_call '^ddpctl sweep continue '
expect_calls 1 '^sbatch --parsable .*--array=1-2'
expect_calls 1 "$training"
# The continuation comes after the gate: the grant first, then the cells.
[ "$(grep -nE '^ddpctl sweep continue ' "$STUB_LOG" | cut -d: -f1)" -lt "$(grep -nE "$training" "$STUB_LOG" | cut -d: -f1)" ] ||
  fail_job "the other cells were not submitted before training"

# 2. Two shapes at this site, and requeue: generation 2 was opened after the granted job 7101 was requeued.
spec twoshapes <<'EOF_SPEC'
name: twoshapes
cluster: local
on: u@a.org
partition: cpu
nodes: 1
gpus_per_node: 0
procs_per_node: 2
time: "00:10:00"
output_dir: logs
trainer: {model: smallcnn, data: synthetic}
requeue: {signal: USR1, grace: 60, max_restarts: 2}
alternatives:
  - {nodes: 2, procs_per_node: 1}
  - {on: u@b.org, label: b}
EOF_SPEC
: >"$STUB_LOG"
submit submit twoshapes.yaml --no-snapshot --site u@a.org --coordinator twoshapes-r1 --gate-timeout 30
[ "${#scripts[@]}" -eq 2 ] || fail "site u@a.org has two shapes; sbatch got: ${scripts[*]}"
race=$(dirname "$(grep -l '"twoshapes-r1"' "$T"/runs/*/race/gate/site.json)")
race=$(dirname "$race")
ids=$(cat "$race"/jobs/*)
j1=$(echo "$ids" | sed -n 1p) j2=$(echo "$ids" | sed -n 2p)
echo "$j1 1x2 1795300010 0" >"$race/claim.tmp" && mkdir "$race/claim" && mv "$race/claim.tmp" "$race/claim/winner"
echo "$j1 u@a.org $(date +%s)" >"$race/gate/grant"
echo "$j1 1x2 1795300011 0 1" >"$race/gate/passed.$j1"
mkdir -p "$race/gen.2/jobs"
echo "1795300100 job $j1 requeued" >"$race/gen.2/why"
echo "$j1" >"$race/gen.2/jobs/1x2"
echo "$j2" >"$race/gen.2/jobs/2x1"
: >"$STUB_LOG"
nodes=2 run_job "${scripts[1]}" SLURM_JOB_ID="$j2"
expect_rc 0
expect_job_out "won generation 2"
# Nobody raced the other sites again: job j2 opens the race's round 2 here
# itself, granting itself, and goes on in j1's place.
expect_job_out "job $j2 starts after job $j1 trained in round 1 here and was requeued; nobody raced the other sites again yet: it opens round 2 itself and goes on"
expect_job_out "job $j2 goes on under its own grant of round 2; training"
expect_call "^scancel $j1\$"
expect_calls 1 "$training"
[ "$(cut -d' ' -f1-2 "$race/gate/round.2/grant")" = "$j2 u@a.org" ] || fail_job "round 2's grant: $(cat "$race/gate/round.2/grant" 2>&1)"
[ ! -e "$race/gate/round.2/opened" ] || fail_job "round 2 says the coordinator opened it"
[ -f "$race/gate/round.2/passed.$j2" ] || fail_job "no gate/round.2/passed.$j2"
echo ok
