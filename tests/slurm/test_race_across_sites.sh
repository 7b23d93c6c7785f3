#!/usr/bin/env bash
# One run raced across two sites (docs/race.md "Across sites"): the local
# 22.05 and 24.11 clusters, each reached over ssh through its own login host
# from this host (the user's machine). `ddpctl submit` of a spec naming both
# sites submits to each, and the coordinator it starts grants one job:
# 1. site b's only partition is held by another job: site a wins; site b's
#    job never trains and is cancelled by the stand-down;
# 2. both free: exactly one site trains (the other's job is cancelled, or
#    stood down at its gate), and the coordinator's record says who;
# 3. a third site's sshd is down at submit: it is named and left out, the
#    race goes on with the others, and the coordinator ends it;
# 4. `ddpctl cancel RUN` cancels the race at every site, and its
#    coordinator ends it granting nothing;
# 5. a grid (race, then sweep): its first cell races at both sites, the
#    other cells run on the winning site and shape only;
# 6. a requeued winner re-races across sites: site a's winner is requeued
#    (`scontrol requeue`) mid-training; the coordinator, watching it, opens
#    round 2 at site a, then at site b, which submits its shape again; site
#    b's job wins, the checkpoint goes from site a to site b before it
#    passes its gate, and it resumes from the step site a reached. Site a's
#    requeued job is cancelled; never two trainings at once.
# After race 1, `logs`, `status --watch`, `fetch` and `report` of the race
# go to the winning site's run.
# A journey over two clusters at once: on 22.05's lane (the shortest),
# holding 24.11's, as the test without a coordinator does: ctest starts
# both first (their COST), one after the other, while both lanes are free.
# slurm versions: 22.05
# resource locks: local_slurm_2411
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
# shellcheck source=tests/slurm/remote_lib.sh
source "$DDPCTL_SOURCE/tests/slurm/remote_lib.sh"
# shellcheck source=tests/slurm/sites_lib.sh
source "$DDPCTL_SOURCE/tests/slurm/sites_lib.sh"

# 1. Site b's cpu nodes are all taken by another job: site a wins.
nodes=$(on_login sinfo -h -p cpu -o %D)
blocker=$(on_login sbatch --parsable -p cpu -N "$nodes" --exclusive --chdir="$T" -J "$JOB_NAME-blocker" --wrap 'sleep 600')
deadline=$((SECONDS + 60))
until [ "$(on_login squeue -h -j "$blocker" -o %T)" = RUNNING ]; do
  [ "$SECONDS" -lt "$deadline" ] || fail "the blocker job $blocker did not start: $(on_login squeue -h -j "$blocker" -o '%T %r' 2>&1)"
  sleep 0.5
