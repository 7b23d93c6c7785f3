#!/usr/bin/env bash
# The gate of a race across sites (docs/race.md "Across sites"), one site's
# job script under stub commands: submitted with --site, its shapes race as
# one site's group; the job that wins the site's claim waits at the gate and
#   - with no word from the coordinator in --gate-timeout, stands down held
#     (scontrol requeuehold of itself), never training;
#   - started again with the coordinator's grant naming it, trains, and
#     records how long it waited;
#   - finding that another site won (stand-down), cancels itself untrained;
# and when the winner is requeued (docs/race.md "When the winner is requeued"):
#   - the coordinator opened round 2 at the winner's site (race-gate
#     --open-round): the requeued job started again waits at round 2's gate
#     and trains only on round 2's grant;
#   - a site that stood down in round 1 is opened with --resubmit: its
#     shapes are submitted again (generation 2), and their job waits at
#     round 2's gate, not standing down for round 1's stand-down.
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
first=${scripts[0]}
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

# race_gate ARGS...: the site's side as the coordinator asks it; $answer.
race_gate() {
  answer=$(cd "$T/job" && "$DDPCTL" race-gate "$@" --runs "$T/runs" 2>"$T/gate.err") ||
    fail "race-gate $* failed: $(cat "$T/gate.err")"
}
# 4. Job 7001 went through round 1 and was requeued; the coordinator opens
# round 2 here: started again, the job waits at round 2's gate (2 s), and
# stands down held without a grant of that round, though round 1's names it.
race_gate sited-r1 --open-round 2 --because "job 7001 (shape 1x2) at site a, the winner of round 1, was requeued"
[[ $answer == *'"opened":true'* && $answer == *'"round":2'* && $answer == *'"round_opened":"coordinator"'* ]] ||
  fail "race-gate --open-round 2: $answer"
grep -qF "the winner of round 1, was requeued" "$gate/round.2/opened" || fail "round.2/opened: $(cat "$gate/round.2/opened")"
: >"$STUB_LOG"
nodes=1 run_job "$first" SLURM_JOB_ID=7001 SLURM_RESTART_COUNT=2
expect_rc 0
expect_job_out "waits at the gate for the coordinator's grant (at most 2 s): the run races other sites (round 2: a re-race after the winner was requeued)"
expect_call '^scontrol requeuehold 7001$'
expect_calls 0 "$training"
[ -f "$gate/round.2/timeout.7001" ] || fail_job "no $gate/round.2/timeout.7001"
# A grant of round 1 is refused now; round 2's is written in its folder.
race_gate sited-r1 --grant 7001 --round 1
[[ $answer == *'round 1 is not the newest here (round 2)'* ]] || fail "a grant for round 1 was not refused: $answer"
[ ! -e "$gate/round.2/grant" ] || fail "round 2 got a grant from a round 1 call"
race_gate sited-r1 --grant 7001 --round 2
[ "$(cut -d' ' -f1 "$gate/round.2/grant")" = 7001 ] || fail "round 2's grant: $(cat "$gate/round.2/grant" 2>&1)"
: >"$STUB_LOG"
nodes=1 run_job "$first" SLURM_JOB_ID=7001 SLURM_RESTART_COUNT=3
expect_rc 0
expect_job_out "job 7001 granted by the coordinator after"
expect_calls 1 "$training"
[ -f "$gate/round.2/passed.7001" ] || fail_job "no $gate/round.2/passed.7001"
# Requeued again with no re-race: the spec has no requeue:, so the race has
# one round more at most; the job goes on under round 2's grant.
: >"$STUB_LOG"
nodes=1 run_job "$first" SLURM_JOB_ID=7001 SLURM_RESTART_COUNT=4
expect_rc 0
expect_calls 1 "$training"
[ ! -e "$gate/round.3" ] || fail_job "the job opened round 3 beyond the race's rounds"

# 5. The site that stood down in round 1 (sited-r2) races again in round 2:
# its shape is submitted again, and that job waits at round 2's gate.
: >"$STUB_LOG"
race_gate sited-r2 --open-round 2 --because "job 9001 at site b was requeued" --resubmit
[[ $answer == *'"opened":true'* && $answer == *'"submitted":["job 7'* ]] || fail "race-gate --resubmit: $answer"
expect_calls 1 '^sbatch --parsable '
new_job=$(sed -n 's/.*"submitted":\["job \([0-9]*\).*/\1/p' <<<"$answer")
grep -qxF "$new_job" "$(dirname "$gate2")"/gen.2/jobs/* || fail "job $new_job is not in generation 2 there"
grep -qF "round 2 of the race across sites: job 9001 at site b was requeued" "$(dirname "$gate2")/gen.2/why" ||
  fail "gen.2/why: $(cat "$(dirname "$gate2")/gen.2/why")"
# Asked again (a coordinator that did not hear the answer), nothing more is submitted.
race_gate sited-r2 --open-round 2 --because "job 9001 at site b was requeued" --resubmit
[[ $answer == *'"opened":false'* ]] || fail "a second --open-round 2: $answer"
expect_calls 1 '^sbatch --parsable '
echo "$new_job a $(date +%s)" >"$gate2/round.2/grant"
: >"$STUB_LOG"
nodes=1 run_job "${scripts[-1]}" SLURM_JOB_ID="$new_job"
expect_rc 0
expect_job_out "won generation 2"
expect_job_out "job $new_job granted by the coordinator after"
expect_calls 1 "$training"
echo ok
