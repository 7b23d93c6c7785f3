#!/usr/bin/env bash
# The run lock, without a cluster (tests/cli/fake_slurm's queue): 8 ddpctls
# submitting the same spec at once make one job, the other 7 report it as
# already submitted ("look for earlier runs -> intent -> sbatch -> outcome"
# is serialised); and a run whose sbatch answer was lost (unconfirmed),
# re-submitted by 8 at once, is settled (absent) and submitted by one, the
# ledger keeping every attempt; 8 different specs at once make 8 jobs and
# 8 whole records; 4 submitting one race make one group. The jobs are held
# (hold: true) and stay PENDING in the fake queue, so an earlier job is
# always live.
# shellcheck source=tests/cli/lib.sh
. "$(dirname "$0")/lib.sh"
fake_slurm_on_path
export DDPCTL_RUNS=$T/runs
write_job() {
  cat >"$1" <<YAML
name: $2
cluster: $DDPCTL_SOURCE/configs/clusters/local.yaml
partition: cpu
gpus_per_node: 0
procs_per_node: 1
command: "sleep 300"
hold: true
YAML
}
# submit_together SPEC...: one ddpctl per SPEC submits it, all at once; each
# must succeed (submit I's output in out.I and err.I).
submit_together() {
  local i=0 spec pids=()
  rm -f out.* err.*
  for spec in "$@"; do
    i=$((i + 1))
    "$DDPCTL" submit "$spec" --no-preflight >"out.$i" 2>"err.$i" &
    pids+=($!)
  done
  for i in "${!pids[@]}"; do
    wait "${pids[$i]}" || fail "submit $((i + 1)) failed: $(cat "out.$((i + 1))" "err.$((i + 1))")"
  done
}
# submit_at_once N SPEC: N ddpctls submit SPEC at once.
submit_at_once() {
  local specs=()
  for _ in $(seq "$1"); do specs+=("$2"); done
  submit_together "${specs[@]}"
}
# ledger_outcomes NAME: the outcome of every attempt of the one run of NAME.
ledger_outcomes() {
  local dirs=("$DDPCTL_RUNS/$1"-*/)
  [ "${#dirs[@]}" -eq 1 ] || fail "${#dirs[@]} run folders of $1, expected 1: $(ls "$DDPCTL_RUNS")"
  sed -n 's/.*"outcome": "\([a-z]*\)".*/\1/p' "${dirs[0]}ledger.json" | tr '\n' ' '
}
jobs_of() { grep -c "$(printf '\x1f')$1$(printf '\x1f')" "$FAKE_SLURM/jobs" || true; }

# 1. Eight at once: one job.
write_job one.yaml one
submit_at_once 8 one.yaml
submitted=$(cat out.* | grep -c "^submitted job" || true)
already=$(cat out.* | grep -c "^already submitted: job" || true)
[ "$submitted" -eq 1 ] || fail "$submitted submits made a job, expected 1: $(cat out.* err.*)"
[ "$already" -eq 7 ] || fail "$already submits said 'already submitted', expected 7: $(cat out.* err.*)"
[ "$(jobs_of one)" -eq 1 ] || fail "the queue has $(jobs_of one) jobs named one, expected 1: $(cat "$FAKE_SLURM/jobs")"
[ "$(grep -c '^sbatch ' "$FAKE_SLURM/calls")" -eq 1 ] || fail "sbatch ran more than once: $(cat "$FAKE_SLURM/calls")"
[ "$(ledger_outcomes one)" = "submitted " ] || fail "ledger: $(ledger_outcomes one)"
# The seven learnt it from the queue: the fake answered squeue, the job held.
grep -q "^squeue -h -a -t all" "$FAKE_SLURM/calls" || fail "nobody asked the fake squeue: $(cat "$FAKE_SLURM/calls")"
grep -q "$(printf '\x1f')one$(printf '\x1f').*$(printf '\x1f')PENDING$(printf '\x1f')JobHeldUser$(printf '\x1f')" "$FAKE_SLURM/jobs" ||
  fail "the job is not held in the fake queue: $(cat "$FAKE_SLURM/jobs")"

# 2. Its sbatch answer lost, then eight at once: settled, one job.
write_job lost.yaml lost
echo "sbatch: error: Batch job submission failed: Socket timed out on send/recv operation" >"$FAKE_SLURM/sbatch_fails"
run submit lost.yaml --no-preflight
expect_code 1
expect_err "recorded as unconfirmed"
[ "$(ledger_outcomes lost)" = "unconfirmed " ] || fail "ledger: $(ledger_outcomes lost)"
rm "$FAKE_SLURM/sbatch_fails"
submit_at_once 8 lost.yaml
submitted=$(cat out.* | grep -c "^submitted job" || true)
[ "$submitted" -eq 1 ] || fail "$submitted submits made a job, expected 1: $(cat out.* err.*)"
[ "$(jobs_of lost)" -eq 1 ] || fail "the queue has $(jobs_of lost) jobs named lost, expected 1: $(cat "$FAKE_SLURM/jobs")"
[ "$(ledger_outcomes lost)" = "absent submitted " ] || fail "ledger: $(ledger_outcomes lost) (expected every attempt: absent submitted)"

# 3. Eight different specs at once: none waits on another's lock or loses
# another's records: eight jobs, eight runs, every record whole JSON.
rm -rf "$DDPCTL_RUNS"
for i in 1 2 3 4 5 6 7 8; do write_job "job$i.yaml" "job$i"; done
submit_together job1.yaml job2.yaml job3.yaml job4.yaml job5.yaml job6.yaml job7.yaml job8.yaml
[ "$(cat out.* | grep -c "^submitted job" || true)" -eq 8 ] || fail "not 8 jobs submitted: $(cat out.* err.*)"
for i in 1 2 3 4 5 6 7 8; do
  [ "$(jobs_of "job$i")" -eq 1 ] || fail "the queue has $(jobs_of "job$i") jobs named job$i: $(cat "$FAKE_SLURM/jobs")"
done
dirs=("$DDPCTL_RUNS"/*/)
[ "${#dirs[@]}" -eq 8 ] || fail "${#dirs[@]} run folders, expected 8: $(ls "$DDPCTL_RUNS")"
for d in "${dirs[@]}"; do
  for f in run.json ledger.json; do
    python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$d$f" || fail "$d$f is not whole JSON: $(cat "$d$f")"
  done
done

# 4. Four ddpctls submitting one race at once make one group: the group's
# lock is held until every shape is submitted.
rm -rf "$DDPCTL_RUNS"
write_job race.yaml race
printf 'alternatives:\n  - {partition: gpu, label: gpu}\n' >>race.yaml
submit_at_once 4 race.yaml
races=$(cat out.* | grep -c "^submitted race of" || true)
already=$(cat out.* | grep -c "^already submitted: job" || true)
[ "$races" -eq 1 ] || fail "$races submits made a race group, expected 1: $(cat out.* err.*)"
[ "$already" -eq 3 ] || fail "$already submits said 'already submitted', expected 3: $(cat out.* err.*)"
shapes=$(grep -c "$(printf '\x1f')race-" "$FAKE_SLURM/jobs" || true)
[ "$shapes" -eq 2 ] || fail "the queue has $shapes jobs of the race, expected its 2 shapes: $(cat "$FAKE_SLURM/jobs")"
dirs=("$DDPCTL_RUNS"/*/)
[ "${#dirs[@]}" -eq 1 ] || fail "${#dirs[@]} run folders, expected 1: $(ls "$DDPCTL_RUNS")"
echo ok