done
race_once
[ "$(echo "$trained" | wc -w)" -eq 1 ] || fail "race 1: trained: '$trained', expected one job at site a"
[[ $trained == site-a/* ]] || fail "race 1: site b trained ($trained) while its partition was held"
grep -qF "granted job" "$race/coordinator.log" || fail "race 1: the coordinator's log names no grant"
grep -qF '"site":"login-24.11"' "$race/coordinator.done" || fail "race 1: coordinator.done: $(cat "$race/coordinator.done")"
b_job=$(cat "$site_b"/runs/*/race/jobs/1x1)
wait_for_sacct "$b_job" CANCELLED 60
[ -n "$(find "$site_b/runs" -path '*/race/gate/stand-down')" ] || fail "race 1: site b's gate was not told to stand down"
# One view: every site's jobs in one table, asked once each.
run_here status "$(basename "$race")"
[ "$rcode" -eq 0 ] || fail "status of the race ended with $rcode: $(cat "$T/rout" "$T/rerr")"
echo "status: $(cat "$T/rout")"
grep -qE " race +WON +won by job [0-9]+ at site login-24.11; the race is over$" "$T/rout" ||
  fail "status does not show the race won by site login-24.11: $(cat "$T/rout")"
grep -qE " $host +$b_job +1x1 +CANCELLED +stood down: site login-24.11 won" "$T/rout" ||
  fail "status does not show site b's job stood down: $(cat "$T/rout")"
# One stream (docs/json.md "A race across sites"): both sites' events,
# relayed by the coordinator, in causal order around its own decisions.
run_here events "$(basename "$race")"
[ "$rcode" -eq 0 ] || fail "events of the race ended with $rcode: $(cat "$T/rout" "$T/rerr")"
python3 "$DDPCTL_SOURCE/tests/json/validate.py" "$DDPCTL_SOURCE/schemas" "$T/rout" || fail "race 1: an event is not valid"
python3 - "$T/rout" "$b_job" <<'PY' || fail "race 1: the race's events are not one stream: $(cat "$T/rout")"
import json, sys
evs = [json.loads(l) for l in open(sys.argv[1])]
b_job = sys.argv[2]
seqs = [e["seq"] for e in evs]
assert seqs == list(range(1, len(evs) + 1)), seqs
tell = [(e["type"], e.get("site", ""), e.get("job")) for e in evs if e["type"] not in ("progress", "metric")]
print("race 1's events:", tell)
where = lambda pred: next(i for i, e in enumerate(evs) if pred(e))
won = where(lambda e: e["type"] == "race_won" and e.get("site") == "login-24.11")
granted = where(lambda e: e["type"] == "granted")
assert evs[granted]["site"] == "login-24.11", evs[granted]
a_job = evs[granted]["job"]
assert won < granted, (won, granted)
assert evs[won]["job"] == a_job and "site_seq" in evs[won] and "site_run" in evs[won], evs[won]
assert any(e["type"] == "submitted" and e.get("site") == "login-22.05" for e in evs[:granted]), "site b's submission"
stood = where(lambda e: e["type"] == "stood_down")
ended_b = where(lambda e: e["type"] == "ended" and e.get("site") == "login-22.05" and e["job"] == b_job)
assert stood < ended_b and evs[ended_b]["state"] == "CANCELLED", evs[ended_b]
ended_a = where(lambda e: e["type"] == "ended" and e.get("site") == "login-24.11")
assert granted < ended_a and evs[ended_a]["state"] == "COMPLETED", evs[ended_a]
assert evs[-1]["type"] == "run_ended" and "site" not in evs[-1], evs[-1]
PY
on_login scancel "$blocker"
# One run wherever it won: logs, status --watch, fetch and report go to site a's run.
a_job=$(cat "$site_a"/runs/*/race/jobs/a)
a_run=$(basename "$(dirname "$(dirname "$(dirname "$(ls "$site_a"/runs/*/race/jobs/a)")")")")
run_here logs -f "$(basename "$race")"
[ "$rcode" -eq 0 ] || fail "logs of the race ended with $rcode: $(cat "$T/rout" "$T/rerr")"
grep -qF "race $(basename "$race") was won by job $a_job at site login-24.11: its run there is $a_run" "$T/rerr" ||
  fail "logs do not say where the race was won: $(cat "$T/rerr")"
grep -qF TRAINED "$T/rout" || fail "logs do not show the winner's output: $(cat "$T/rout" "$T/rerr")"
set +e
timeout 120 "$DDPCTL" status --watch "$(basename "$race")" >"$T/rout" 2>"$T/rerr"
rcode=$?
set -e
[ "$rcode" -eq 0 ] || fail "status --watch of the race ended with $rcode (124: it did not end within 2 minutes): $(cat "$T/rout" "$T/rerr")"
grep -qE " login-24.11 +$a_job +a +COMPLETED " "$T/rout" || fail "status --watch did not end with site a's job COMPLETED: $(cat "$T/rout")"
run_here fetch "$(basename "$race")"
[ "$rcode" -eq 0 ] || fail "fetch of the race ended with $rcode: $(cat "$T/rout" "$T/rerr")"
# Under the race's own folder: what a site names never replaces a run here.
[ -d "$race/fetched/$a_run" ] || fail "fetch did not bring site a's run $a_run under the race: $(cat "$T/rout" "$T/rerr")"
[ ! -e "$DDPCTL_RUNS/$a_run" ] || fail "fetch wrote site a's run outside the race"
run_here report "$(basename "$race")"
[ "$rcode" -eq 0 ] || fail "report of the race ended with $rcode: $(cat "$T/rout" "$T/rerr")"
grep -qF "$a_run" "$T/rout" || fail "report does not show site a's run $a_run: $(cat "$T/rout" "$T/rerr")"
rm -f "$site_a"/trained.* "$site_b"/trained.*

