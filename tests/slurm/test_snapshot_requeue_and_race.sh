#!/usr/bin/env bash
# Requeued attempts and raced shapes run the snapshot taken at submit. A job
# with requeue: prints its program's version, the program is changed and
# committed, the job is signalled as at its time limit and requeues itself:
# attempt 2 prints the first version, in the same working directory (the
# run's view of the snapshot, reused). A race submitted held, with the program
# changed and committed before its release: every shape's script runs the
# snapshot, and the winner prints the first version; requeued, the group
# races again and generation 2's winner runs the same snapshot.
# One version: a user journey, not what differs between Slurm versions
# (docs/testing.md, "Which Slurm version runs what"):
# slurm versions: 24.11
# shellcheck source=tests/slurm/lib.sh
source "$DDPCTL_SOURCE/tests/slurm/lib.sh"
mkdir repo && cd repo
git init -q . && git config user.email t@example.org && git config user.name test
cat >program.sh <<'SH'
#!/bin/bash
trap 'echo "checkpointed; stopping"; exit 75' USR1
echo "program version 1, attempt ${SLURM_RESTART_COUNT:-0}"
echo "working in $PWD"
while :; do sleep 1; done
SH
chmod +x program.sh
write_spec job.yaml <<YAML
partition: cpu
gpus_per_node: 0
procs_per_node: 1
requeue: {signal: USR1, grace: 60, max_restarts: 1}
command: [./program.sh]
YAML
git add -A && git commit -qm "version 1"
run submit job.yaml
expect_code 0
id=$(submitted_job_id)
log0="logs/${JOB_NAME}_$id.restart0.0.out"
for _ in $(seq 300); do grep -q "version 1" "$log0" 2>/dev/null && break; sleep 0.2; done
grep -qx "program version 1, attempt 0" "$log0" || fail "attempt 1 did not start the program: $(cat logs/* 2>&1)"
sed -i 's/version 1/version 2/' program.sh
git commit -qam "version 2"
on_login scancel --batch --signal=USR1 "$id"
log1="logs/${JOB_NAME}_$id.restart1.0.out"
# Requeued, it waits for its BeginTime; started sooner, but not within
# seconds of the requeue (see wait_for_completed_after_requeue in lib.sh).
deadline=$((SECONDS + 180)) pending_since=""
until grep -q "attempt 1" "$log1" 2>/dev/null; do
  state=$(on_login squeue -h -j "$id" -o '%T %r' 2>/dev/null || true)
  case "$state" in
    PENDING*BeginTime*)
      pending_since=${pending_since:-$SECONDS}
      [ $((SECONDS - pending_since)) -lt 3 ] || on_login scontrol update JobId="$id" StartTime=now >/dev/null 2>&1 || true ;;
  esac
  [ "$SECONDS" -lt "$deadline" ] ||
    fail "attempt 2 did not start: ${state:-not in squeue}; $(cat "logs/${JOB_NAME}_$id.err")$(slurmctld_log_of "$id")"
  sleep 0.5
done
grep -qx "program version 1, attempt 1" "$log1" || fail "attempt 2 did not run the snapshot: $(cat "$log1")"
# The same view of the snapshot, not a new one.
wd=$(sed -n 's/^working in //p' "$log0")
case $wd in "$DDPCTL_RUNS"/*/workdir) ;; *) fail "attempt 1 did not work in its run's view of the snapshot: '$wd'" ;; esac
grep -qx "working in $wd" "$log1" || fail "attempt 2 worked elsewhere than attempt 1 ($wd): $(cat "$log1")"
on_login scancel "$id"

# A race: every shape's script runs the snapshot.
git checkout -q HEAD~1 -- program.sh
git commit -qam "version 1 again"
JOB_NAME=$JOB_NAME-race write_spec race.yaml <<YAML
partition: cpu
gpus_per_node: 0
procs_per_node: 1
hold: true
requeue: {signal: USR1, grace: 60, max_restarts: 1}
command: [./program.sh]
alternatives:
  - {partition: a100-80gb, label: a100}
YAML
git add race.yaml && git commit -qm "the race"
v=$(git rev-parse HEAD)
run submit race.yaml
expect_code 0
run_dir=$(ls -d "$DDPCTL_RUNS"/"$JOB_NAME"-race-*/)
grep -q "\"commit\": \"$v\"" "$run_dir/snapshot.json" || fail "the race recorded no snapshot of $v: $(cat "$run_dir/snapshot.json")"
snap=$(sed -n 's/.*"code_dir": "\(.*\)".*/\1/p' "$run_dir/snapshot.json")
scripts=("$run_dir"/*.sbatch)
[ "${#scripts[@]}" -eq 2 ] || fail "expected two shapes' scripts in $run_dir"
for s in "${scripts[@]}"; do grep -qF "$snap/program.sh" "$s" || fail "$s does not run the snapshot's program"; done
sed -i 's/version 1/version 2/' program.sh
git commit -qam "version 2 again"
ids=$(own_live_jobs | tr '\n' ' ')
# shellcheck disable=SC2086  # one id per word
on_login scontrol release $ids
deadline=$((SECONDS + 60))
until grep -qs "program version 1" logs/"$JOB_NAME"-race*.restart0.0.out; do
  [ "$SECONDS" -lt "$deadline" ] || fail "no shape of the race ran the snapshot: $(cat logs/"$JOB_NAME"-race* 2>&1)"
  sleep 0.3
done
if grep -qs "program version 2" logs/*.out; then fail "a job ran the changed program: $(grep -l "version 2" logs/*.out)"; fi

# The winner requeued by an admin: race-again re-races the group, and the
# shape that wins generation 2 runs the same snapshot, not the changed program.
w1=$(cut -d' ' -f1 "$run_dir/race/claim/winner")
on_login scontrol requeue "$w1"
deadline=$((SECONDS + 90))
until [ -d "$run_dir/race/gen.2" ]; do
  run race-again "$(basename "$run_dir")"  # refuses until Slurm shows the winner requeued and waiting
  [ -d "$run_dir/race/gen.2" ] && break
  [ "$SECONDS" -lt "$deadline" ] || fail "race-again did not re-race after scontrol requeue of $w1: $(cat "$T/out" "$T/err")$(jobs_report)"
  sleep 0.5
done
# The spec holds its jobs (hold: true), the re-raced ones too: release them.
deadline=$((SECONDS + 120))
until [ -s "$run_dir/race/claim.2/winner" ]; do
  ids=$(own_live_jobs | tr '\n' ' ')
  # shellcheck disable=SC2086  # one id per word
  [ -z "$ids" ] || on_login scontrol release $ids >/dev/null 2>&1 || true
  [ "$SECONDS" -lt "$deadline" ] || fail "no job won generation 2: $(jobs_report)"
  sleep 0.5
done
w2=$(cut -d' ' -f1 "$run_dir/race/claim.2/winner")
# A new job's first attempt, or the requeued winner's second.
if [ "$w2" = "$w1" ]; then attempt=1; else attempt=0; fi
until grep -qs "program version 1" logs/"$JOB_NAME"-race*"_$w2.restart$attempt.0.out"; do
  [ "$SECONDS" -lt "$deadline" ] || fail "generation 2's winner $w2 did not run the snapshot: $(cat logs/"$JOB_NAME"-race*"_$w2"* 2>&1)"
  sleep 0.3
done
if grep -qs "program version 2" logs/*.out; then fail "a job ran the changed program: $(grep -l "version 2" logs/*.out)"; fi