# 2. Both free: exactly one site trains.
race_once --again
[ "$(echo "$trained" | wc -w)" -eq 1 ] || fail "race 2: trained: '$trained', expected exactly one job"
won2=${trained%%/*}
rm -f "$site_a"/trained.* "$site_b"/trained.*

# 3. A site whose login host refuses connections (its sshd is down).
printf 'Host login-down\n  HostName 127.0.0.1\n  Port 1\n' >>"$HOME/.ssh/config"
sed 's/^alternatives:$/alternatives:\n  - {on: login-down, label: down}/' job.yaml >job3.yaml
spec_file=job3.yaml race_once
grep -qF "ddpctl: warning: site login-down (login-down) is left out of the race: its submission failed" "$T/rerr" ||
  fail "race 3: submit does not say the unreachable site is left out: $(cat "$T/rout" "$T/rerr")"
grep -qF "site login-down: not reached: " "$race/coordinator.log" ||
  fail "race 3: the coordinator's log does not say the site was not reached: $(cat "$race/coordinator.log")"
[ "$(echo "$trained" | wc -w)" -eq 1 ] || fail "race 3: trained: '$trained', expected exactly one job"
won3=${trained%%/*}
rm -f "$site_a"/trained.* "$site_b"/trained.*

# 4. Cancelled while its jobs wait (submitted held): every site's job ends CANCELLED.
submit_race --set hold=true
# This race's jobs: recorded at each site after its record here.
a_job=$(find "$site_a/runs" -path '*/race/jobs/a' -newer "$race/sites.json" -exec cat {} +)
b_job=$(find "$site_b/runs" -path '*/race/jobs/1x1' -newer "$race/sites.json" -exec cat {} +)
{ [ -n "$a_job" ] && [ -n "$b_job" ]; } || fail "race 4: no job recorded at each site: a '$a_job', b '$b_job'"
run_here cancel "$(basename "$race")"
[ "$rcode" -eq 0 ] || fail "race 4: cancel ended with $rcode: $(cat "$T/rout" "$T/rerr")"
echo "cancel: $(cat "$T/rout")"
grep -qE "^site login-24.11: run .*; cancelled job $a_job$" "$T/rout" ||
  fail "race 4: cancel does not say site a's job was cancelled: $(cat "$T/rout")"
wait_for_sacct "$b_job" CANCELLED 60
# Site a's accounting, on its own login host ("CANCELLED by 0": the first word).
deadline=$((SECONDS + 60))
until [ "$(on_other sacct -n -X -P -j "$a_job" -o State | cut -d' ' -f1)" = CANCELLED ]; do
  [ "$SECONDS" -lt "$deadline" ] ||
    fail "race 4: site a's job $a_job is not CANCELLED: $(on_other sacct -n -X -P -j "$a_job" -o State,Reason 2>&1)"
  sleep 0.5
done
wait_race_over
[ -z "$trained" ] || fail "race 4: a cancelled race trained: $trained"
[ ! -f "$race/grant" ] || fail "race 4: a cancelled race was granted: $(cat "$race/grant")"

# 5. Race, then sweep across sites: the grid's first cell races at both
# sites; the other cells run on the winning site and shape only.
{
  sed '/^command:/d' job.yaml
  echo "command: 'echo \"\$LR\" >\"\$PWD/cell.\$LR\"; echo \"{\\\"epoch\\\": 1, \\\"epochs\\\": 1, \\\"img_per_s\\\": \$LR, \\\"epoch_s\\\": 1.0}\" >>\"\$DDPCTL_METRICS_FILE\"'"
  printf 'grid:\n  env.LR: ["1", "2", "3"]\n'
} >job5.yaml
run_here sweep job5.yaml --no-snapshot --gate-timeout 120
[ "$rcode" -eq 0 ] || fail "sweep across sites ended with $rcode: $(cat "$T/rout" "$T/rerr")"
echo "sweep: $(cat "$T/rout" "$T/rerr")"
race=$DDPCTL_RUNS/$(sed -n 's/^race \([^ ]*\) across .*/\1/p' "$T/rout")
[ -f "$race/sites.json" ] || fail "sweep named no race here: $(cat "$T/rout" "$T/rerr")"
wait_race_over
won5=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["site"])' "$race/grant") ||
  fail "race 5: the race's grant names no site: $(cat "$race/grant")"
if [ "$won5" = login-24.11 ]; then winner_dir=$site_a loser_dir=$site_b; else winner_dir=$site_b loser_dir=$site_a; fi
deadline=$((SECONDS + 120)) since=$SECONDS
until [ -f "$winner_dir/cell.1" ] && [ -f "$winner_dir/cell.2" ] && [ -f "$winner_dir/cell.3" ]; do
  [ "$SECONDS" -lt "$deadline" ] ||
    fail "race 5: the grid's cells did not all run at the winning site $won5 within 2 minutes: $(ls "$winner_dir")"$'\n'"$(cat "$race/coordinator.log")"
  pause_since "$since"
done
[ -z "$(find "$loser_dir" -maxdepth 1 -name 'cell.*')" ] || fail "race 5: a cell ran at the losing site too: $(ls "$loser_dir")"
run_here report "$(basename "$race")"
[ "$rcode" -eq 0 ] || fail "race 5: report of the raced grid ended with $rcode: $(cat "$T/rout" "$T/rerr")"
if ! { grep -qF "3 cells: 3 done" "$T/rout" && grep -qE "^ +3 +[0-9]+_2 +COMPLETED +3$" "$T/rout"; }; then
  fail "race 5: report does not show the grid's three cells done: $(cat "$T/rout" "$T/rerr")"
fi

# 6. A requeued winner re-races across sites. The training resumes from its
# checkpoint folder (DDPCTL_CHECKPOINT_DIR: each site's run has its own) and
# records each training in $T (data/resumes_from_checkpoint.sh).
cp "$DDPCTL_SOURCE/tests/slurm/data/resumes_from_checkpoint.sh" "$T/"
{
  sed '/^command:/d' job.yaml
  echo "command: [$T/resumes_from_checkpoint.sh]"
  echo "requeue: {signal: USR1, grace: 60, max_restarts: 2}"
} >job6.yaml
# Round 1 at site a: site b's partition is held again, until a's job trains.
blocker=$(on_login sbatch --parsable -p cpu -N "$nodes" --exclusive --chdir="$T" -J "$JOB_NAME-blocker" --wrap 'sleep 600')
spec_file=job6.yaml submit_race
deadline=$((SECONDS + 120)) since=$SECONDS
until p=$(cat "$T/progress" 2>/dev/null); [ "${p:-0}" -ge 20 ]; do
  [ "$SECONDS" -lt "$deadline" ] ||
    fail "race 6: site a's job did not train 20 steps within 2 minutes: $(cat "$T/trainings" 2>&1)"$'\n'"$(cat "$race/coordinator.log")"
  pause_since "$since"
done
on_login scancel "$blocker"
a_job=$(find "$site_a/runs" -path '*/race/jobs/a' -newer "$race/sites.json" -exec cat {} +)
a_nodes=$(on_other sinfo -h -p cpu -o %D)
on_other scontrol requeue "$a_job"
# Site a's nodes are taken while its requeued job waits for its BeginTime:
# site b is the only one that can start.
a_blocker=$(on_other sbatch --parsable -p cpu -N "$a_nodes" --exclusive --chdir="$T" -J "$JOB_NAME-blocker" --wrap 'sleep 600')
at_exit "on_other scancel $a_blocker 2>/dev/null"
deadline=$((SECONDS + 300)) since=$SECONDS
until [ -f "$race/coordinator.done" ]; do
  [ "$SECONDS" -lt "$deadline" ] ||
    fail "race 6: the coordinator did not end the re-raced race within 5 minutes:"$'\n'"$(cat "$race/coordinator.log")"$'\n'"site a: $(on_other squeue -h -o '%i %T %r' 2>&1)"$'\n'"site b: $(on_login squeue -h -o '%i %T %r' 2>&1)"$'\n'"trainings: $(cat "$T/trainings" 2>&1)"
  pause_since "$since"
done
on_other scancel "$a_blocker"
echo "coordinator: $(cat "$race/coordinator.log")"
echo "trainings: $(cat "$T/trainings")"
[ ! -f "$T/double" ] || fail "race 6: two trainings at once: $(cat "$T/double")"
[ "$(wc -l <"$T/trainings")" -eq 2 ] || fail "race 6: expected two trainings (site a, then site b): $(cat "$T/trainings")"
read -r first_who first_step < <(sed -n 1p "$T/trainings")
read -r second_who second_step < <(sed -n 2p "$T/trainings")
if ! { [ "$first_who" = "site-a:$a_job" ] && [ "$first_step" -eq 0 ]; }; then
  fail "race 6: the first training was not site a's job $a_job from step 0: $first_who $first_step"
fi
[ "${second_who%:*}" = site-b ] || fail "race 6: the re-race was not won at site b: $second_who"
[ "$second_step" -ge 20 ] || fail "race 6: site b's job resumed from step $second_step, not from site a's checkpoint (20 or more)"
grep -qxF "$second_who 300" "$T/finished" || fail "race 6: site b's job did not finish: $(cat "$T/finished" 2>&1)"
grep -qF "the winner of round 1, was requeued" "$race/round.2" || fail "race 6: round.2: $(cat "$race/round.2" 2>&1)"
granted2=$(python3 -c 'import json, sys; g = json.load(open(sys.argv[1])); print(g["site"], g["job"])' "$race/grant.2") ||
  fail "race 6: round 2's grant is not a grant: $(cat "$race/grant.2" 2>&1)"
[ "$granted2" = "$host ${second_who#*:}" ] || fail "race 6: round 2's grant: $(cat "$race/grant.2" 2>&1)"
[ -f "$race/relay.2" ] || fail "race 6: no relay.2: the checkpoint was not carried"
grep -qF "round 2: the checkpoint went from site login-24.11 to site $host" "$race/coordinator.log" ||
  fail "race 6: the coordinator's log does not say the checkpoint went to site b"
deadline=$((SECONDS + 60))
until [ "$(on_other sacct -n -X -P -j "$a_job" -o State | cut -d' ' -f1)" = CANCELLED ]; do
  [ "$SECONDS" -lt "$deadline" ] ||
    fail "race 6: site a's requeued job $a_job is not CANCELLED: $(on_other sacct -n -X -P -j "$a_job" -o State,Reason 2>&1)"
  sleep 0.5
done
run_here status "$(basename "$race")"
echo "status: $(cat "$T/rout")"
grep -qE " race +WON +round 2 \(re-raced: job $a_job \(shape a\) at site login-24.11, the winner of round 1, was requeued \(PENDING.*\)\): won by job ${second_who#*:} at site $host; its checkpoint was carried there" "$T/rout" ||
  fail "race 6: status does not show the re-race: $(cat "$T/rout" "$T/rerr")"
echo "races across sites: 1 blocked at site b, won by site a; 2 both free, won by $won2; 3 with a site down, won by $won3; 4 cancelled, nobody trained; 5 a grid, won by $won5; 6 re-raced after a requeue, resumed at site b from step $second_step"
